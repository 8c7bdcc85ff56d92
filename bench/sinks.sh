#!/bin/bash
# Cost of jitprof's perf sinks on a compile-heavy workload.
#
# Many short queries, each JIT-compiled (jit_above_cost = 0), run by psql
# through one connection per run, in four configurations measured side by
# side, interleaved round by round so that machine noise hits all alike:
#
#   jitprof, sinks off    jitprof.perf_map = off, jitprof.perf_jitdump = off
#   jitprof, sinks on     jitprof.perf_map = on,  jitprof.perf_jitdump = on
#   jitprof, sinks on, no unwinding records (jitprof.jitdump_unwinding = off)
#   llvmjit + profiling   stock provider, jit_profiling_support = on
#   llvmjit               stock provider, no profiling
#
# The main measure is queries per CPU second of the backend (read from
# /proc/self/stat by the backend itself), which other load on the machine
# changes less than wall-clock time; queries per wall-clock second are
# printed too.  Prints the medians of each, and for each pair of
# configurations the median of the per-round ratios (runs of one round are
# close in time, so they share the machine's load); the target is
# "sinks on" >= 97% of "sinks off".
#
#   bench/sinks.sh                  defaults: 15 rounds of 500 queries
#   ROUNDS=25 QUERIES=1000 bench/sinks.sh
#   OPTIMIZE=1 bench/sinks.sh       also inline and optimize (slower compiles)
#
# Run as root (it builds and installs jitprof like tools/test.sh) or as the
# postgres user; set JITPROF_PGTREE/JITPROF_PORT as for tools/test.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh

ROUNDS=${ROUNDS:-15}
QUERIES=${QUERIES:-500}
OPTIMIZE=${OPTIMIZE:-0}
port_jp=$PG_PORT
port_stock=$((PG_PORT + 1))

build_and_install

work=$(make_workdir perf-bench)
cleanup() {
	stop_clusters
	rm -rf "$work"
}
trap cleanup EXIT

if [ "$OPTIMIZE" = 1 ]; then
	opt="jit_inline_above_cost = 0
jit_optimize_above_cost = 0"
else
	opt="jit_inline_above_cost = -1
jit_optimize_above_cost = -1"
fi

start_cluster() {
	local name=$1 port=$2 extra=$3
	init_cluster "$work/$name" "$port" "$work" "jit = on
jit_above_cost = 0
$opt
max_parallel_workers_per_gather = 0
$extra"
	# JITDUMPDIR: where stock jit_profiling_support writes its dumps
	as_pg_user env JITDUMPDIR="$work/dumps-$name" \
		"$PG_BINDIR"/pg_ctl -D "$work/$name" -l "$work/$name.log" -w start >/dev/null
	as_pg_user "$PG_BINDIR"/psql -X -q -h "$work" -p "$port" -d postgres <<EOF
CREATE TABLE bench_t AS SELECT g AS a, g % 10 AS b FROM generate_series(1, 100) g;
ANALYZE bench_t;
EOF
}

mkdir -p "$work/dumps-jitprof" "$work/dumps-stock"
chown "$PG_OS_USER" "$work/dumps-jitprof" "$work/dumps-stock"
start_cluster jitprof "$port_jp" "shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
jitprof.jitdump_dir = '$work/dumps-jitprof'"
start_cluster stock "$port_stock" "jit_provider = 'llvmjit'"

# Many short queries with a qual, arithmetic and an aggregate, each
# JIT-compiled on its own: compile-dominated.  The backend reads its own CPU
# time (/proc/self/stat) before and after, so the result does not depend on
# what else runs on the machine; wall-clock throughput is shown as well.
{
	echo "SELECT 'cpu_start', pg_read_file('/proc/self/stat', 0, 1000);"
	echo '\o /dev/null'
	for i in $(seq 1 "$QUERIES"); do
		echo "SELECT sum(a * 2 + b), count(*) FILTER (WHERE b % 3 = $((i % 3))), max(a - b) FROM bench_t WHERE a > $((i % 50));"
	done
	echo '\o'
	echo "SELECT 'cpu_end', pg_read_file('/proc/self/stat', 0, 1000);"
} >"$work/queries.sql"
chown "$PG_OS_USER" "$work/queries.sql"
hz=$(getconf CLK_TCK)

# one run: $1 port, $2 PGOPTIONS; prints "<queries per CPU second> <wall queries per second>"
run_one() {
	local t0 t1 out
	t0=$(date +%s.%N)
	out=$(as_pg_user env PGOPTIONS="$2" "$PG_BINDIR"/psql -X -At -h "$work" -p "$1" \
		-d postgres -f "$work/queries.sql")
	t1=$(date +%s.%N)
	# utime + stime are fields 14 and 15 of /proc/<pid>/stat
	echo "$out" | awk -v q="$QUERIES" -v hz="$hz" -v t0="$t0" -v t1="$t1" -F'|' '
		$1 == "cpu_start" { split($2, f, " "); c0 = f[14] + f[15] }
		$1 == "cpu_end"   { split($2, f, " "); c1 = f[14] + f[15] }
		END { printf "%.1f %.1f\n", q / ((c1 - c0) / hz), q / (t1 - t0) }'
}

