/* jitprof--1.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION jitprof" to load this file. \quit

-- Facts about the calling backend's JIT linking, one per row.
CREATE FUNCTION jitprof_status(
    OUT name text,
    OUT value text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_status_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW jitprof_status AS
  SELECT * FROM jitprof_status();

-- The functions the calling backend linked most recently, live and freed.
CREATE FUNCTION jitprof_functions(
    OUT symbol text,
    OUT llvm_name text,
    OUT queryid bigint,
    OUT plan_node_id integer,
    OUT node_type text,
    OUT role text,
    OUT address text,
    OUT size bigint,
    OUT live boolean
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_functions_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW jitprof_functions AS
  SELECT * FROM jitprof_functions();

GRANT SELECT ON jitprof_status TO PUBLIC;
GRANT SELECT ON jitprof_functions TO PUBLIC;

-- Hotspots: samples per JIT function and per query, from the shared store
-- (needs jitprof in shared_preload_libraries).
CREATE FUNCTION jitprof_hotspots(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT plan_node_id integer,
    OUT node_type text,
    OUT role text,
    OUT symbol text,
    OUT self_samples bigint,
    OUT total_samples bigint,
    OUT query_samples bigint,
    OUT self_pct double precision,
    OUT total_pct double precision,
    OUT compilations bigint,
    OUT code_bytes bigint,
    OUT first_seen timestamp with time zone,
    OUT last_seen timestamp with time zone
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_hotspots_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_hotspots AS
  SELECT * FROM jitprof_hotspots();

CREATE FUNCTION jitprof_queries(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT executions bigint,
    OUT query_samples bigint,
    OUT jit_self_samples bigint,
    OUT jit_total_samples bigint,
    OUT jit_pct double precision,
    OUT functions bigint,
    OUT code_bytes bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_queries_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_queries AS
  SELECT * FROM jitprof_queries();

-- The sampler's own health, summed over all backends since the last reset.
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

-- The profile as folded stacks ("q<queryid>;<plan path>;<role> <samples>"),
-- ready for flamegraph.pl.
CREATE FUNCTION jitprof_folded()
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'jitprof_folded_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE FUNCTION jitprof_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'jitprof_reset_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

GRANT SELECT ON jitprof_hotspots TO PUBLIC;
GRANT SELECT ON jitprof_queries TO PUBLIC;
GRANT SELECT ON jitprof_sampler TO PUBLIC;
REVOKE ALL ON FUNCTION jitprof_reset() FROM PUBLIC;

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
