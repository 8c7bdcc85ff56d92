-- jitprof_functions: what this backend linked, under which names.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jitprof;
RESET client_min_messages;

CREATE TABLE fn_t AS
  SELECT g AS id, g % 10 AS grp, md5(g::text) AS txt
  FROM generate_series(1, 2000) g;

-- A query with a scan qual, an aggregate and a projection.
SELECT grp, count(*), max(txt) FROM fn_t WHERE id > 100 GROUP BY grp ORDER BY grp LIMIT 3;

-- The previous query's functions, with its query ID, plan nodes and roles.
-- (This query's own code is live; the previous one's was freed when it
-- ended, and code addresses only grow.)
CREATE VIEW previous_query_functions AS
  SELECT * FROM jitprof_functions
  WHERE queryid = (SELECT queryid FROM jitprof_functions WHERE NOT live
                   ORDER BY address::text COLLATE "C" DESC LIMIT 1);
SELECT node_type, role, plan_node_id, live
  FROM previous_query_functions ORDER BY plan_node_id, role;

-- Symbols follow the grammar q<queryid>#<plan_node_id>_<NodeType>_<role>[_<n>].
SELECT count(*) AS violations FROM jitprof_functions
  WHERE symbol !~ '^q-?[0-9]+#[0-9]+_[A-Za-z]+_[a-z_]+(_[0-9]+)?$'
    AND role <> 'helper';
SELECT count(*) AS with_space_or_dot FROM jitprof_functions WHERE symbol ~ '[\s.]';
SELECT bool_and(symbol LIKE 'q' || queryid || '#' || plan_node_id || '\_' || node_type || '\_' || role || '%')
  AS symbol_matches_columns
  FROM jitprof_functions WHERE role <> 'helper';

-- llvmjit's own names are kept alongside.
SELECT count(*) AS bad_llvm_names FROM jitprof_functions
  WHERE llvm_name !~ '^(evalexpr|deform)_[0-9]+_[0-9]+$' AND role <> 'helper';

-- Addresses are hexadecimal and sizes positive.
SELECT bool_and(address ~ '^0x[0-9a-f]+$') AS hex, bool_and(size > 0) AS sized
  FROM jitprof_functions;

-- Nothing of a finished query stays live: only this query's code is.
SELECT count(DISTINCT queryid) AS live_queries FROM jitprof_functions WHERE live;

-- Deform functions are separate when LLVM does not optimize (no inlining).
SET jit_optimize_above_cost = -1;
SET jit_inline_above_cost = -1;
SELECT count(*) FROM fn_t WHERE grp = 3 AND txt > 'a';
SELECT role, node_type FROM previous_query_functions ORDER BY plan_node_id, role;
RESET jit_optimize_above_cost;
RESET jit_inline_above_cost;

-- EXPLAIN without ANALYZE compiles but never links: nothing new appears.
SELECT value AS before FROM jitprof_status WHERE name = 'objects_linked' \gset
EXPLAIN (COSTS OFF) SELECT count(*) FROM fn_t WHERE id < 10;
SELECT value::bigint - :before AS linked_by_explain_and_this_query
  FROM jitprof_status WHERE name = 'objects_linked';

DROP VIEW previous_query_functions;
DROP TABLE fn_t;

-- Code addresses are shown only to superusers and pg_read_all_stats.
CREATE ROLE regress_fn_reader;
SET ROLE regress_fn_reader;
SELECT count(*) > 0 AS has_rows, count(address) AS addresses_shown
  FROM jitprof_functions;
RESET ROLE;
GRANT pg_read_all_stats TO regress_fn_reader;
SET ROLE regress_fn_reader;
SELECT count(*) > 0 AS has_rows, count(*) = count(address) AS all_addresses_shown
  FROM jitprof_functions;
RESET ROLE;
DROP ROLE regress_fn_reader;
