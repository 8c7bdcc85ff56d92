#!/bin/bash
# What preloading jitprof costs work that never JIT-compiles: pgbench
# select-only, side by side with stock PostgreSQL.
#
# Three clusters on the same pgbench data (pgbench -i, deterministic):
#
#   stock     no preload, jit_provider = llvmjit (PostgreSQL as shipped)
#   jitprof   jitprof at its defaults: shared_preload_libraries = 'jitprof',
#             jit_provider = 'jitprof'
#   rate0     the same with jitprof.sample_rate = 0 (sampler off), which
#             isolates the cost of loading jitprof from the sampler's
#
# and two workloads, neither of which JIT-compiles (default JIT costs):
#
#   prepared  pgbench -S -M prepared -c 1   (per-statement cost)
#   connect   pgbench -S -C -c 1            (a new connection per
#                                            transaction: per-backend cost)
#
# Each round runs every workload against every cluster for SECONDS, the
# order of the clusters rotating from round to round, so that the machine's
# changing load hits each alike.  It prints each cluster's median tps and,
# per workload, the median over rounds of the per-round ratio to stock.
# Targets: prepared >= 0.99, connect >= 0.98.
#
#   bench/oltp.sh [ROUNDS [SECONDS [SCALE]]]     default 5 rounds of 10 s, scale 10
#
# Run as root (it builds and installs jitprof like tools/test.sh) or as the
# postgres user; JITPROF_PGTREE and JITPROF_PORT are honoured as for
# tools/test.sh (the clusters use that port and the two after it).
set -euo pipefail

rounds=${1:-5}
seconds=${2:-10}
scale=${3:-10}

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh

build_and_install >/dev/null

work=$(make_workdir bench-oltp)
cleanup() {
	stop_clusters
	rm -rf "$work"
}
trap cleanup EXIT

configs=(stock jitprof rate0)
declare -A port conf
port[stock]=$PG_PORT
port[jitprof]=$((PG_PORT + 1))
port[rate0]=$((PG_PORT + 2))
conf[stock]="jit_provider = 'llvmjit'"
conf[jitprof]="shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'"
conf[rate0]="${conf[jitprof]}
jitprof.sample_rate = 0"

for c in "${configs[@]}"; do
	init_cluster "$work/$c" "${port[$c]}" "$work" "shared_buffers = 256MB
max_connections = 20
${conf[$c]}"
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/$c" -l "$work/$c.log" -w start >/dev/null
	as_pg_user "$PG_BINDIR"/pgbench -q -i -s "$scale" -h "$work" -p "${port[$c]}" postgres >/dev/null 2>&1
done

# tps of one pgbench run
run() {
	local c=$1 workload=$2 args
	case $workload in
		prepared) args="-S -M prepared -c 1" ;;
		connect) args="-S -C -c 1" ;;
	esac
	as_pg_user "$PG_BINDIR"/pgbench -n $args -T "$seconds" -h "$work" -p "${port[$c]}" postgres 2>&1 |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

workloads=(prepared connect)
declare -A tps ratios
echo "pgbench -S, scale $scale, $rounds rounds x ${seconds}s per cluster and workload"
for r in $(seq 1 "$rounds"); do
	for w in "${workloads[@]}"; do
		declare -A this=()
		for k in 0 1 2; do
			c=${configs[$(((r + k) % 3))]}
			this[$c]=$(run "$c" "$w")
			tps[$w.$c]+="${this[$c]} "
		done
		for c in jitprof rate0; do
			ratios[$w.$c]+="$(awk -v a="${this[$c]}" -v b="${this[stock]}" 'BEGIN {printf "%.4f", a / b}') "
		done
		echo "round $r $w: stock ${this[stock]}  jitprof ${this[jitprof]}  rate0 ${this[rate0]}"
		unset this
	done
done

echo
printf "%-9s %12s %12s %12s %16s %16s\n" workload "stock tps" "jitprof tps" "rate0 tps" "jitprof/stock" "rate0/stock"
for w in "${workloads[@]}"; do
	printf "%-9s %12s %12s %12s %16s %16s\n" "$w" \
		"$(echo "${tps[$w.stock]}" | tr ' ' '\n' | grep . | median)" \
		"$(echo "${tps[$w.jitprof]}" | tr ' ' '\n' | grep . | median)" \
		"$(echo "${tps[$w.rate0]}" | tr ' ' '\n' | grep . | median)" \
		"$(echo "${ratios[$w.jitprof]}" | tr ' ' '\n' | grep . | median)" \
		"$(echo "${ratios[$w.rate0]}" | tr ' ' '\n' | grep . | median)"
done
echo "(ratios: median over rounds of the per-round ratio; targets prepared >= 0.99, connect >= 0.98)"