configs=(sinks_off sinks_on sinks_no_unwind stock_profiling stock)
declare -A port opts results
port[sinks_off]=$port_jp
opts[sinks_off]="-c jitprof.perf_map=off -c jitprof.perf_jitdump=off"
port[sinks_on]=$port_jp
opts[sinks_on]="-c jitprof.perf_map=on -c jitprof.perf_jitdump=on"
port[sinks_no_unwind]=$port_jp
opts[sinks_no_unwind]="-c jitprof.perf_map=on -c jitprof.perf_jitdump=on -c jitprof.jitdump_unwinding=off"
port[stock_profiling]=$port_stock
opts[stock_profiling]="-c jit_profiling_support=on"
port[stock]=$port_stock
opts[stock]=""

echo "jitprof perf sinks benchmark: $ROUNDS rounds x $QUERIES queries per configuration, optimize=$OPTIMIZE"
echo "each cell: queries per backend CPU second / queries per wall second"
# warm-up: caches, catalog
for c in "${configs[@]}"; do run_one "${port[$c]}" "${opts[$c]}" >/dev/null; done

declare -A cpu wall
for r in $(seq 1 "$ROUNDS"); do
	line="round $r:"
	# rotate the order each round, so no configuration always goes first
	for k in $(seq 0 $((${#configs[@]} - 1))); do
		c=${configs[$(((k + r) % ${#configs[@]}))]}
		read -r qc qw < <(run_one "${port[$c]}" "${opts[$c]}")
		cpu[$c]="${cpu[$c]:-} $qc"
		wall[$c]="${wall[$c]:-} $qw"
		line="$line $c=$qc/$qw"
	done
	echo "$line"
done

# the sinks really ran: jitdump files were written in both clusters
ndumps_jp=$(find "$work/dumps-jitprof" -name 'jit-*.dump' | wc -l)
ndumps_stock=$(find "$work/dumps-stock" -name 'jit-*.dump' | wc -l)
echo "jitdump files written: jitprof $ndumps_jp, stock $ndumps_stock"

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

declare -A mc mw
echo
printf '%-18s %16s %16s\n' configuration "queries/CPU s" "queries/wall s"
for c in "${configs[@]}"; do
	mc[$c]=$(echo "${cpu[$c]}" | median)
	mw[$c]=$(echo "${wall[$c]}" | median)
	printf '%-18s %16.1f %16.1f\n' "$c" "${mc[$c]}" "${mw[$c]}"
done

# Median over the rounds of the ratio within each round: the two runs of a
# round are close in time, so they saw about the same machine load.
paired() {
	local -a a b
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	for i in "${!a[@]}"; do
		awk -v x="${a[$i]}" -v y="${b[$i]}" 'BEGIN {printf "%.4f\n", 100 * x / y}'
	done | median | awk '{printf "%.1f%%", $1}'
}
echo
printf '%-40s %8s %8s\n' "ratio (median of per-round ratios)" "CPU" "wall"
printf '%-40s %8s %8s   (target >= 97%%)\n' "jitprof sinks on / sinks off" \
	"$(paired "${cpu[sinks_on]}" "${cpu[sinks_off]}")" "$(paired "${wall[sinks_on]}" "${wall[sinks_off]}")"
printf '%-40s %8s %8s\n' "sinks on without unwinding / sinks off" \
	"$(paired "${cpu[sinks_no_unwind]}" "${cpu[sinks_off]}")" "$(paired "${wall[sinks_no_unwind]}" "${wall[sinks_off]}")"
printf '%-40s %8s %8s\n' "sinks on / sinks on without unwinding" \
	"$(paired "${cpu[sinks_on]}" "${cpu[sinks_no_unwind]}")" "$(paired "${wall[sinks_on]}" "${wall[sinks_no_unwind]}")"
printf '%-40s %8s %8s\n' "jitprof sinks on / llvmjit + profiling" \
	"$(paired "${cpu[sinks_on]}" "${cpu[stock_profiling]}")" "$(paired "${wall[sinks_on]}" "${wall[stock_profiling]}")"
printf '%-40s %8s %8s\n' "jitprof sinks off / llvmjit" \
	"$(paired "${cpu[sinks_off]}" "${cpu[stock]}")" "$(paired "${wall[sinks_off]}" "${wall[stock]}")"
printf '%-40s %8s %8s\n' "llvmjit + profiling / llvmjit" \
	"$(paired "${cpu[stock_profiling]}" "${cpu[stock]}")" "$(paired "${wall[stock_profiling]}" "${wall[stock]}")"
