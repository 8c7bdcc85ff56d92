/* jitprof--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION jitprof UPDATE TO '1.3'" to load this file. \quit

-- The JIT advisor (doc/jit_advisor.md): does JIT pay, per query?
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
    OUT assumption text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_jit_payoff_1_3'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_jit_payoff AS
  SELECT * FROM jitprof_jit_payoff();

GRANT SELECT ON jitprof_jit_payoff TO PUBLIC;

CREATE FUNCTION jitprof_jit_levels(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT level text,
    OUT pg_choice boolean,
    OUT executions bigint,
    OUT mean_cpu_ms double precision,
    OUT stddev_cpu_ms double precision,
    OUT mean_wall_ms double precision,
    OUT generation_ms double precision,
    OUT inlining_ms double precision,
    OUT optimization_ms double precision,
    OUT emission_ms double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_jit_levels_1_3'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_jit_levels AS
  SELECT * FROM jitprof_jit_levels();

GRANT SELECT ON jitprof_jit_levels TO PUBLIC;

CREATE FUNCTION jitprof_advisor(
    OUT mode text,
    OUT entries bigint,
    OUT max_queries bigint,
    OUT dropped bigint,
    OUT executions bigint,
    OUT explored bigint,
    OUT enforced bigint,
    OUT cpu_ms double precision,
    OUT explore_cpu_ms double precision,
    OUT explore_loss_ms double precision,
    OUT explore_loss_pct double precision,
    OUT entry_bytes bigint,
    OUT shmem_bytes bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_advisor_1_3'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW jitprof_advisor AS
  SELECT * FROM jitprof_advisor();

GRANT SELECT ON jitprof_advisor TO PUBLIC;

-- The threshold optimiser: the JIT settings that minimise the measured CPU
-- time of the advisor's queries, or of a workload given as arrays (for
-- trying other workloads: one plan cost and one number of calls per query,
-- and cpu_ms as one row of five per query: off, jit, jit+opt, jit+inline,
-- all, NULL where not measured).
CREATE FUNCTION jitprof_jit_advice(
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
AS 'MODULE_PATHNAME', 'jitprof_jit_advice_1_3'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE FUNCTION jitprof_jit_advice(
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
AS 'MODULE_PATHNAME', 'jitprof_jit_advice_of_1_3'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
