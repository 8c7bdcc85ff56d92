#!/bin/bash
# Cost of the plan-node profile (issue 11): throughput with
# jitprof.plan_nodes on as a share of off, side by side in one session, on
# tuple-heavy queries (TPC-H Q1 over a generated 1M-row lineitem, a 1M-row
# nested loop over a Materialize, a 1M-row sort, a hash join), each with JIT
# off and forced on, at the default sample rate (99 Hz) and at 1 kHz.
# Throughput is per second of the backend's own CPU time (utime + stime
# from /proc/self/stat, 10 ms ticks); on and off alternate run by run.
#
#   bench/plan_nodes.sh [REPETITIONS] [ROWS]
# Run as root (builds and installs like tools/test.sh; JITPROF_PGTREE and
# JITPROF_PORT are honoured).  Targets: >= 99% at 99 Hz, >= 98% at 1 kHz.
set -euo pipefail

reps=${1:-10}
rows=${2:-1000000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir plannodes)
trap 'stop_clusters; rm -rf "$work"' EXIT
init_cluster "$work/data" "$PG_PORT" "$work" "
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
compute_query_id = on
max_parallel_workers_per_gather = 0
shared_buffers = 512MB
work_mem = '256MB'
jitprof.flush_interval = 0"
as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -l "$work/log" -w start >/dev/null

psql_() {
	as_pg_user "$PG_BINDIR"/psql -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "$PG_PORT" -d postgres "$@"
}
psql_ -c "CREATE EXTENSION jitprof" -c "
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
	-c "VACUUM ANALYZE lineitem, t, s, n1, n2"

names=("TPC-H Q1" "nested loop" "sort" "hash join")
queries=(
	"SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*) FROM lineitem WHERE l_shipdate <= date '1998-12-01' - interval '90 day' GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"
	"SELECT count(*) FROM n1, n2 WHERE n1.x + n2.y <> 7"
	"SELECT sum(a) FROM (SELECT a FROM t ORDER BY b, a) o"
	"SELECT count(*) FROM t, s WHERE s.x = t.b AND t.a % 3 = 0"
)
nl_sets="SET enable_hashjoin = off; SET enable_mergejoin = off;"

cpu="(split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint)"
measure() {
	local rate=$1
	{
		echo "SET jitprof.sample_rate = $rate;"
		for i in "${!queries[@]}"; do
			for j in off on; do
				echo "\\set on_${i}_$j 0"
				echo "\\set off_${i}_$j 0"
			done
		done
		for r in $(seq 0 "$reps"); do
			for i in "${!queries[@]}"; do
				if [ "$i" = 1 ]; then echo "$nl_sets"; else echo "RESET enable_hashjoin; RESET enable_mergejoin;"; fi
				for j in off on; do
					if [ $j = on ]; then
						echo "SET jit = on; SET jit_above_cost = 0; SET jit_inline_above_cost = 0; SET jit_optimize_above_cost = 0;"
					else
						echo "SET jit = off;"
					fi
					for m in on off; do
						[ $((r % 2)) = 0 ] && m=$([ $m = on ] && echo off || echo on)
						echo "SET jitprof.plan_nodes = $m;"
						echo "SELECT $cpu AS t0 FROM pg_read_file('/proc/self/stat') AS s \\gset"
						echo "${queries[$i]} \\g /dev/null"
						# round 0 warms up
						[ "$r" = 0 ] && continue
						echo "SELECT :${m}_${i}_$j + $cpu - :t0 AS ${m}_${i}_$j FROM pg_read_file('/proc/self/stat') AS s \\gset"
					done
				done
			done
		done
		for i in "${!queries[@]}"; do
			for j in off on; do echo "SELECT '$i', '$j', :on_${i}_$j, :off_${i}_$j;"; done
		done
	} >"$work"/measure.sql
	chown "$PG_OS_USER" "$work"/measure.sql
	psql_ -F ' ' -f "$work"/measure.sql | while read -r i j on off; do
		awk -v q="${names[$i]}" -v j="$j" -v on="$on" -v off="$off" -v rate="$rate" \
			'BEGIN { printf "%5s Hz  %-12s jit %-3s  off %5d  on %5d ticks  %6.1f%%\n", rate, q, j, off, on, 100 * off / on }'
	done
}

echo "plan-node profile on vs off, $reps runs each, CPU ticks (10 ms) summed; throughput on as a share of off"
measure 99
measure 1000
