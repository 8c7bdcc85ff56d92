-- Roles of plan shapes that PostgreSQL 17 added (doc/names.md, "Roles"):
-- MERGE ... WHEN NOT MATCHED BY SOURCE and JSON_TABLE.  The Makefile runs
-- this suite on 17 and later only; names.sql covers the rest, the same on
-- every version.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jitprof;
RESET client_min_messages;

-- The query ID as EXPLAIN (VERBOSE) reports it.
CREATE FUNCTION names17_qid(q text) RETURNS bigint LANGUAGE plpgsql AS $$
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

-- Run a query and list the names of its functions, the query ID masked.
CREATE FUNCTION names17_run(q text)
RETURNS TABLE (symbol text, role text)
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN QUERY SELECT DISTINCT regexp_replace(f.symbol, '^q-?[0-9]+', 'q<id>'), f.role
    FROM jitprof_functions f WHERE f.queryid = names17_qid(q) ORDER BY 1;
END $$;

-- MERGE with WHEN NOT MATCHED BY SOURCE: the join condition that tells a
-- matched target row from one no source row matches, beside the actions'
-- conditions and projections.
CREATE TABLE names17_k (k int PRIMARY KEY, v int);
INSERT INTO names17_k SELECT g, g FROM generate_series(1, 10) g;
SELECT * FROM names17_run($$MERGE INTO names17_k k
  USING (SELECT g FROM generate_series(5, 20) g) s ON k.k = s.g
  WHEN MATCHED THEN UPDATE SET v = k.v + 1
  WHEN NOT MATCHED BY SOURCE AND k.v < 3 THEN DELETE
  WHEN NOT MATCHED BY SOURCE THEN UPDATE SET v = 0
  WHEN NOT MATCHED THEN INSERT VALUES (s.g, 0)$$);

-- JSON_TABLE: its document, PASSING arguments and column expressions.
SELECT * FROM names17_run($$SELECT t.* FROM names17_k k,
  JSON_TABLE(jsonb_build_object('a', jsonb_build_array(jsonb_build_object('x', k.k, 'y', 'p'), '{}'::jsonb)),
    '$.a[*] ? (@.x > $m)' PASSING 3 AS m
    COLUMNS (n FOR ORDINALITY, x int PATH '$.x',
             y text PATH '$.y' DEFAULT 'none' ON EMPTY,
             e boolean EXISTS PATH '$.y')) t$$);

DROP FUNCTION names17_run(text);
DROP FUNCTION names17_qid(text);
DROP TABLE names17_k;
