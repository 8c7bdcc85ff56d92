/* jitprof--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION jitprof UPDATE TO '1.1'" to load this file. \quit

-- jitprof_sampler gains the health counters of the per-execution sampler
-- and of the plan-node profile.
DROP VIEW jitprof_sampler;
DROP FUNCTION jitprof_sampler();

CREATE FUNCTION jitprof_sampler(
    OUT sample_rate integer,
    OUT samples_taken bigint,
    OUT jit_self_samples bigint,
    OUT jit_total_samples bigint,
    OUT samples_dropped bigint,
    OUT functions_untracked bigint,
    OUT flushes bigint,
    OUT evictions bigint,
    OUT entries bigint,
    OUT max_hotspots integer,
    OUT stats_reset timestamp with time zone,
    OUT samples_other_execution bigint,
    OUT samples_in_flush bigint,
    OUT executions_untracked bigint,
    OUT trampoline_fallbacks bigint,
    OUT plan_node_entries bigint,
    OUT max_plan_nodes integer,
    OUT plan_nodes_dropped bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_sampler_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_sampler AS
  SELECT * FROM jitprof_sampler();

GRANT SELECT ON jitprof_sampler TO PUBLIC;

-- Folded stacks now start with the plan path of each JIT function.
CREATE OR REPLACE FUNCTION jitprof_folded()
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'jitprof_folded_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- The plan-node profile: samples per plan node of each query.
CREATE FUNCTION jitprof_plan_nodes(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT plan_node_id integer,
    OUT parent_node_id integer,
    OUT node_type text,
    OUT label text,
    OUT self_samples bigint,
    OUT total_samples bigint,
    OUT jit_self_samples bigint,
    OUT jit_compile_samples bigint,
    OUT query_samples bigint,
    OUT self_pct double precision,
    OUT total_pct double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_plan_nodes_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_plan_nodes AS
  SELECT * FROM jitprof_plan_nodes();

GRANT SELECT ON jitprof_plan_nodes TO PUBLIC;

-- One query's plan as EXPLAIN lays it out, with each node's share of the
-- query's CPU samples.
CREATE FUNCTION jitprof_explain(queryid bigint)
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'jitprof_explain_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
