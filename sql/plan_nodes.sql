-- The plan-node profile: jitprof_plan_nodes, jitprof_explain, folded paths.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jitprof;
RESET client_min_messages;
SELECT jitprof_reset();

SHOW jitprof.plan_nodes;
SHOW jitprof.max_plan_nodes;
SET jitprof.plan_nodes = on;
SET jitprof.sample_rate = 1000;

CREATE TABLE pn_big AS
  SELECT g AS id, (g % 1000)::float8 AS x, md5(g::text) AS s
  FROM generate_series(1, 200000) g;
CREATE TABLE pn_small AS SELECT g AS k FROM generate_series(1, 1000) g;
ANALYZE pn_big, pn_small;
SET enable_hashagg = off;

-- A sort over a scan, and a hash join, each run until sampled.
SELECT count(*) FROM (SELECT s FROM pn_big ORDER BY s) o;
SELECT count(*) FROM (SELECT s FROM pn_big ORDER BY s) o;
SELECT count(*) FROM pn_big b JOIN pn_small s ON s.k = b.x::int;
SELECT count(*) FROM pn_big b JOIN pn_small s ON s.k = b.x::int;

-- A node learns its call sites on the general wrapper; then most run
-- unwrapped, told by their sites, and the others through their entries.
SELECT value::bigint > 0 AS by_site FROM jitprof_status
  WHERE name = 'plan_node_by_site';
SELECT value::bigint > 0 AS wrappers FROM jitprof_status
  WHERE name = 'plan_node_wrappers';

-- Shapes: node types, labels and parents as EXPLAIN shows them.
SELECT plan_node_id, parent_node_id, node_type, label
  FROM jitprof_plan_nodes p
  WHERE queryid = (SELECT queryid FROM jitprof_plan_nodes
                   WHERE label = 'Seq Scan on pn_big' INTERSECT
                   SELECT queryid FROM jitprof_plan_nodes WHERE label = 'Sort')
  ORDER BY plan_node_id;
SELECT plan_node_id, parent_node_id, node_type, label
  FROM jitprof_plan_nodes p
  WHERE queryid = (SELECT queryid FROM jitprof_plan_nodes
                   WHERE node_type = 'HashJoin' LIMIT 1)
  ORDER BY plan_node_id;

-- The invariants: self <= total <= query_samples, shares in 0..100, and
-- per query the nodes' self plus the outside row is query_samples.
SELECT bool_and(self_samples <= total_samples) AS self_le_total,
       bool_and(total_samples <= query_samples) AS total_le_query,
       bool_and(jit_self_samples <= self_samples) AS jit_le_self,
       bool_and(jit_compile_samples <= self_samples) AS compile_le_self,
       bool_and(self_pct BETWEEN 0 AND 100 AND total_pct BETWEEN 0 AND 100) AS pct_ok
  FROM jitprof_plan_nodes;
SELECT bool_and(s = q) AS adds_up, count(*) >= 2 AS queries
  FROM (SELECT queryid, sum(self_samples) AS s, max(query_samples) AS q
        FROM jitprof_plan_nodes GROUP BY queryid) t;
SELECT bool_and(p.query_samples = q.query_samples) AS same_query_samples
  FROM jitprof_plan_nodes p JOIN jitprof_queries q USING (userid, dbid, queryid);
-- a root's total is every node's self
SELECT bool_and(r.total_samples = n.s) AS root_total
  FROM jitprof_plan_nodes r
  JOIN (SELECT queryid, sum(self_samples) AS s FROM jitprof_plan_nodes
        WHERE plan_node_id >= 0 GROUP BY queryid) n USING (queryid)
  WHERE r.plan_node_id = 0;

-- jitprof_explain: EXPLAIN's layout, one annotated line per node, under
-- the query's own ID.
-- The ID is masked whole, sign included: it hashes pn_big's OID, which shifts with every object created before it.
WITH q AS (SELECT queryid FROM jitprof_plan_nodes
           WHERE label = 'Seq Scan on pn_big' INTERSECT
           SELECT queryid FROM jitprof_plan_nodes WHERE label = 'Sort')
