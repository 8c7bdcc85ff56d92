#!/bin/bash
# The same pgbench run as bench/oltp.sh, against stock PostgreSQL and two
# jitprof builds at once: this checkout ("new") and one installed earlier in
# another private installation tree ("old"), both with jitprof preloaded as
# the provider.  Used to measure what the two-library split changed.
#
#   BEFORE_PGTREE=/work/pgtree-old bench/oltp_before_after.sh [ROUNDS [SECONDS [SCALE [PGBENCH_ARGS]]]]
#
# defaults: 5 rounds of 10 s, scale 1, "-S -C" (a connection per
# transaction).  EXTRA_CONF adds settings to both jitprof clusters (e.g.
# "jitprof.sample_rate = 0").  Build the old tree first, e.g.:
#
#   git worktree add /tmp/jitprof-old <commit>
#   (cd /tmp/jitprof-old && JITPROF_PGTREE=/work/pgtree-old bash -c '. tools/common.sh && build_and_install')
#
# Run as root, like tools/test.sh; JITPROF_PGTREE and JITPROF_PORT are
# honoured for the new build (the clusters use that port and the two after).
set -euo pipefail

rounds=${1:-5}
seconds=${2:-10}
scale=${3:-1}
pgbench_args=${4:--S -C}
: "${BEFORE_PGTREE:?set BEFORE_PGTREE to the installation tree of the old build}"

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

old_bindir=$BEFORE_PGTREE$(dirname "$(pg_config --pkglibdir)")/bin
[ -x "$old_bindir/postgres" ] || { echo "no postgres in $old_bindir" >&2; exit 1; }

work=$(make_workdir bench-before-after)
cleanup() {
	stop_clusters
	rm -rf "$work"
}
trap cleanup EXIT

configs=(stock new old)
declare -A bin port conf
bin[stock]=$PG_BINDIR
bin[new]=$PG_BINDIR
bin[old]=$old_bindir
port[stock]=$PG_PORT
port[new]=$((PG_PORT + 1))
port[old]=$((PG_PORT + 2))
conf[stock]="jit_provider = 'llvmjit'"
conf[new]="shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
${EXTRA_CONF:-}"
conf[old]=${conf[new]}

for c in "${configs[@]}"; do
	PG_BINDIR=${bin[$c]} init_cluster "$work/$c" "${port[$c]}" "$work" "${conf[$c]}"
	as_pg_user "${bin[$c]}"/pg_ctl -D "$work/$c" -l "$work/$c.log" -w start >/dev/null
	as_pg_user "${bin[$c]}"/pgbench -q -i -s "$scale" -h "$work" -p "${port[$c]}" postgres >/dev/null 2>&1
done
# stop_clusters uses one PG_BINDIR; pg_ctl of either tree stops both
cluster_cpu_ms() {
	local pid
	pid=$(head -1 "$work/$1/postmaster.pid")
	echo $(($(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat") * 1000 / $(getconf CLK_TCK)))
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
declare -A tps_ratio cpu_ratio
echo "pgbench $pgbench_args -c 1, scale $scale, $rounds rounds x ${seconds}s"
for r in $(seq 1 "$rounds"); do
	declare -A t=() u=()
	for k in 0 1 2; do
		c=${configs[$(((r + k) % 3))]}
		before=$(cluster_cpu_ms "$c")
		out=$(as_pg_user "${bin[$c]}"/pgbench -n $pgbench_args -c 1 -T "$seconds" -h "$work" -p "${port[$c]}" postgres 2>&1)
		sleep 1
		after=$(cluster_cpu_ms "$c")
		n=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
		t[$c]=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
		u[$c]=$(awk -v d=$((after - before)) -v n="$n" 'BEGIN {printf "%.1f", d * 1000 / n}')
	done
	for c in new old; do
		tps_ratio[$c]+="$(awk -v a="${t[$c]}" -v b="${t[stock]}" 'BEGIN {printf "%.4f", a / b}') "
		cpu_ratio[$c]+="$(awk -v a="${u[$c]}" -v b="${u[stock]}" 'BEGIN {printf "%.4f", b / a}') "
	done
	echo "round $r: stock ${t[stock]} tps ${u[stock]} us/tx  new ${t[new]} tps ${u[new]} us/tx  old ${t[old]} tps ${u[old]} us/tx"
	unset t u
done
for c in new old; do
	printf "%s/stock: tps ratio %.3f, cpu ratio %.3f (medians of per-round ratios)\n" "$c" \
		"$(echo "${tps_ratio[$c]}" | tr ' ' '\n' | grep . | median)" \
		"$(echo "${cpu_ratio[$c]}" | tr ' ' '\n' | grep . | median)"
done
