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
# changing load hits each alike.  Per run it takes pgbench's tps and the
# CPU time the cluster spent per transaction (postmaster plus its reaped
# children, from /proc/<postmaster>/stat: fork, start-up, work and exit of
# every backend; pgbench's own CPU is not counted).  On a busy machine tps
# swings with other processes' load, while CPU per transaction mostly does
# not, so both are printed: per workload, the median over rounds of the
# per-round ratio to stock.  Targets: prepared >= 0.99, connect >= 0.98.
#
#   bench/oltp.sh [ROUNDS [SECONDS [SCALE]]]     default 5 rounds of 10 s, scale 10
#
# EXTRA_CONF adds settings to both jitprof clusters, e.g.
# EXTRA_CONF="jitprof.jit_advisor = enforce" for the advisor's cost.
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
jit_provider = 'jitprof'
${EXTRA_CONF:-}"
conf[rate0]="${conf[jitprof]}
jitprof.sample_rate = 0"

for c in "${configs[@]}"; do
	init_cluster "$work/$c" "${port[$c]}" "$work" "shared_buffers = 256MB
max_connections = 20
${conf[$c]}"
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/$c" -l "$work/$c.log" -w start >/dev/null
	as_pg_user "$PG_BINDIR"/pgbench -q -i -s "$scale" -h "$work" -p "${port[$c]}" postgres >/dev/null 2>&1
done

# CPU time (ms) the cluster has used so far: the postmaster's own and that
# of its children it has reaped, which includes every backend that has
# exited (fork, start-up, work and exit of each connection).  Long-lived
# auxiliary processes are not counted; they do the same in every cluster.
cluster_cpu_ms() {
	local pid ticks
	pid=$(head -1 "$work/$1/postmaster.pid")
	ticks=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat")
	echo $((ticks * 1000 / $(getconf CLK_TCK)))
}

# One pgbench run: prints its tps and the cluster's CPU time per
# transaction (us), once the backends it used have exited.
run() {
	local c=$1 workload=$2 args out before after n
	case $workload in
		prepared) args="-S -M prepared -c 1" ;;
		connect) args="-S -C -c 1" ;;
	esac
	before=$(cluster_cpu_ms "$c")
	out=$(as_pg_user "$PG_BINDIR"/pgbench -n $args -T "$seconds" -h "$work" -p "${port[$c]}" postgres 2>&1)
	while [ "$(as_pg_user "$PG_BINDIR"/psql -X -At -h "$work" -p "${port[$c]}" -d postgres \
		-c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" != 0 ]; do
		sleep 0.1
	done
	sleep 0.2
	after=$(cluster_cpu_ms "$c")
	n=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	echo "$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p') $(awk -v d=$((after - before)) -v n="$n" 'BEGIN {printf "%.1f", d * 1000 / n}')"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

workloads=(prepared connect)
declare -A tps cpu ratios cpu_ratios
echo "pgbench -S, scale $scale, $rounds rounds x ${seconds}s per cluster and workload"
echo "(per run: tps, and the cluster's CPU time per transaction in us)"
for r in $(seq 1 "$rounds"); do
	for w in "${workloads[@]}"; do
		declare -A t=() u=()
		for k in 0 1 2; do
			c=${configs[$(((r + k) % 3))]}
			read -r t[$c] u[$c] < <(run "$c" "$w")
			tps[$w.$c]+="${t[$c]} "
			cpu[$w.$c]+="${u[$c]} "
		done
		for c in jitprof rate0; do
			ratios[$w.$c]+="$(awk -v a="${t[$c]}" -v b="${t[stock]}" 'BEGIN {printf "%.4f", a / b}') "
			cpu_ratios[$w.$c]+="$(awk -v a="${u[$c]}" -v b="${u[stock]}" 'BEGIN {printf "%.4f", b / a}') "
		done
		echo "round $r $w: stock ${t[stock]} tps ${u[stock]} us  jitprof ${t[jitprof]} tps ${u[jitprof]} us  rate0 ${t[rate0]} tps ${u[rate0]} us"
		unset t u
	done
done

med() { echo "$1" | tr ' ' '\n' | grep . | median; }

echo
echo "medians over $rounds rounds"
printf "%-9s %10s %10s %10s %14s %12s\n" workload "" stock jitprof "jitprof/stock" "rate0/stock"
for w in "${workloads[@]}"; do
	printf "%-9s %10s %10.0f %10.0f %14.3f %12.3f\n" "$w" tps \
		"$(med "${tps[$w.stock]}")" "$(med "${tps[$w.jitprof]}")" \
		"$(med "${ratios[$w.jitprof]}")" "$(med "${ratios[$w.rate0]}")"
	printf "%-9s %10s %10.1f %10.1f %14.3f %12.3f\n" "" "cpu us/tx" \
		"$(med "${cpu[$w.stock]}")" "$(med "${cpu[$w.jitprof]}")" \
		"$(med "${cpu_ratios[$w.jitprof]}")" "$(med "${cpu_ratios[$w.rate0]}")"
done
echo "(ratios: median of the per-round ratios; tps ratio = jitprof tps / stock tps,"
echo " cpu ratio = stock CPU per transaction / jitprof's, i.e. throughput per CPU;"
echo " targets: prepared >= 0.99, connect >= 0.98)"
