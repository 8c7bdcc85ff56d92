#!/bin/bash
# An experiment, not a benchmark (doc/plan_nodes.md, "Cost"): with one of
# two patches applied, the sampler's handler also names each sample's plan
# node another way, and logs how often that agrees with the wrapper's
# running node.  Runs the queries below three times each with
# jitprof.plan_nodes on at 1 kHz, JIT forced, tiering at its default, and
# prints each query's plan and the patch's log lines, whose tag is the
# first argument:
#
#   shadow  stack-scan.patch on ad26696: the deepest word of the interrupted
#           stack (or callee-saved register) that is one of the plan's
#           PlanState pointers; the first seven queries
#   fpw     frame-walk.patch on af5627f: each entry also stores its call's
#           return address and plan_node_id at a slot chosen by its frame's
#           address, and the handler walks the interrupted frame pointers
#           to the first frame whose slot holds its return address; all
#           nine queries, and the first 16 samples where it found no node
#   check   frame-walk-check.patch on 66e10f9, the walk as the profile has
#           it (2026-12-07): the entries and the wrapper also keep
#           the running node as before, in two stores per call, and the
#           handler compares the walk's node (with its scan above the stack
#           pointer when the chain breaks) with it; all nine queries and
#           three more in code without frame pointers (an ICU collation,
#           md5 through OpenSSL, in a sort and a hash build)
#           The same tag with call-sites-check.patch on a4c1f3f (which
#           landed the call sites, first a patch on 4b4d167): nodes told
#           by their call sites run through an entry that keeps the
#           running node and stores no slot, and the log line also
#           counts the samples that agree on such a node
#
# Confusion rows: the wrapper's node -> how many samples the other way gave
# nodes 0 to 7, then none of them.
#
#   git apply bench/experiments/frame-walk.patch     (or frame-walk-check.patch)
#   JITPROF_PGTREE=... JITPROF_PORT=... bench/experiments/node_attribution_experiment.sh fpw|check [ROWS]
set -euo pipefail
tag=${1:?usage: node_attribution_experiment.sh shadow|fpw|check [ROWS]}
rows=${2:-300000}
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
)
[ "$tag" != shadow ] && q+=(
"SELECT count(*) FROM t t1 JOIN t t2 ON t1.a = t2.a WHERE t1.b % 3 = 0"
"SELECT count(*) FROM s WHERE s.x <= 10 AND s.x > (SELECT count(*) FROM t WHERE t.b = s.x % 10)"
)
[ "$tag" = check ] && q+=(
"SELECT count(*) FROM (SELECT a::text AS v FROM t ORDER BY a::text COLLATE \"und-x-icu\" DESC) o"
"SELECT count(*) FROM t WHERE md5(a::text) < '8'"
"SELECT count(*) FROM s WHERE NOT EXISTS (SELECT 1 FROM t WHERE md5(t.a::text) = md5(s.x::text || 'x'))"
)
S="SET jitprof.plan_nodes = on; SET jitprof.sample_rate = 1000; SET jit_above_cost = 0; SET jit_optimize_above_cost=0; SET jit_inline_above_cost = 0;"
for i in "${!q[@]}"; do
  n=$(wc -l < "$work/log")
  pre=""; [ $i = 0 ] && pre="SET enable_hashjoin=off; SET enable_mergejoin=off;"
  body="${q[$i]#SET enable_hashjoin=off; SET enable_mergejoin=off; }"
  echo "query $i: $body"
  psql_q -c "$S $pre" -c "EXPLAIN (COSTS OFF) $body" | grep -v "^ *\(Filter\|Join Filter\|Hash Cond\|Sort Key\|Group Key\)" | sed 's/^/    /'
  psql_q -c "$S $pre" -c "$body" -c "$body" -c "$body" >/dev/null
  tail -n +$((n+1)) "$work/log" | grep "jitprof $tag" | sed "s/.*jitprof $tag/  /"
done
