#!/bin/bash
# Per-connection cost of preloading jitprof, measured on ONE cluster: the
# same data directory is started in turn as stock PostgreSQL (no preload,
# jit_provider = llvmjit), with this checkout's jitprof, and (optionally)
# with another jitprof build, and each time pgbench opens COUNT
# connections, one select-only transaction each (-S -C).  Separate
# clusters carry a bias of their own (bench/oltp_before_after.sh run with
# the same build on both sides differed by 2%); one data directory has
# none.  Per run: tps and the CPU time of the postmaster's reaped children
# (the backends: fork, start-up, the statement, exit) per connection.
# Prints the medians over ROUNDS rounds (configurations rotating) and the
# ratios to stock.
#
#   [BEFORE_PGTREE=/work/pgtree-old] bench/connect_one_cluster.sh [ROUNDS [COUNT]]
#
# COUNT is the connections per run (default 1000).
#
# WORKLOAD=prepared measures the per-statement cost on the same one data
# directory instead: one connection runs COUNT select-only transactions
# (pgbench -S -M prepared; COUNT defaults to 100000), and the CPU is per
# transaction.  It is bench/oltp.sh's prepared workload without the bias
# of separate clusters.  QUERY_ID=1 adds a configuration "qid": stock with
# compute_query_id = on, which jitprof turns on (EnableQueryId), to tell
# that cost from jitprof's own.
#
# BEFORE_PGTREE: an installation tree of another build, e.g. made with
#   git worktree add /tmp/jitprof-old <commit>
#   (cd /tmp/jitprof-old && JITPROF_PGTREE=/work/pgtree-old bash -c '. tools/common.sh && build_and_install')
# Its jitprof.so is preloaded from a directory of its own (by path), on the
# same server binaries, so that only the library differs.  The workload
# never JIT-compiles, so neither jit_provider nor jitprof_llvm.so is ever
# loaded.
#
# Run as root, like tools/test.sh; JITPROF_PGTREE and JITPROF_PORT are
# honoured.
set -euo pipefail

rounds=${1:-6}
case ${WORKLOAD:-connect} in
connect)
	count=${2:-1000}
	pgbench_args=(-S -C)
	unit=connection
	;;
prepared)
	count=${2:-100000}
	pgbench_args=(-S -M prepared)
	unit=transaction
	;;
*)
	echo "bench/connect_one_cluster.sh: WORKLOAD must be connect or prepared, not \"$WORKLOAD\"" >&2
	exit 2
	;;
esac

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir bench-connect)
data=$work/data
libdir=$(pg_config --pkglibdir)
cleanup() {
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

configs=(stock jitprof)
declare -A opts
opts[stock]="-c shared_preload_libraries= -c jit_provider=llvmjit"
opts[jitprof]="-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.save=off"
if [ -n "${QUERY_ID:-}" ]; then
	configs+=(qid)
	opts[qid]="${opts[stock]} -c compute_query_id=on"
fi
if [ -n "${BEFORE_PGTREE:-}" ]; then
	# the other build's libraries, in a directory of their own
	mkdir -p "$work/before"
	cp "$BEFORE_PGTREE$libdir"/jitprof.so "$work/before/"
	chmod -R a+rX "$work"
	configs+=(before)
	opts[before]="-c shared_preload_libraries=$work/before/jitprof.so -c jit_provider=jitprof -c jitprof.save=off"
fi

init_cluster "$data" "$PG_PORT" "$work" ""
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$work/log" -o "${opts[stock]}" -w start >/dev/null
as_pg_user "$PG_BINDIR"/pgbench -q -i -s 1 -h "$work" -p "$PG_PORT" postgres >/dev/null 2>&1
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast stop >/dev/null

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
declare -A tps cpu
n=${#configs[@]}
echo "pgbench ${pgbench_args[*]} -c 1, $count ${unit}s per run, $rounds rounds, one data directory"
for r in $(seq 1 "$rounds"); do
	line="round $r:"
	for k in $(seq 0 $((n - 1))); do
		c=${configs[$(((r + k) % n))]}
		as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$work/log" -o "${opts[$c]}" -w start >/dev/null
		pm=$(head -1 "$data/postmaster.pid")
		before=$(awk '{print $16 + $17}' "/proc/$pm/stat")
		out=$(as_pg_user "$PG_BINDIR"/pgbench -n "${pgbench_args[@]}" -c 1 -t "$count" -h "$work" -p "$PG_PORT" postgres 2>&1)
		sleep 0.5
		after=$(awk '{print $16 + $17}' "/proc/$pm/stat")
		as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast stop >/dev/null
		t=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
		u=$(awk -v d=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$count" \
			'BEGIN {printf "%.1f", d * 1000000 / hz / n}')
		tps[$c]+="$t "
		cpu[$c]+="$u "
		line+="  $c $t tps $u us"
	done
	echo "$line"
done

echo
echo "medians over $rounds rounds (cpu: backends' CPU time per $unit)"
printf "%-8s %10s %12s %12s %12s\n" config tps "cpu us" "tps/stock" "perCPU/stock"
st=$(echo "${tps[stock]}" | tr ' ' '\n' | grep . | median)
sc=$(echo "${cpu[stock]}" | tr ' ' '\n' | grep . | median)
for c in "${configs[@]}"; do
	mt=$(echo "${tps[$c]}" | tr ' ' '\n' | grep . | median)
	mc=$(echo "${cpu[$c]}" | tr ' ' '\n' | grep . | median)
	printf "%-8s %10.1f %12.1f %12.3f %12.3f\n" "$c" "$mt" "$mc" \
		"$(awk -v a="$mt" -v b="$st" 'BEGIN {print a / b}')" \
		"$(awk -v a="$sc" -v b="$mc" 'BEGIN {print a / b}')"
done
echo "(CPU per $unit is measured in clock ticks of 10 ms summed over all"
echo " ${unit}s of a run, so a run of 1,000 resolves 10 us, of 100,000 0.1 us;"
echo " ratios are jitprof / stock, higher is better: tps/stock of tps, perCPU/stock"
echo " of ${unit}s per CPU second, i.e. stock CPU per $unit / jitprof's)"
