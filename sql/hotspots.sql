-- The hotspot store and its views: contents, privacy, reset, GUCs.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jitprof;
RESET client_min_messages;
SELECT jitprof_reset();
-- GUCs and their validation.
SHOW jitprof.sample_rate;
SHOW jitprof.max_hotspots;
SHOW jitprof.save;
SET jitprof.sample_rate = -1;
SET jitprof.sample_rate = 10001;
SET jitprof.sample_rate = 'often';
SET jitprof.max_hotspots = 100;
-- flush_interval is in seconds, with sub-second values kept (not rounded
-- to 0, which means "only when the query ends"); a bare number is seconds.
SHOW jitprof.flush_interval;
SET jitprof.flush_interval = '100ms';
SHOW jitprof.flush_interval;
SET jitprof.flush_interval = 0.25;
SHOW jitprof.flush_interval;
SET jitprof.flush_interval = 30;
SHOW jitprof.flush_interval;
SET jitprof.flush_interval = 0;
SHOW jitprof.flush_interval;
SET jitprof.flush_interval = '-1ms';
SET jitprof.flush_interval = '2h';
SET jitprof.flush_interval = 'often';
RESET jitprof.flush_interval;
SET jitprof.sample_rate = 1000;

-- Shared memory: each table is one named allocation, sized from its cap and
-- the build's entry size (jitprof_status), between cap x (entry + 8 bytes
-- of bucket) and 128 spare entries, 17 bytes per entry and 4 kB more; the
-- named allocations are all the store requested (the JIT advisor's,
-- "jitprof advisor", are its own: test/t/080_jit_advisor.pl).
SELECT v.name, a.size >= v.cap * (s.value::bigint + 8) AS holds_cap,
       a.size <= (v.cap + 128) * (s.value::bigint + 17) + 4096 AS no_more
  FROM (VALUES
          ('jitprof hotspots', current_setting('jitprof.max_hotspots')::bigint,
           'store_hotspot_entry_bytes'),
          ('jitprof plan nodes', current_setting('jitprof.max_plan_nodes')::bigint,
           'store_plan_node_entry_bytes'),
          ('jitprof steps', current_setting('jitprof.max_steps')::bigint,
           'store_step_entry_bytes')) AS v(name, cap, stat)
  JOIN jitprof_status s ON s.name = v.stat
  LEFT JOIN pg_shmem_allocations a ON a.name = v.name
  ORDER BY 1;
SELECT count(*) AS named,
       sum(allocated_size) = (SELECT value::bigint FROM jitprof_status
                              WHERE name = 'store_shmem_bytes') AS all_requested
  FROM pg_shmem_allocations
  WHERE name LIKE 'jitprof %' AND name NOT LIKE 'jitprof advisor%';

CREATE TABLE hs_t AS
  SELECT g AS id, (g % 97)::float8 AS x FROM generate_series(1, 20000) g;
SELECT count(*) FROM hs_t WHERE x * x + 3 * x > 100;
SELECT count(*) FROM hs_t WHERE x * x + 3 * x > 100;

-- The query's qual was compiled twice, under one stable name.
SELECT node_type, plan_node_id, role, compilations,
       code_bytes > 0 AS has_code,
       symbol = 'q' || queryid || '#' || plan_node_id || '_SeqScan_qual' AS named,
       self_samples <= total_samples AND total_samples <= query_samples AS consistent,
       self_pct BETWEEN 0 AND 100 AND total_pct BETWEEN 0 AND 100 AS pct_ok,
       first_seen <= last_seen AS seen_ok
  FROM jitprof_hotspots
  WHERE node_type = 'SeqScan' AND role = 'qual';

-- One row per query, summing its functions.
SELECT q.executions, q.functions >= 2 AS functions,
       q.code_bytes >= (SELECT sum(code_bytes) FROM jitprof_hotspots h
                        WHERE h.queryid = q.queryid AND node_type = 'SeqScan') AS code_bytes,
       q.jit_self_samples <= q.jit_total_samples AS self_le_total,
       q.jit_pct BETWEEN 0 AND 100 AS pct_ok
  FROM jitprof_queries q
  WHERE q.queryid = (SELECT queryid FROM jitprof_hotspots
                     WHERE node_type = 'SeqScan' AND role = 'qual');

-- The sampler's health.
SELECT sample_rate, samples_taken >= jit_total_samples AS taken_ok,
       jit_total_samples >= jit_self_samples AS total_ok,
       samples_dropped >= 0 AS dropped_ok, flushes > 0 AS flushed,
       evictions, entries > 0 AS has_entries, max_hotspots
  FROM jitprof_sampler;

-- Folded stacks for flame graphs: every line is "frames count", the
-- frames a JIT function under its role, or (with plan-node data) the
-- plan's nodes down to the running one and its function.
SELECT count(*) > 0 AS has_lines,
       bool_and(line ~ '^q-?[0-9]+;(([A-Za-z]+#-?[0-9]+;)*[A-Za-z]+#-?[0-9]+(;[a-z_0-9]+(;\[called from JIT\])?)?|\[outside JIT\]|\[outside any node\]) [0-9]+$') AS well_formed
  FROM jitprof_folded() AS line;

-- Privacy: other users' rows hide the query ID and the symbol.
SELECT queryid AS su_queryid FROM jitprof_hotspots
  WHERE node_type = 'SeqScan' AND role = 'qual' \gset
CREATE ROLE hs_alice;
CREATE ROLE hs_bob;
GRANT SELECT ON hs_t TO hs_alice;
SET ROLE hs_alice;
SELECT count(*) FROM hs_t WHERE id % 5 = 1;
SELECT count(*) > 0 AS rows, bool_and(queryid IS NOT NULL AND symbol IS NOT NULL) AS visible
  FROM jitprof_hotspots WHERE userid = 'hs_alice'::regrole;
SET ROLE hs_bob;
SELECT count(*) > 0 AS rows, bool_and(queryid IS NULL AND symbol IS NULL) AS hidden
  FROM jitprof_hotspots WHERE userid = 'hs_alice'::regrole;
SELECT count(*) > 0 AS rows, bool_and(queryid IS NULL) AS hidden
  FROM jitprof_queries WHERE userid = 'hs_alice'::regrole;
SELECT count(*) AS superuser_lines_seen FROM jitprof_folded() AS line
  WHERE line LIKE 'q' || :'su_queryid' || ';%';
-- Only a superuser may reset or change the sample rate.
SELECT jitprof_reset();
SET jitprof.sample_rate = 10;
RESET ROLE;
GRANT pg_read_all_stats TO hs_bob;
SET ROLE hs_bob;
SELECT count(*) > 0 AS rows, bool_and(queryid IS NOT NULL AND symbol IS NOT NULL) AS visible
  FROM jitprof_hotspots WHERE userid = 'hs_alice'::regrole;
SELECT count(*) > 0 AS superuser_lines_seen FROM jitprof_folded() AS line
  WHERE line LIKE 'q' || :'su_queryid' || ';%';
RESET ROLE;

-- Reset empties the store.
SELECT jitprof_reset();
SELECT count(*) AS scans_left FROM jitprof_hotspots WHERE node_type = 'SeqScan';
SELECT evictions, entries < 10 AS almost_empty FROM jitprof_sampler;

DROP TABLE hs_t;
REVOKE pg_read_all_stats FROM hs_bob;
DROP ROLE hs_alice;
DROP ROLE hs_bob;
