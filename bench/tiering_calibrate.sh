#!/bin/bash
# Calibration of tiering's rule (src/provider/tiering_rule.c, doc/tiering.md):
# on one throwaway cluster with jitprof as jit_provider, in ONE backend, side
# by side (the configurations alternate in each round), it measures
#
#  - the CPU time of a scan of ROWS rows whose qual has K additions, for two
#    values of K, interpreted (jit = off) and compiled at each level; the
#    difference between the two K, divided by rows and by the difference in
#    steps, is the cost of one step interpreted and compiled (the scan's own
#    cost cancels);
#  - EXPLAIN ANALYZE's JIT time (of a second run, with TIMING on) (generation + inlining + optimisation +
#    emission) of the same scans (per step compiled), and of M scans of a
#    one-row table under UNION ALL for two values of M (per function; the
#    intercept is the module's own cost);
#  - the same per-step costs for other kinds of steps, each an expression
#    that grows by one kind of steps per term (the second table, "per
#    kind"): add (a + a + ...: a column fetch and an int4pl call per term,
#    the kind the rule's constants are for), nulltest (a IS NOT NULL AND
#    ...: fetch, NULL test, AND step), coalesce (coalesce(n, n, ..., a) of
#    an all-NULL column: fetch and jump), sum (sum(c1), ..., sum(cK) over K
#    int columns: fetch, strict check and transition call per aggregate,
#    and deforming its column); "weight" is a kind's ns per step over
#    add's at the same level, what src/provider/tiering_rule.c's weights
#    come from.
#
# CPU time is the backend's own, read from /proc/self/schedstat (ns) before
# and after each statement; the minimum over ROUNDS rounds is kept.  Steps
# per row are read from the rule's DEBUG1 message (jitprof tiering rule:
# ... N functions of S steps).
#
#   bench/tiering_calibrate.sh [ROUNDS [ROWS]]
#
# Run as root (builds and installs like tools/test.sh); JITPROF_PGTREE and
# JITPROF_PORT select a private tree and port as for the tests.
set -euo pipefail

rounds=${1:-5}
rows=${2:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

start_bench_cluster bench-tiering-calibrate "$BENCH_JITPROF_CONF
jit = on
jit_above_cost = 0
autovacuum = off"

k1=1
k2=41
m1=2
m2=22
qual() {
	local k=$1 e=a i
	for ((i = 1; i < k; i++)); do e="$e + a"; done
	echo "$e > 0"
}
scan() { echo "SELECT count(*) FROM t WHERE $(qual "$1")"; }
# one expression of K terms of one kind of steps
kind_sql() {
	local kind=$1 k=$2 e i
	case $kind in
	add) scan "$k" ;;
	nulltest)
		e="a IS NOT NULL"
		for ((i = 1; i < k; i++)); do e="$e AND a IS NOT NULL"; done
		echo "SELECT count(*) FROM t WHERE $e"
		;;
	coalesce)
		e="coalesce(n"
		for ((i = 1; i < k; i++)); do e="$e, n"; done
		echo "SELECT count(*) FROM t WHERE $e, a) >= 0"
		;;
	sum)
		e="sum(c1)"
		for ((i = 2; i <= k; i++)); do e="$e, sum(c$i)"; done
		echo "SELECT $e FROM w"
		;;
	esac
}
kinds="add nulltest coalesce sum"
unions() {
	local m=$1 q="SELECT count(*) FROM (SELECT a FROM one WHERE a > 0" i
	for ((i = 1; i < m; i++)); do q="$q UNION ALL SELECT a FROM one WHERE a > $i"; done
	echo "$q) u"
}

psql_q >/dev/null <<EOF
CREATE TABLE t AS SELECT (g % 1000)::int AS a, NULL::int AS n FROM generate_series(1, $rows) g;
SELECT 'CREATE TABLE w AS SELECT ' || string_agg(format('(g %% %s)::int AS c%s', 1000 + i, i), ', ' ORDER BY i)
  || ' FROM generate_series(1, $rows) g' FROM generate_series(1, $k2) i \\gexec
CREATE TABLE one AS SELECT 1000 AS a;
VACUUM ANALYZE;
$(cpu_ns_sql)
-- CPU ns of one execution of SQL, and its JIT ms and functions
CREATE FUNCTION measure(sql text, OUT cpu bigint, OUT jit_ms float8, OUT functions int)
LANGUAGE plpgsql AS \$\$
DECLARE
  t0 bigint;
  plan json;
BEGIN
  t0 := cpu_ns();
  EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || sql INTO plan;
  cpu := cpu_ns() - t0;
  -- EXPLAIN prints JIT times only with TIMING on: a second run for them
  EXECUTE 'EXPLAIN (ANALYZE, TIMING ON, FORMAT JSON) ' || sql INTO plan;
  jit_ms := coalesce((plan->0->'JIT'->'Timing'->>'Total')::float8, 0);
  functions := coalesce((plan->0->'JIT'->>'Functions')::int, 0);
END \$\$;
CREATE TABLE m (cfg text, q text, cpu bigint, jit_ms float8, functions int);
EOF

