-- Extension versions: 1.0, 1.1, 1.2 and 1.3 as they shipped, and the updates to 1.4.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS jitprof;
RESET client_min_messages;
CREATE EXTENSION jitprof VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'jitprof';

-- 1.0's jitprof_sampler has its 11 columns, through its own entry point.
SELECT count(*) AS columns FROM pg_attribute
  WHERE attrelid = 'jitprof_sampler'::regclass AND attnum > 0;
SELECT sample_rate, entries >= 0 AS ok FROM jitprof_sampler;
SELECT count(*) AS plan_node_objects FROM pg_proc
  WHERE proname IN ('jitprof_plan_nodes', 'jitprof_explain');

ALTER EXTENSION jitprof UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'jitprof';
SELECT count(*) AS columns FROM pg_attribute
  WHERE attrelid = 'jitprof_sampler'::regclass AND attnum > 0;
SELECT sample_rate, plan_node_entries >= 0 AS ok, max_plan_nodes,
       plan_nodes_dropped FROM jitprof_sampler;
SELECT count(*) AS plan_node_objects FROM pg_proc
  WHERE proname IN ('jitprof_plan_nodes', 'jitprof_explain');
SELECT count(*) AS plan_node_columns FROM pg_attribute
  WHERE attrelid = 'jitprof_plan_nodes'::regclass AND attnum > 0;
SELECT count(*) AS step_objects FROM pg_proc WHERE proname = 'jitprof_steps';

-- 1.2 adds jitprof_steps and three columns of jitprof_sampler.
ALTER EXTENSION jitprof UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'jitprof';
SELECT count(*) AS columns FROM pg_attribute
  WHERE attrelid = 'jitprof_sampler'::regclass AND attnum > 0;
SELECT step_entries >= 0 AS ok, max_steps, steps_dropped >= 0 AS ok
  FROM jitprof_sampler;
SELECT count(*) AS step_columns FROM pg_attribute
  WHERE attrelid = 'jitprof_steps'::regclass AND attnum > 0;
SELECT count(*) >= 0 AS readable FROM jitprof_steps;

-- 1.3 adds the JIT advisor's views.
ALTER EXTENSION jitprof UPDATE TO '1.3';
SELECT extversion FROM pg_extension WHERE extname = 'jitprof';
SELECT count(*) AS advisor_views FROM pg_class
  WHERE relname IN ('jitprof_jit_payoff', 'jitprof_jit_levels', 'jitprof_advisor');
SELECT mode, entries >= 0 AS ok FROM jitprof_advisor;
SELECT count(*) AS payoff_columns FROM pg_attribute
  WHERE attrelid = 'jitprof_jit_payoff'::regclass AND attnum > 0;
SELECT prosrc FROM pg_proc WHERE proname = 'jitprof_jit_advice' ORDER BY pronargs;
-- 1.3's jitprof_queries has 1.0's 10 columns, through 1.0's entry point.
SELECT count(*) AS columns FROM pg_attribute
  WHERE attrelid = 'jitprof_queries'::regclass AND attnum > 0;
SELECT count(*) >= 0 AS readable FROM jitprof_queries;
SELECT prosrc FROM pg_proc WHERE proname = 'jitprof_explain';

-- 1.4 adds tiered JIT's five columns to jitprof_queries, its lines to
-- jitprof_explain, three columns comparing the advisor's tiered level to
-- jitprof_jit_payoff, and a sixth CPU time (tiered's) to jitprof_jit_advice.
ALTER EXTENSION jitprof UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'jitprof';
SELECT count(*) AS columns FROM pg_attribute
  WHERE attrelid = 'jitprof_queries'::regclass AND attnum > 0;
SELECT count(*) >= 0 AS readable,
       coalesce(bool_and(tiered_executions <= executions), true) AS tiered_le_executions
  FROM jitprof_queries;
SELECT prosrc FROM pg_proc WHERE proname = 'jitprof_explain';
SELECT count(*) AS payoff_columns FROM pg_attribute
  WHERE attrelid = 'jitprof_jit_payoff'::regclass AND attnum > 0;
SELECT count(*) >= 0 AS readable FROM jitprof_jit_payoff;
SELECT prosrc FROM pg_proc WHERE proname = 'jitprof_jit_advice' ORDER BY pronargs;

-- The updated extension has the objects of a fresh CREATE EXTENSION, which
-- PostgreSQL installs as 1.0 followed by the update scripts.
CREATE TEMP TABLE updated AS
  SELECT pg_describe_object(classid, objid, objsubid) AS object
  FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jitprof');
DROP EXTENSION jitprof;
CREATE EXTENSION jitprof;
SELECT extversion FROM pg_extension WHERE extname = 'jitprof';
SELECT object FROM (
  SELECT pg_describe_object(classid, objid, objsubid) AS object
  FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jitprof')
  EXCEPT SELECT object FROM updated) d;
SELECT object FROM (SELECT object FROM updated EXCEPT
  SELECT pg_describe_object(classid, objid, objsubid)
  FROM pg_depend WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jitprof')) d;
