#!/bin/bash
# Instructions per execution of the plan-node profile's worst cases (issue
# 35): a nested loop of cheap tuples, a hash join and a sort of narrow rows,
# JIT forced on (inlining off, which valgrind makes slow), at the default
# sample rate, with jitprof.plan_nodes on ÷ off.  Counted by callgrind, so
# that the machine's load does not move the figure the way it moves CPU
# time (bench/plan_nodes.sh measures CPU time).
#
# One server runs under valgrind --tool=callgrind, counting only inside
# PortalStart, PortalRun and PortalDrop (ExecutorStart, Run, Finish and End
# of a SELECT; exec_simple_query is inlined in PostgresMain).  For every
# query and setting, one session runs the query once and another runs it
# three times, each in a backend of its own; the count per execution is
# the difference ÷ 2, which leaves out the backend's first JIT (loading
# llvmjit, the relcache) and what else does not grow with the count.  The
# sampler runs at its default rate, which under valgrind's slowdown takes
# many more samples per query than at full speed, so the per-sample work
# weighs more here than on a real run.
#
#   [QUERIES="0 1 2"] bench/plan_nodes_instructions.sh [ROWS]
#
# QUERIES picks the queries by index (0 nested loop, 1 hash join, 2 sort).
# ROWS (default 200000): rows of the sort and of the hash join's probe
# side, and inner tuples of the nested loop (1000 × ROWS/1000).  Run as
# root; JITPROF_PGTREE and JITPROF_PORT are honoured.  Slow: each
# query's four sessions took about 8 minutes at 100000 rows on a loaded
# 2-core host (valgrind compiles every execution's JIT code).
set -euo pipefail

rows=${1:-200000}
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir bench-nodes-instr)
data=$work/data
cleanup() {
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m immediate stop >/dev/null 2>&1 || true
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

init_cluster "$data" "$PG_PORT" "$work" "
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
jitprof.save = off
jit = on
jit_above_cost = 0
jit_inline_above_cost = -1
jit_optimize_above_cost = 0
compute_query_id = on
autovacuum = off
max_parallel_workers_per_gather = 0
work_mem = '256MB'"

psql_() {
	as_pg_user env PGOPTIONS="${PGOPTIONS:-}" "$PG_BINDIR"/psql -X -q -At -v ON_ERROR_STOP=1 \
		-h "$work" -p "$PG_PORT" -d postgres "$@"
}
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$work/log" -w start >/dev/null
psql_ -c "CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, $rows) g" \
	-c "CREATE TABLE s AS SELECT g AS x FROM generate_series(1, 1000) g" \
	-c "CREATE TABLE n1 AS SELECT g AS x FROM generate_series(1, 1000) g" \
	-c "CREATE TABLE n2 AS SELECT g AS y FROM generate_series(1, $((rows / 1000))) g" \
	-c "VACUUM ANALYZE t, s, n1, n2"
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast stop >/dev/null

names=("nested loop" "hash join" "sort")
queries=(
	"SELECT count(*) FROM n1, n2 WHERE n1.x + n2.y <> 7"
	"SELECT count(*) FROM t, s WHERE s.x = t.b AND t.a % 3 = 0"
	"SELECT sum(a) FROM (SELECT a FROM t ORDER BY b, a) o"
)
sets=("-c enable_hashjoin=off -c enable_mergejoin=off" "" "")

out=$work/cg
mkdir -p "$out"
chown "$PG_OS_USER" "$out"
as_pg_user valgrind --tool=callgrind --trace-children=no \
	--collect-atstart=no --toggle-collect=PortalStart \
	--toggle-collect=PortalRun --toggle-collect=PortalDrop \
	--callgrind-out-file="$out/cg.%p" \
	"$PG_BINDIR"/postgres -D "$data" >"$work/log-cg" 2>&1 &
vpid=$!
for _ in $(seq 1 600); do
	as_pg_user "$PG_BINDIR"/pg_isready -q -h "$work" -p "$PG_PORT" && break
	sleep 0.5
done

# session QUERY SETTING COUNT: the pid of a backend that ran it COUNT times
session() {
	local i=$1 m=$2 n=$3
	{
		echo "SELECT pg_backend_pid();"
		for _ in $(seq 1 "$n"); do echo "${queries[$i]} \\g /dev/null"; done
	} | PGOPTIONS="${sets[$i]} -c jitprof.plan_nodes=$m" psql_ -f -
}
which=${QUERIES:-${!queries[*]}}
total() { sed -n 's/^summary: *//p; s/^totals: *//p' "$1" | head -n 1; }

echo "jitprof.plan_nodes on ÷ off, JIT forced (no inlining), default sample rate: instructions"
echo "per execution in PortalStart, PortalRun and PortalDrop (callgrind; (3 runs - 1 run) / 2),"
echo "$rows rows, commit $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo '?')"
printf "%-12s %15s %15s %8s\n" query off on "off/on"
declare -A pid
for i in $which; do
	declare -A per
	for m in off on; do
		for n in 1 3; do
			pid[$i,$m,$n]=$(session "$i" "$m" "$n")
		done
		# a backend's counts are written as it exits, after psql returns
		for _ in $(seq 1 120); do
			[ -n "$(total "$out/cg.${pid[$i,$m,3]}" 2>/dev/null)" ] && break
			sleep 1
		done
		a=$(total "$out/cg.${pid[$i,$m,1]}")
		b=$(total "$out/cg.${pid[$i,$m,3]}")
		per[$m]=$(((b - a) / 2))
	done
	printf "%-12s %15s %15s %8.4f\n" "${names[$i]}" "${per[off]}" "${per[on]}" \
		"$(awk -v a="${per[off]}" -v b="${per[on]}" 'BEGIN {print a / b}')"
done
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast -t 600 stop >/dev/null
wait "$vpid" || true

if [ -n "${FUNCTIONS:-}" ]; then
	echo
	echo "own instructions of jitprof's node functions, 3-run sessions with plan_nodes on:"
	for i in $which; do
		echo "${names[$i]}:"
		callgrind_annotate --auto=no --threshold=100 "$out/cg.${pid[$i,on,3]}" 2>/dev/null |
			grep -E 'jp_node|wrapper|sample_handler|flush' | head -n 8
	done
fi
