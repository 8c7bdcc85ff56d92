/* jitprof--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION jitprof UPDATE TO '1.4'" to load this file. \quit

-- jitprof_queries gains tiered JIT's counts per query (doc/tiering.md).
DROP VIEW jitprof_queries;
DROP FUNCTION jitprof_queries();

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
    OUT code_bytes bigint,
    OUT tiered_executions bigint,
    OUT tiering_switches bigint,
    OUT tiering_functions bigint,
    OUT tiering_expressions_compiled bigint,
    OUT tiering_expressions_never_compiled bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_queries_1_4'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_queries AS
  SELECT * FROM jitprof_queries();

GRANT SELECT ON jitprof_queries TO PUBLIC;

-- jitprof_explain adds tiered JIT's rounds and compile time per plan node.
CREATE OR REPLACE FUNCTION jitprof_explain(queryid bigint)
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'jitprof_explain_1_4'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