# steps per row of each scan, from the rule's message (tiering on, floor 0)
steps() {
	psql_q -c "SET jitprof.tiering = on" -c "SET jitprof.tiering_min_cost = 0" \
		-c "SET jit_optimize_above_cost = -1" -c "SET jit_inline_above_cost = -1" \
		-c "SET client_min_messages = debug1" -c "$1" 2>&1 >/dev/null |
		sed -n 's/.*functions of \([0-9]*\) steps.*/\1/p' | head -1
}
s1=$(steps "$(scan $k1)")
s2=$(steps "$(scan $k2)")
declare -A ksteps
for kind in $kinds; do
	ksteps[$kind]="$(steps "$(kind_sql $kind $k1)") $(steps "$(kind_sql $kind $k2)")"
done

declare -A cfg
cfg[off]="SET jit = off;"
cfg[jit]="SET jit_optimize_above_cost = -1; SET jit_inline_above_cost = -1;"
cfg[jit+opt]="SET jit_optimize_above_cost = 0; SET jit_inline_above_cost = -1;"
cfg[all]="SET jit_optimize_above_cost = 0; SET jit_inline_above_cost = 0;"
{
	for ((r = 0; r < rounds; r++)); do
		for c in off jit jit+opt all; do
			for q in "k$k1" "k$k2" "m$m1" "m$m2"; do
				case $q in
				k*) sql=$(scan "${q#k}") ;;
				m*) sql=$(unions "${q#m}") ;;
				esac
				[ "$c" = off ] && [ "${q:0:1}" = m ] && continue
				echo "RESET ALL; ${cfg[$c]}"
				echo "INSERT INTO m SELECT '$c', '$q', * FROM measure(\$q\$$sql\$q\$);"
			done
			for kind in $kinds; do
				[ "$kind" = add ] && continue
				for k in $k1 $k2; do
					echo "RESET ALL; ${cfg[$c]}"
					echo "INSERT INTO m SELECT '$c', '$kind$k', * FROM measure(\$q\$$(kind_sql $kind $k)\$q\$);"
				done
			done
		done
	done
} >"$work/run.sql"
psql_q -f "$work/run.sql" >/dev/null

bench_banner "$rounds" "$rows"
echo "# steps per row: K=$k1 -> $s1, K=$k2 -> $s2; CPU: backend's schedstat, min of $rounds rounds"
psql_q -P footer=off -F ' ' <<EOF
\\pset tuples_only off
SET jit = off;
WITH b AS (SELECT cfg, q, min(cpu) AS cpu, min(jit_ms) AS jit_ms, max(functions) AS f FROM m GROUP BY cfg, q),
k AS (SELECT x.cfg,
        ((y.cpu - y.jit_ms * 1e6) - (x.cpu - x.jit_ms * 1e6)) / ($rows::float8 * ($s2 - $s1)) AS ns_per_step_run,
        (y.jit_ms - x.jit_ms) * 1e6 / ($s2 - $s1) AS compile_ns_per_step
      FROM b x JOIN b y ON x.cfg = y.cfg AND x.q = 'k$k1' AND y.q = 'k$k2'),
f AS (SELECT x.cfg, (y.jit_ms - x.jit_ms) * 1e6 / nullif(y.f - x.f, 0) AS compile_ns_per_function,
        (x.jit_ms * 1e6) - x.f * (y.jit_ms - x.jit_ms) * 1e6 / nullif(y.f - x.f, 0) AS module_ns
      FROM b x JOIN b y ON x.cfg = y.cfg AND x.q = 'm$m1' AND y.q = 'm$m2')
SELECT k.cfg AS level, round(k.ns_per_step_run::numeric, 2) AS run_ns_per_step,
       round(k.compile_ns_per_step::numeric) AS compile_ns_per_step,
       round(f.compile_ns_per_function::numeric) AS compile_ns_per_function,
       round(f.module_ns::numeric) AS module_ns
FROM k LEFT JOIN f USING (cfg) ORDER BY k.cfg;
EOF

# per kind of step: the same differences, one kind at a time
echo "# per kind: steps per row at K=$k1 -> K=$k2; ns per step added, run and compile; weight: ns per step run over add's at the level"
{
	echo "\\pset tuples_only off"
	echo "SET jit = off;"
	echo "CREATE TEMP TABLE ks (kind text, q1 text, q2 text, s1 int, s2 int);"
	for kind in $kinds; do
		read -r a b <<<"${ksteps[$kind]}"
		q=$kind
		[ "$kind" = add ] && q=k
		echo "INSERT INTO ks VALUES ('$kind', '$q$k1', '$q$k2', $a, $b);"
	done
	cat <<EOF
WITH b AS (SELECT cfg, q, min(cpu) AS cpu, min(jit_ms) AS jit_ms FROM m GROUP BY cfg, q),
r AS (SELECT ks.kind, ks.s1, ks.s2, x.cfg,
        ((y.cpu - y.jit_ms * 1e6) - (x.cpu - x.jit_ms * 1e6)) / ($rows::float8 * (ks.s2 - ks.s1)) AS run_ns,
        (y.jit_ms - x.jit_ms) * 1e6 / (ks.s2 - ks.s1) AS compile_ns
      FROM ks JOIN b x ON x.q = ks.q1 JOIN b y ON y.q = ks.q2 AND y.cfg = x.cfg)
SELECT r.kind, r.s1 || '->' || r.s2 AS steps, r.cfg AS level,
       round(r.run_ns::numeric, 2) AS run_ns_per_step,
       round(r.compile_ns::numeric) AS compile_ns_per_step,
       round((r.run_ns / a.run_ns)::numeric, 3) AS weight
FROM r JOIN r a ON a.kind = 'add' AND a.cfg = r.cfg
ORDER BY r.kind, r.cfg;
EOF
} | psql_q -P footer=off -F ' '
