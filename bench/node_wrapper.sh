#!/bin/bash
# Per-tuple cost of a persistent ExecProcNode wrapper on every plan node, the
# mechanism issue 11 (plan-node profiles) considers for knowing the running
# node: test/modules/jp_nodewrap.c wraps each node, looks its next function
# up in a hash by node address and pushes and pops a stack of running nodes
# around every call.  Measured on 1M-row JIT queries, with the wrapper on
# and off alternating query by query in one session (jitprof preloaded at
# its defaults in both), as CPU time of the backend.
#
#   bench/node_wrapper.sh [REPETITIONS]
# Run as root (builds and installs like tools/test.sh; JITPROF_PGTREE and
# JITPROF_PORT are honoured).
set -euo pipefail

reps=${1:-10}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir nodewrap)
trap 'stop_clusters; rm -rf "$work"' EXIT
init_cluster "$work/data" "$PG_PORT" "$work" "
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
jit = on
jit_above_cost = 0
jit_inline_above_cost = 0
jit_optimize_above_cost = 0
compute_query_id = on
max_parallel_workers_per_gather = 0
shared_buffers = 256MB"
as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -l "$work/log" -w start >/dev/null

so=$("$TOP"/tools/build_test_module.sh jp_nodewrap "$work")
chown "$PG_OS_USER" "$so"

psql_() {
	as_pg_user "$PG_BINDIR"/psql -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "$PG_PORT" -d postgres "$@"
}
psql_ -c "CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, 1000000) g" \
	-c "CREATE TABLE s AS SELECT g AS x FROM generate_series(1, 1000) g" -c "VACUUM ANALYZE t, s"

queries=(
	"SELECT count(*) FROM t WHERE a % 7 <> 3"
	"SELECT count(*) FROM t, s WHERE s.x = t.b AND t.a % 3 = 0"
	"SELECT sum(a) FROM (SELECT a FROM t ORDER BY b, a) o"
)
cpu="(split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint)"
{
	echo "LOAD '$so';"
	for q in "${queries[@]}"; do echo "$q \\g /dev/null"; done	# warm up
	for i in $(seq 0 $((${#queries[@]} - 1))); do echo "\\set on_$i 0"; echo "\\set off_$i 0"; done
	for r in $(seq 1 "$reps"); do
		for i in $(seq 0 $((${#queries[@]} - 1))); do
			for m in on off; do
				[ $((r % 2)) = 0 ] && m=$([ $m = on ] && echo off || echo on)
				echo "SET jp_nodewrap.enabled = $m;"
				echo "SELECT $cpu AS t0 FROM pg_read_file('/proc/self/stat') AS s \\gset"
				echo "${queries[$i]} \\g /dev/null"
				echo "SELECT :${m}_$i + $cpu - :t0 AS ${m}_$i FROM pg_read_file('/proc/self/stat') AS s \\gset"
			done
		done
	done
	for i in $(seq 0 $((${#queries[@]} - 1))); do echo "SELECT :on_$i, :off_$i;"; done
} >"$work"/measure.sql
chown "$PG_OS_USER" "$work"/measure.sql

echo "persistent node wrapper (jp_nodewrap: hash lookup + node stack per call), $reps runs each, CPU ticks"
echo "throughput with the wrapper as a share of without (target for issue 11: >= 99%)"
i=0
psql_ -f "$work"/measure.sql | while read -r line; do
	on=${line%|*}; off=${line#*|}
	awk -v q="${queries[$i]}" -v on="$on" -v off="$off" \
		'BEGIN { printf "%-60s off %5d on %5d  %.1f%%\n", q, off, on, 100 * off / on }'
	i=$((i + 1))
done
