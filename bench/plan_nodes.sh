#!/bin/bash
# CPU cost of the plan-node profile (issues 11 and 35): the backend's CPU
# time per statement with jitprof.plan_nodes on ÷ off, side by side in one
# session, on the profile's worst cases (a nested loop of cheap tuples over
# a Materialize, a sort of narrow rows, a hash join) and TPC-H Q1 over a
# generated lineitem, JIT forced on, at the default sample rate (99 Hz).
# The same statements with JIT off are the control: nothing is wrapped
# there, so their ratio is the method's own spread.
#
# CPU time is read from /proc/self/schedstat (ns) before and after each
# statement, with JIT off for the two reads so that compiling them is not
# counted.  On and off alternate within each round, in an order that flips
# round by round; round 0 warms up.  Reported per statement: the median over
# rounds of the paired ratio on ÷ off, its quartiles, and the ratio of the
# summed times.  Targets (issue 35): >= 0.99 of off's throughput, that is
# on ÷ off <= 1.01, at 99 Hz.
#
#   [RATES="99 1000"] [QUERIES="0 1 2 3"] [AA=1] bench/plan_nodes.sh [ROUNDS [ROWS]]
# AA=1 runs the "on" arm with the profile off too: an A/A run, whose
# ratios are the method's own spread for the JIT rows as well (where JIT
# code placed differently from one execution to the next moves a session's
# median by a point or more).
# QUERIES picks the statements by index (0 nested loop, 1 sort, 2 hash
# join, 3 TPC-H Q1).
# ROUNDS (default 20), ROWS (default 2000000: lineitem's and the sort's
# rows, the hash join's probe side, and the nested loop's inner tuples,
# 1000 × ROWS/1000).  Run as root (builds and installs like tools/test.sh;
# JITPROF_PGTREE and JITPROF_PORT are honoured).
set -euo pipefail

rounds=${1:-20}
rows=${2:-2000000}
rates=${RATES:-99}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

start_bench_cluster plannodes "$BENCH_JITPROF_CONF
shared_buffers = 512MB
work_mem = '512MB'
jitprof.save = off
jitprof.flush_interval = 0"

psql_q -c "CREATE EXTENSION jitprof" -c "$(cpu_ns_sql)" -c "
CREATE TABLE lineitem AS
SELECT (g / 4)::int AS l_orderkey,
       (1 + g % 50)::numeric(15,2) AS l_quantity,
       (900 + (g::bigint * 7919) % 100000 / 100.0)::numeric(15,2) AS l_extendedprice,
       ((g % 11) / 100.0)::numeric(15,2) AS l_discount,
       ((g % 9) / 100.0)::numeric(15,2) AS l_tax,
       (ARRAY['A','N','R'])[1 + g % 3]::char(1) AS l_returnflag,
       (ARRAY['F','O'])[1 + g % 2]::char(1) AS l_linestatus,
       date '1992-01-02' + (g % 2500) AS l_shipdate
FROM generate_series(1, $rows) g" \
	-c "CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, $rows) g" \
	-c "CREATE TABLE s AS SELECT g AS x FROM generate_series(1, 1000) g" \
	-c "CREATE TABLE n1 AS SELECT g AS x FROM generate_series(1, 1000) g" \
	-c "CREATE TABLE n2 AS SELECT g AS y FROM generate_series(1, $((rows / 1000))) g" \
	-c "VACUUM ANALYZE lineitem, t, s, n1, n2" \
	-c "CREATE TABLE pn_runs (rate int, r int, q text, jit text, prof text, ns bigint)"

names=("nested loop" "sort" "hash join" "TPC-H Q1")
queries=(
	"SELECT count(*) FROM n1, n2 WHERE n1.x + n2.y <> 7"
	"SELECT sum(a) FROM (SELECT a FROM t ORDER BY b, a) o"
	"SELECT count(*) FROM t, s WHERE s.x = t.b AND t.a % 3 = 0"
	"SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*) FROM lineitem WHERE l_shipdate <= date '1998-12-01' - interval '90 day' GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"
)
planner_sets=(
	"SET enable_hashjoin = off; SET enable_mergejoin = off;"
	"RESET enable_hashjoin; RESET enable_mergejoin;"
	"RESET enable_hashjoin; RESET enable_mergejoin;"
	"RESET enable_hashjoin; RESET enable_mergejoin;"
)

which=${QUERIES:-${!queries[*]}}
bench_banner "$rounds" "$rows" "(RATES=\"$rates\" QUERIES=\"$which\" AA=${AA:-0})"
for rate in $rates; do
	{
		echo "SET jit_above_cost = 0; SET jit_inline_above_cost = 0; SET jit_optimize_above_cost = 0;"
		echo "SET jitprof.sample_rate = $rate;"
		for ((r = 0; r <= rounds; r++)); do
			for i in $which; do
				echo "${planner_sets[$i]}"
				for jit in on off; do
					order="off on"
					[ $(((r + i) % 2)) = 1 ] && order="on off"
					for prof in $order; do
						setting=$prof
						[ "${AA:-0}" = 1 ] && setting=off
						echo "SET jitprof.plan_nodes = $setting; SET jit = off;"
						echo "SELECT cpu_ns() AS t0 \\gset"
						echo "SET jit = $jit;"
						echo "${queries[$i]} \\g /dev/null"
						echo "SET jit = off;"
						echo "SELECT cpu_ns() - :t0 AS dt \\gset"
						[ "$r" = 0 ] && continue
						echo "INSERT INTO pn_runs VALUES ($rate, $r, '${names[$i]}', '$jit', '$prof', :dt);"
					done
				done
			done
		done
		echo "SELECT 'rate $rate: ' || string_agg(name || ' ' || value, ', ') FROM jitprof_status WHERE name LIKE 'plan_node_%';"
	} >"$work/measure.sql"
	chown "$PG_OS_USER" "$work/measure.sql"
	psql_q -f "$work/measure.sql"
done

psql_q -P format=aligned -P footer=off -P tuples_only=off -c "
WITH paired AS (
  SELECT rate, q, jit, r,
         max(ns) FILTER (WHERE prof = 'on')::float8 /
         max(ns) FILTER (WHERE prof = 'off') AS ratio,
         max(ns) FILTER (WHERE prof = 'on') AS on_ns,
         max(ns) FILTER (WHERE prof = 'off') AS off_ns
    FROM pn_runs GROUP BY rate, q, jit, r)
SELECT rate AS hz, q AS statement, jit, count(*) AS rounds,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY off_ns)::numeric / 1e6, 1) AS off_ms,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ratio)::numeric, 4) AS \"on/off median\",
       round(percentile_cont(0.25) WITHIN GROUP (ORDER BY ratio)::numeric, 4) AS q1,
       round(percentile_cont(0.75) WITHIN GROUP (ORDER BY ratio)::numeric, 4) AS q3,
       round((sum(on_ns)::float8 / sum(off_ns))::numeric, 4) AS \"on/off summed\"
  FROM paired GROUP BY rate, q, jit ORDER BY rate, jit DESC, q"
