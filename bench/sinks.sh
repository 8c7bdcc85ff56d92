#!/bin/bash
# Cost of jitprof's perf sinks on a compile-heavy workload.
#
# Many short queries, each JIT-compiled (jit_above_cost = 0), run by pgbench
# through one connection per run, in four configurations measured side by
# side, interleaved round by round so that machine noise hits all alike:
#
#   jitprof, sinks off    jitprof.perf_map = off, jitprof.perf_jitdump = off
#   jitprof, sinks on     jitprof.perf_map = on,  jitprof.perf_jitdump = on
#   llvmjit + profiling   stock provider, jit_profiling_support = on
#   llvmjit               stock provider, no profiling
#
# Prints the median tps of each and the ratios; the target is
# "sinks on" >= 97% of "sinks off".
#
#   bench/sinks.sh                  defaults: 5 rounds of 2000 queries
#   ROUNDS=7 QUERIES=3000 bench/sinks.sh
#   OPTIMIZE=1 bench/sinks.sh       also inline and optimize (slower compiles)
#
# Run as root (it builds and installs jitprof like tools/test.sh) or as the
# postgres user; set JITPROF_PGTREE/JITPROF_PORT as for tools/test.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh

ROUNDS=${ROUNDS:-5}
QUERIES=${QUERIES:-2000}
OPTIMIZE=${OPTIMIZE:-0}
port_jp=$PG_PORT
port_stock=$((PG_PORT + 1))

build_and_install

work=$(make_workdir bench)
cleanup() {
	for c in jitprof stock; do
		[ -f "$work/$c/postmaster.pid" ] &&
			as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/$c" -m immediate stop >/dev/null 2>&1
	done
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
	as_pg_user "$PG_BINDIR"/initdb -D "$work/$name" -A trust >/dev/null
	cat >>"$work/$name/postgresql.conf" <<EOF
port = $port
listen_addresses = ''
unix_socket_directories = '$work'
jit = on
jit_above_cost = 0
$opt
max_parallel_workers_per_gather = 0
$extra
EOF
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
jitprof.jitdump_dir = '$work/dumps-jitprof'"
start_cluster stock "$port_stock" "jit_provider = 'llvmjit'"

# a short query with a qual, arithmetic and an aggregate: compile-dominated
cat >"$work/query.sql" <<'EOF'
\set v random(1, 50)
SELECT sum(a * 2 + b), count(*) FILTER (WHERE b % 3 = 0), max(a - b) FROM bench_t WHERE a > :v;
EOF
chown "$PG_OS_USER" "$work/query.sql"

# tps of one pgbench run: $1 port, $2 PGOPTIONS
run_one() {
	as_pg_user env PGOPTIONS="$2" "$PG_BINDIR"/pgbench -n -h "$work" -p "$1" \
		-c 1 -t "$QUERIES" -f "$work/query.sql" postgres 2>&1 |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

configs=(sinks_off sinks_on stock_profiling stock)
declare -A port opts results
port[sinks_off]=$port_jp
opts[sinks_off]="-c jitprof.perf_map=off -c jitprof.perf_jitdump=off"
port[sinks_on]=$port_jp
opts[sinks_on]="-c jitprof.perf_map=on -c jitprof.perf_jitdump=on"
port[stock_profiling]=$port_stock
opts[stock_profiling]="-c jit_profiling_support=on"
port[stock]=$port_stock
opts[stock]=""

echo "jitprof perf sinks benchmark: $ROUNDS rounds x $QUERIES queries per configuration, optimize=$OPTIMIZE"
# warm-up: caches, catalog
for c in "${configs[@]}"; do run_one "${port[$c]}" "${opts[$c]}" >/dev/null; done

for r in $(seq 1 "$ROUNDS"); do
	line="round $r:"
	for c in "${configs[@]}"; do
		tps=$(run_one "${port[$c]}" "${opts[$c]}")
		results[$c]="${results[$c]:-} $tps"
		line="$line $c=$tps"
	done
	echo "$line"
done

# the sinks really ran: jitdump files were written in both clusters
ndumps_jp=$(find "$work/dumps-jitprof" -name 'jit-*.dump' | wc -l)
ndumps_stock=$(find "$work/dumps-stock" -name 'jit-*.dump' | wc -l)
echo "jitdump files written: jitprof $ndumps_jp, stock $ndumps_stock"

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

declare -A med
echo
printf '%-18s %10s\n' configuration "median tps"
for c in "${configs[@]}"; do
	med[$c]=$(echo "${results[$c]}" | median)
	printf '%-18s %10.1f\n' "$c" "${med[$c]}"
done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f%%", 100 * a / b}'; }
echo "jitprof sinks on / sinks off:            $(ratio "${med[sinks_on]}" "${med[sinks_off]}")   (target >= 97%)"
echo "jitprof sinks on / llvmjit + profiling:  $(ratio "${med[sinks_on]}" "${med[stock_profiling]}")"
echo "jitprof sinks off / llvmjit:             $(ratio "${med[sinks_off]}" "${med[stock]}")"
echo "llvmjit + profiling / llvmjit:           $(ratio "${med[stock_profiling]}" "${med[stock]}")"
