/* jitprof--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION jitprof UPDATE TO '1.2'" to load this file. \quit

-- jitprof_sampler gains the step profile's counters.
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
    OUT plan_nodes_dropped bigint,
    OUT step_entries bigint,
    OUT max_steps integer,
    OUT steps_dropped bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_sampler_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_sampler AS
  SELECT * FROM jitprof_sampler();

GRANT SELECT ON jitprof_sampler TO PUBLIC;

-- The expression-step profile (jitprof.steps): each JIT function's samples
-- per ExprState step, per deformed attribute, and outside any step.
CREATE FUNCTION jitprof_steps(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT plan_node_id integer,
    OUT node_type text,
    OUT symbol text,
    OUT role text,
    OUT step integer,
    OUT attnum integer,
    OUT opcode text,
    OUT detail text,
    OUT self_samples bigint,
    OUT total_samples bigint,
    OUT function_total_samples bigint,
    OUT query_samples bigint,
    OUT pct_of_function double precision,
    OUT pct_of_query double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_steps_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_steps AS
  SELECT * FROM jitprof_steps();

GRANT SELECT ON jitprof_steps TO PUBLIC;
