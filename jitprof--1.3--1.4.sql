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

-- jitprof_jit_payoff compares tiered JIT, a level of its own in the JIT
-- advisor, with off and the eager levels (doc/jit_advisor.md).
DROP VIEW jitprof_jit_payoff;
DROP FUNCTION jitprof_jit_payoff();

CREATE FUNCTION jitprof_jit_payoff(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT plan_cost double precision,
    OUT pg_level text,
    OUT executions bigint,
    OUT explored bigint,
    OUT best_level text,
    OUT saving_ms double precision,
    OUT saving_low_ms double precision,
    OUT saving_high_ms double precision,
    OUT verdict text,
    OUT enforced_level text,
    OUT jit_gain_ms double precision,
    OUT explore_loss_ms double precision,
    OUT bound_ms double precision,
    OUT assumption text,
    OUT tiered_vs_off_ms double precision,
    OUT tiered_vs_eager_ms double precision,
    OUT tiered_verdict text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_jit_payoff_1_4'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_jit_payoff AS
  SELECT * FROM jitprof_jit_payoff();

GRANT SELECT ON jitprof_jit_payoff TO PUBLIC;

-- jitprof_jit_advice(plan_cost, calls, cpu_ms) takes a sixth CPU time per
-- query, tiered's.
CREATE OR REPLACE FUNCTION jitprof_jit_advice(
    plan_cost double precision[],
    calls double precision[],
    cpu_ms double precision[],
    OUT jit boolean,
    OUT jit_above_cost double precision,
    OUT jit_optimize_above_cost double precision,
    OUT jit_inline_above_cost double precision,
    OUT current_cpu_ms double precision,
    OUT advised_cpu_ms double precision,
    OUT saving_ms double precision,
    OUT queries integer,
    OUT assumed integer,
    OUT unserved bigint[]
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_jit_advice_of_1_4'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
