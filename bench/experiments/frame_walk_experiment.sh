#!/bin/bash
# An experiment, not a benchmark (doc/plan_nodes.md, "Cost"): with
# frame-walk.patch applied to af5627f, each plan node's entry also stores
# its call's return address and plan_node_id in a slot indexed by its
# frame's address (CFA), and the signal handler walks the interrupted
# frame-pointer chain to the innermost frame whose slot holds that frame's
# return address, and logs how often that node agrees with the wrapper's
# running node.  Runs nine queries three times each with
# jitprof.plan_nodes on at 1 kHz (tiering at its default), and prints each
# query's plan and the log's lines: the counts, the first 16 samples where
# the walk found no node (their PC and the first frame's return address,
# resolved with dladdr where a dynamic symbol covers them), and confusion
# rows (the wrapper's node -> how many samples the walk gave nodes 0 to 7,
# then none of them).
#
#   git apply bench/experiments/frame-walk.patch
#   JITPROF_PGTREE=... JITPROF_PORT=... bench/experiments/frame_walk_experiment.sh [ROWS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. tools/common.sh
build_and_install >/dev/null
start_bench_cluster shadow "
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
compute_query_id = on
max_parallel_workers_per_gather = 0
work_mem = '256MB'
jitprof.flush_interval = 0"
rows=${1:-300000}
psql_q -c "CREATE EXTENSION jitprof" \
 -c "CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, $rows) g" \
 -c "CREATE TABLE s AS SELECT g AS x FROM generate_series(1, 1000) g" \
 -c "CREATE TABLE n1 AS SELECT g AS x FROM generate_series(1, 1000) g" \
 -c "CREATE TABLE n2 AS SELECT g AS y FROM generate_series(1, $((rows / 1000))) g" \
 -c "VACUUM ANALYZE t, s, n1, n2"
q=(
"SET enable_hashjoin=off; SET enable_mergejoin=off; SELECT count(*) FROM n1, n2 WHERE n1.x + n2.y <> 7"
"SELECT sum(a) FROM (SELECT a FROM t ORDER BY b, a) o"
"SELECT count(*) FROM t, s WHERE s.x = t.b AND t.a % 3 = 0"
"SELECT b, count(*), sum(a) FROM t GROUP BY b"
"SELECT count(*) FROM t WHERE a % 7 <> 3"
"SELECT count(*) FROM t WHERE b IN (SELECT x FROM s WHERE x % 5 = 0) AND a % 3 = 0"
"SELECT count(*) FROM (SELECT b, max(a) FROM t GROUP BY b HAVING max(a) > 5) x, s WHERE s.x = x.b"
"SELECT count(*) FROM t t1 JOIN t t2 ON t1.a = t2.a WHERE t1.b % 3 = 0"
"SELECT count(*) FROM s WHERE s.x <= 10 AND s.x > (SELECT count(*) FROM t WHERE t.b = s.x % 10)"
)
S="SET jitprof.plan_nodes = on; SET jitprof.sample_rate = 1000; SET jit_above_cost = 0; SET jit_optimize_above_cost=0; SET jit_inline_above_cost = 0;"
for i in "${!q[@]}"; do
  n=$(wc -l < "$work/log")
  pre=""; [ $i = 0 ] && pre="SET enable_hashjoin=off; SET enable_mergejoin=off;"
  body="${q[$i]#SET enable_hashjoin=off; SET enable_mergejoin=off; }"
  echo "query $i: $body"
  psql_q -c "$S $pre" -c "EXPLAIN (COSTS OFF) $body" | grep -v "^ *\(Filter\|Join Filter\|Hash Cond\|Sort Key\|Group Key\)" | sed 's/^/    /'
  psql_q -c "$S $pre" -c "$body" -c "$body" -c "$body" >/dev/null
  tail -n +$((n+1)) "$work/log" | grep "jitprof fpw" | sed "s/.*jitprof fpw/  /"
done
