-- Names of JIT-compiled functions: q<queryid>#<plan_node_id>_<NodeType>_<role>[_<n>]
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
       bool_and(symbol ~ '^q-?[0-9]+#[0-9]+_[A-Za-z]+_[a-z_]+(_[0-9]+)?$') AS grammar_regex,
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

DROP FUNCTION names_of(bigint);
DROP FUNCTION names_qid(text);
DROP TABLE names_t, names_u;
