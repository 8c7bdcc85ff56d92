-- Names of JIT-compiled functions:
--   q<queryid>#<plan_node_id>_<NodeType>_<role>[_rel<oid>][_<n>][_deform_<kind>]
-- (doc/names.md)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jitprof;
RESET client_min_messages;

CREATE TABLE names_t AS
  SELECT g AS id, g % 7 AS grp, (g * 1.5)::numeric AS val
  FROM generate_series(1, 2000) g;
CREATE TABLE names_u AS
  SELECT g AS id, 'u' || g AS label FROM generate_series(1, 500) g;
ANALYZE names_t, names_u;

-- The query ID as EXPLAIN (VERBOSE) reports it.
CREATE FUNCTION names_qid(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (VERBOSE) ' || q LOOP
    IF line ~ 'Query Identifier: ' THEN
      RETURN substring(line FROM 'Query Identifier: (-?[0-9]+)')::bigint;
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

-- The functions linked for one query ID, with the ID itself masked.
CREATE FUNCTION names_of(qid bigint)
RETURNS TABLE (symbol text, plan_node_id int, node_type text, role text)
LANGUAGE sql AS $$
  SELECT DISTINCT regexp_replace(f.symbol, '^q-?[0-9]+', 'q<id>'),
         f.plan_node_id, f.node_type, f.role
  FROM jitprof_functions f WHERE f.queryid = qid
  ORDER BY 1
$$;

-- A scan with a qual, a hash join and a grouped aggregate.
SELECT t.grp, count(*), sum(t.val)
  FROM names_t t JOIN names_u u ON u.id = t.id
  WHERE t.id % 3 <> 0
  GROUP BY t.grp ORDER BY t.grp;
SELECT * FROM names_of(names_qid($$SELECT t.grp, count(*), sum(t.val)
  FROM names_t t JOIN names_u u ON u.id = t.id
  WHERE t.id % 3 <> 0
  GROUP BY t.grp ORDER BY t.grp$$));

-- Grammar: the q token is the query ID (as EXPLAIN VERBOSE and
-- pg_stat_statements show it), #<plan_node_id> matches the node, no
-- whitespace or dots, and the role is the last part.
SELECT sum(val) FROM names_t WHERE grp = 3;
SELECT count(*) > 0 AS has_functions,
       bool_and(symbol LIKE 'q' || queryid || '#' || plan_node_id || '\_' || node_type || '\_' || role || '%') AS grammar,
       bool_and(symbol ~ '^q-?[0-9]+#[0-9]+_[A-Za-z]+_[a-z_]+(_rel[0-9]+)?(_[0-9]+)?(_deform_(scan|outer|inner))?$') AS grammar_regex,
       bool_and(symbol !~ '[[:space:].]') AS no_space_or_dot
  FROM jitprof_functions
  WHERE queryid = names_qid('SELECT sum(val) FROM names_t WHERE grp = 3');

-- Stable across executions, unique within one: run a query twice; every
-- name appears once per execution.  (Constants do not change query IDs:
-- grp = 5 and grp = 3 would share one.)
SELECT max(val) FROM names_t WHERE grp = 5;
SELECT max(val) FROM names_t WHERE grp = 5;
SELECT count(*) AS functions, count(DISTINCT symbol) AS names,
       bool_and(n = 2) AS each_twice
  FROM (SELECT symbol, count(*) OVER (PARTITION BY symbol) AS n
        FROM jitprof_functions
        WHERE queryid = names_qid('SELECT max(val) FROM names_t WHERE grp = 5')) f;

-- A second function of the same node and role gets an ordinal suffix.
SELECT sum(g) FROM generate_series(1, 1000) g;
SELECT * FROM names_of(names_qid('SELECT sum(g) FROM generate_series(1, 1000) g'));

-- Window functions, sorting and a limit.
SELECT id, sum(val) OVER (PARTITION BY grp ORDER BY id) FROM names_t
  WHERE id < 5 ORDER BY id LIMIT 3;
SELECT * FROM names_of(names_qid($$SELECT id, sum(val) OVER (PARTITION BY grp ORDER BY id) FROM names_t
  WHERE id < 5 ORDER BY id LIMIT 3$$));

-- Without query IDs the names start with q0 and still carry node and role.
SET compute_query_id = off;
SELECT min(id) FROM names_t WHERE grp = 6;
SELECT DISTINCT regexp_replace(symbol, '^q0#', 'q0#') AS symbol, queryid
  FROM jitprof_functions
  WHERE queryid = 0 AND node_type IN ('Agg', 'SeqScan')
  ORDER BY 1;
RESET compute_query_id;


-- Run a query (through EXECUTE, so that one call shows one query's names)
-- and list the names of its functions.
CREATE FUNCTION names_run(q text)
RETURNS TABLE (symbol text, role text)
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN QUERY SELECT regexp_replace(n.symbol, '_rel[0-9]+', '_rel<oid>'), n.role
    FROM names_of(names_qid(q)) n ORDER BY 1;
END $$;

-- A hashed SubPlan: its left-hand projection, the comparisons used with
-- its two hash tables (NOT IN keeps rows with nulls in a second one) and,
-- on the subquery's node, its right-hand projection.
-- (The tables' comparisons run, and so are emitted, only when two rows
-- fall into one bucket: duplicates, and more than one row with a null.)
SELECT * FROM names_run($$SELECT count(*) FROM names_t
  WHERE id NOT IN (SELECT CASE WHEN id % 10 = 0 THEN NULL ELSE id % 50 END FROM names_u)$$);
-- Two hashed SubPlans in one qual are numbered by their place in it.
SELECT * FROM names_run($$SELECT count(*) FROM names_t
  WHERE id NOT IN (SELECT id % 100 FROM names_u) AND grp NOT IN (SELECT id % 3 FROM names_u)$$);
-- A correlated SubPlan: its argument (the outer value) and its combining
-- expression.  (PostgreSQL 17 plans this one as a hash join of names_t and
-- names_u, expected/names_1.out: its hash clauses, join qual, outer and
-- inner hash keys; under OR, below, it stays a SubPlan on every version.)
SELECT * FROM names_run($$SELECT count(*) FROM names_t t
  WHERE t.id = ANY (SELECT u.id FROM names_u u WHERE u.id < t.grp + 10)$$);
SELECT * FROM names_run($$SELECT count(*) FROM names_t t
  WHERE t.id = ANY (SELECT u.id FROM names_u u WHERE u.id < t.grp + 10)
     OR t.val < 0$$);

-- INSERT ... ON CONFLICT DO UPDATE ... WHERE ... RETURNING, and the
-- projection that forms the rows an UPDATE writes.
CREATE TABLE names_k (k int PRIMARY KEY, v int);
INSERT INTO names_k SELECT g, g FROM generate_series(1, 10) g;
SELECT * FROM names_run($$INSERT INTO names_k SELECT g, g FROM generate_series(5, 15) g
  ON CONFLICT (k) DO UPDATE SET v = names_k.v + excluded.v WHERE names_k.v < 8
  RETURNING k, v$$);
SELECT * FROM names_run($$UPDATE names_k SET v = v * 2 WHERE k < 3$$);

-- WITH CHECK OPTION.
CREATE VIEW names_kv AS SELECT * FROM names_k WHERE v > 0 WITH CHECK OPTION;
SELECT * FROM names_run($$INSERT INTO names_kv VALUES (100, 1), (101, 2)$$);

-- MERGE actions: their conditions and projections.
SELECT * FROM names_run($$MERGE INTO names_k k USING (SELECT g FROM generate_series(1, 30) g) s ON k.k = s.g
  WHEN MATCHED AND k.v > 100 THEN UPDATE SET v = k.v - 1
  WHEN NOT MATCHED AND s.g > 20 THEN INSERT VALUES (s.g, 0)$$);

-- Tuple routing: each partition a row reaches gets its own RETURNING,
-- numbered by the partition's OID, not by the order rows reached them.
CREATE TABLE names_p (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE names_p1 PARTITION OF names_p FOR VALUES FROM (0) TO (100);
CREATE TABLE names_p2 (v int, k int);
ALTER TABLE names_p ATTACH PARTITION names_p2 FOR VALUES FROM (100) TO (200);
SELECT * FROM names_run($$INSERT INTO names_p VALUES (150, 1), (50, 2) RETURNING k$$);
SELECT c.relname
  FROM jitprof_functions f
  JOIN pg_class c ON f.symbol ~ ('_rel' || c.oid || '($|_)')
  WHERE f.queryid = names_qid('INSERT INTO names_p VALUES (150, 1), (50, 2) RETURNING k')
  ORDER BY 1;

-- Partition pruning at executor startup (a stable value) and during
-- execution (an InitPlan's value).
SET names.k = '150';
SELECT * FROM names_run($$SELECT count(*) FROM names_p WHERE k = current_setting('names.k')::int$$);
SELECT * FROM names_run($$SELECT count(*) FROM names_p WHERE k = (SELECT max(id) FROM names_u)$$);
RESET names.k;

-- A gating qual, set-returning functions in the target list, a function
-- the planner folded, TABLESAMPLE and a TID scan.
SELECT * FROM names_run($$SELECT id FROM names_t WHERE now() IS NOT NULL AND id = 1$$);
SELECT * FROM names_run($$SELECT generate_series(1, id), id * 2 FROM names_t WHERE id < 4$$);
CREATE FUNCTION names_f(int) RETURNS int LANGUAGE sql STABLE AS 'SELECT $1 + 1';
SELECT * FROM names_run($$SELECT * FROM names_f(length(current_user))$$);
DROP FUNCTION names_f(int);
SELECT * FROM names_run($$SELECT count(*) FROM names_t TABLESAMPLE bernoulli (50) REPEATABLE (7)$$);
SELECT * FROM names_run($$SELECT id FROM names_t WHERE ctid = '(0,1)'$$);

-- XMLTABLE.
SELECT * FROM names_run($$SELECT * FROM XMLTABLE(XMLNAMESPACES('http://example.com/n' AS n),
  '/n:r/n:i' PASSING CAST('<r xmlns="http://example.com/n"><i a="1"/><i/></r>' AS xml)
  COLUMNS a int PATH '@a' DEFAULT 5)$$);

-- Window frame offsets and a run condition.
SELECT * FROM names_run($$SELECT id, sum(val) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING)
  FROM names_t WHERE id < 10$$);
SELECT * FROM names_run($$SELECT * FROM (SELECT id, row_number() OVER (ORDER BY id) rn FROM names_t) s
  WHERE rn <= 3$$);

-- Aggregates: an ordered-set aggregate's direct argument, DISTINCT over
-- two columns, and an array coercion's per-element expression.
SELECT * FROM names_run($$SELECT percentile_cont(0.25) WITHIN GROUP (ORDER BY val) FROM names_t$$);
SELECT * FROM names_run($$SELECT string_agg(DISTINCT label, ',') FROM names_u WHERE id < 5$$);
SELECT * FROM names_run($$SELECT count(*) FROM names_u
  WHERE (string_to_array(id || ',' || length(label), ',')::int[])[2] > 2$$);

-- Hash tables of a recursive UNION and of a hashed INTERSECT.
SELECT * FROM names_run($$WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 5)
  SELECT count(*) FROM r$$);
SET enable_sort = off;
SELECT * FROM names_run($$SELECT count(*) FROM (SELECT id FROM names_t INTERSECT SELECT id FROM names_u) s$$);
RESET enable_sort;

-- Merge join keys.
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT * FROM names_run($$SELECT count(*) FROM names_t t JOIN names_u u ON u.id = t.id + 1$$);
RESET enable_hashjoin;
RESET enable_nestloop;

-- Array keys the executor expands for an index without native array
-- support.
CREATE INDEX names_u_hash ON names_u USING hash (id);
SET enable_seqscan = off;
SET enable_indexscan = off;
SELECT * FROM names_run($$SELECT count(*) FROM names_u WHERE id = ANY (ARRAY[1, 2, 3])$$);
RESET enable_seqscan;
RESET enable_indexscan;

SET enable_sort = off;
-- A hash aggregate that spills: the transition code is compiled again for
-- spill mode and for reading spilled tuples back; each variant has its own
-- name, whatever order the data compiles them in.
SET work_mem = '64kB';
SELECT * FROM names_run($$SELECT count(*) FROM (SELECT g % 20000, count(*) FROM generate_series(1, 60000) g GROUP BY 1) s$$);
RESET work_mem;
RESET enable_sort;

-- Never JIT-compiled, so never named: VALUES lists (PostgreSQL compiles
-- them without JIT), and what the executor prepares without a plan node:
-- generated columns, CHECK constraints.  Only the plan's own expressions
-- (and the SubPlan's) appear.
CREATE TABLE names_g (a int CHECK (a > 0), b int GENERATED ALWAYS AS (a * 2) STORED);
SELECT * FROM names_run($$INSERT INTO names_g SELECT g FROM generate_series(1, 5) g$$);
SELECT * FROM names_run($$SELECT * FROM (VALUES (1, (SELECT max(id) FROM names_u)), (2, 3)) v(a, b)$$);
DROP TABLE names_g;

-- EXPLAIN (doc/names.md, "EXPLAIN"): the query of a top-level EXPLAIN
-- ANALYZE is charged to the EXPLAIN statement (one execution of it, as
-- pg_stat_statements counts it at top level), and its functions are named
-- with that statement's query ID, the one their rows carry, not with the
-- Query Identifier that EXPLAIN (VERBOSE) prints for the query.  Each case
-- runs in a new connection and keeps what jitprof_functions lists right
-- after it (its code alone: the table function is read before any code of
-- the CREATE TABLE AS runs); the plans go to /dev/null (they hold timings).
\c -
SET names.k = '150';
SELECT names_qid('SELECT sum(val) FILTER (WHERE grp > 2) FROM names_t WHERE id % 4 = 1') AS own_agg,
       names_qid($$SELECT count(*) FROM names_p WHERE k = current_setting('names.k')::int$$) AS own_prune
\gset
\c -
EXPLAIN (ANALYZE) SELECT sum(val) FILTER (WHERE grp > 2) FROM names_t WHERE id % 4 = 1 \g /dev/null
CREATE TEMP TABLE names_x AS SELECT queryid, symbol FROM jitprof_functions;
SELECT DISTINCT regexp_replace(symbol, '^q-?[0-9]+', 'q<id>') AS symbol FROM names_x ORDER BY 1;
SELECT count(DISTINCT queryid) AS query_ids,
       bool_and(queryid <> :own_agg) AS not_the_query_own_id,
       bool_and(symbol LIKE 'q' || queryid || '#%') AS named_with_it,
       bool_and(queryid IN (SELECT queryid FROM jitprof_queries WHERE executions = 1))
         AS one_execution_of_it,
       bool_and((queryid, symbol) IN (SELECT queryid, symbol FROM jitprof_hotspots))
         AS rows_carry_it
  FROM names_x;
DROP TABLE names_x;
-- Plain EXPLAIN counts no execution and has no rows.  The only code it runs
-- is initial partition pruning at executor start (PostgreSQL 15 and 17; 18
-- prunes without JIT), named as under EXPLAIN ANALYZE, and so is that of
-- EXPLAIN EXECUTE with a generic plan.
\c -
SET names.k = '150';
EXPLAIN SELECT count(*) FROM names_p WHERE k = current_setting('names.k')::int \g /dev/null
CREATE TEMP TABLE names_x AS SELECT queryid, symbol FROM jitprof_functions;
SELECT regexp_replace(symbol, '^q-?[0-9]+', 'q<id>') AS symbol,
       queryid <> :own_prune AS not_the_query_own_id,
       symbol LIKE 'q' || queryid || '#%' AS named_with_it,
       queryid NOT IN (SELECT queryid FROM jitprof_queries) AS no_rows
  FROM names_x ORDER BY 1;
DROP TABLE names_x;
\c -
SET names.k = '150';
PREPARE names_pp AS SELECT count(*) FROM names_p WHERE k = current_setting('names.k')::int;
SET plan_cache_mode = force_generic_plan;
EXPLAIN EXECUTE names_pp \g /dev/null
CREATE TEMP TABLE names_x AS SELECT queryid, symbol FROM jitprof_functions;
SELECT regexp_replace(symbol, '^q-?[0-9]+', 'q<id>') AS symbol,
       queryid <> :own_prune AS not_the_query_own_id,
       symbol LIKE 'q' || queryid || '#%' AS named_with_it,
       queryid NOT IN (SELECT queryid FROM jitprof_queries) AS no_rows
  FROM names_x ORDER BY 1;
DROP TABLE names_x;
DEALLOCATE names_pp;
RESET plan_cache_mode;
RESET names.k;

DROP FUNCTION names_run(text);
DROP VIEW names_kv;
DROP TABLE names_k, names_p;
DROP FUNCTION names_of(bigint);
DROP FUNCTION names_qid(text);
DROP TABLE names_t, names_u;