SELECT regexp_replace(replace(line, 'query ' || q.queryid || ':', 'query <id>:'),
                      '[0-9]+(\.[0-9])?', 'N', 'g') AS line
  FROM q, jitprof_explain(q.queryid) AS line;
-- A query ID jitprof does not know gets a line saying so.
SELECT * FROM jitprof_explain(12345);

-- Folded stacks carry the plan path.
SELECT count(*) > 0 AS has_paths FROM jitprof_folded() f
  WHERE f ~ '^q-?[0-9]+;Agg#0;Sort#2(;SeqScan#3(;[a-z_0-9]+)?)? [0-9]+$';
SELECT bool_and(f ~ '^q-?[0-9]+;.+ [0-9]+$') AS well_formed FROM jitprof_folded() f;

-- Off: no new rows.
SET jitprof.plan_nodes = off;
SELECT jitprof_reset();
SELECT count(*) FROM (SELECT s FROM pn_big ORDER BY s) o;
SELECT count(*) AS rows_when_off FROM jitprof_plan_nodes;

-- jitprof_explain of a query without plan-node data: one line that says
-- so, and a NOTICE naming the setting.  The sort has by far the most
-- samples since the reset (some 200 at 1000 Hz, the others a few).
CREATE TEMP TABLE pn_q AS
  SELECT queryid FROM jitprof_queries ORDER BY query_samples DESC LIMIT 1;
SELECT regexp_replace(replace(line, 'query ' || q.queryid || ':', 'query <id>:'),
                      '[0-9]+(\.[0-9])?', 'N', 'g') AS line
  FROM pn_q q, jitprof_explain(q.queryid) AS line;

-- Mixed: one more execution with plan-node data.  The report counts only
-- it, and says how many executions had none, so that "outside any node" is
-- not inflated by the execution that ran with the setting off.
SET jitprof.plan_nodes = on;
SELECT count(*) FROM (SELECT s FROM pn_big ORDER BY s) o;
SELECT regexp_replace(replace(line, 'query ' || q.queryid || ':', 'query <id>:'),
                      '[0-9]+(\.[0-9])?', 'N', 'g') AS line
  FROM pn_q q, jitprof_explain(q.queryid) AS line;
SELECT p.query_samples > 0 AS some_node_samples,
       p.query_samples < j.query_samples AS fewer_than_all,
       p.self_sum = p.query_samples AS adds_up,
       j.executions = 2 AS two_executions
  FROM (SELECT max(query_samples) AS query_samples,
               sum(self_samples) AS self_sum
        FROM jitprof_plan_nodes WHERE queryid = (SELECT queryid FROM pn_q)) p,
       jitprof_queries j
  WHERE j.queryid = (SELECT queryid FROM pn_q);
-- the header counts the same samples as jitprof_plan_nodes
SELECT (regexp_match(line, ': ([0-9]+) samples in 1 executions$'))[1]::bigint =
       (SELECT max(query_samples) FROM jitprof_plan_nodes
        WHERE queryid = q.queryid) AS header_matches
  FROM pn_q q, jitprof_explain(q.queryid) AS line
  WHERE line LIKE 'query %';
SELECT bool_and(self_samples <= total_samples) AS self_le_total,
       bool_and(total_samples <= query_samples) AS total_le_query,
       bool_and(self_pct BETWEEN 0 AND 100 AND total_pct BETWEEN 0 AND 100) AS pct_ok
  FROM jitprof_plan_nodes;
SELECT bool_and(rtrim(regexp_replace(line, '^.*outside any node: ', ''), '%')::float8
                BETWEEN 0 AND 100) AS outside_ok
  FROM pn_q q, jitprof_explain(q.queryid) AS line
  WHERE line LIKE 'outside any node:%';
SET jitprof.plan_nodes = off;

-- Only a superuser may turn it on.
CREATE ROLE pn_user;
SET ROLE pn_user;
SET jitprof.plan_nodes = on;
RESET ROLE;
DROP ROLE pn_user;
DROP TABLE pn_big, pn_small;
