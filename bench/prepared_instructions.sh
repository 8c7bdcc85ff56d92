#!/bin/bash
# Instructions per prepared select-only transaction, jitprof ÷ stock,
# counted by callgrind: a count, not a time, so it does not move with the
# machine's load the way tps and CPU time do (bench/connect_one_cluster.sh
# resolves about ±1 point per run of 15 rounds on this 2-core host).
#
# One data directory is started in turn under valgrind --tool=callgrind in
# each configuration:
#
#   stock     no preload, jit_provider = llvmjit
#   jitprof   shared_preload_libraries = jitprof, jit_provider = jitprof,
#             jitprof.save = off
#   qid       stock with compute_query_id = on, which jitprof turns on
#
# and one pgbench connection runs SHORT, then (in a second start) LONG
# transactions of pgbench -S -M prepared (WORKLOAD=select, the default) or
# of pgbench's TPC-B-like script, -M prepared (WORKLOAD=tpcb: three
# UPDATEs, a SELECT, an INSERT, BEGIN and END).  The backend's instructions per
# transaction are (I(LONG) - I(SHORT)) / (LONG - SHORT), which leaves out
# the backend's start-up and exit.  With FUNCTIONS=1 it also prints where
# jitprof's backend spends instructions that stock's does not: the
# functions whose inclusive counts differ most, per transaction.
#
#   [WORKLOAD=tpcb] bench/prepared_instructions.sh [SHORT [LONG]]     default 2000 and 12000
#
# Run as root; JITPROF_PGTREE and JITPROF_PORT are honoured.  Takes about
# 2 minutes per 10,000 transactions and configuration.
set -euo pipefail

short=${1:-2000}
long=${2:-12000}
if ! [[ "$short" =~ ^[0-9]+$ && "$long" =~ ^[0-9]+$ ]] || [ "$long" -le "$short" ]; then
	echo "bench/prepared_instructions.sh: SHORT and LONG must be whole numbers, SHORT < LONG" >&2
	exit 2
fi
case ${WORKLOAD:-select} in
select) pgbench_args=(-S -M prepared) ;;
tpcb) pgbench_args=(-M prepared) ;;
*)
	echo "bench/prepared_instructions.sh: WORKLOAD must be select or tpcb, not \"$WORKLOAD\"" >&2
	exit 2
	;;
esac
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
command -v callgrind_annotate >/dev/null || apt-get install -y -qq valgrind >/dev/null

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir bench-instructions)
data=$work/data
cleanup() {
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m immediate stop >/dev/null 2>&1 || true
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

configs=(stock jitprof qid)
declare -A opts
opts[stock]="-c shared_preload_libraries= -c jit_provider=llvmjit"
opts[jitprof]="-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.save=off"
opts[qid]="${opts[stock]} -c compute_query_id=on"

init_cluster "$data" "$PG_PORT" "$work" "autovacuum = off"
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$work/log" -o "${opts[stock]}" -w start >/dev/null
as_pg_user "$PG_BINDIR"/pgbench -q -i -s 1 -h "$work" -p "$PG_PORT" postgres >/dev/null 2>&1
as_pg_user "$PG_BINDIR"/psql -X -q -h "$work" -p "$PG_PORT" -c "VACUUM ANALYZE" postgres
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast stop >/dev/null

total() { sed -n 's/^summary: *//p; s/^totals: *//p' "$1" | head -n 1; }

# run CONFIG COUNT: the callgrind file of the backend that ran COUNT
# transactions (the one child that ran pgbench's statement)
run() {
	local c=$1 n=$2 out=$work/cg-$1-$2 f best most
	mkdir -p "$out"
	chown "$PG_OS_USER" "$out"
	# shellcheck disable=SC2086
	as_pg_user valgrind --tool=callgrind --trace-children=no \
		--callgrind-out-file="$out/cg.%p" \
		"$PG_BINDIR"/postgres -D "$data" ${opts[$1]} >"$work/log-$c-$n" 2>&1 &
	local vpid=$!
	for _ in $(seq 1 600); do
		as_pg_user "$PG_BINDIR"/pg_isready -q -h "$work" -p "$PG_PORT" && break
		sleep 0.5
	done
	as_pg_user "$PG_BINDIR"/pgbench -n "${pgbench_args[@]}" -c 1 -t "$n" -h "$work" -p "$PG_PORT" postgres >/dev/null
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast -t 600 stop >/dev/null
	wait "$vpid" || true
	# the backend that ran the transactions: of the processes that ran
	# PostgresMain (pgbench also opens a short set-up connection), the one
	# that executed the most instructions
	best= most=0
	for f in $(grep -l PostgresMain "$out"/cg.*); do
		n=$(total "$f")
		if [ "$n" -gt "$most" ]; then
			best=$f most=$n
		fi
	done
	if [ -z "$best" ]; then
		echo "bench/prepared_instructions.sh: no backend profile in $out" >&2
		exit 1
	fi
	echo "$best"
}

declare -A per_tx file_long
echo "pgbench ${pgbench_args[*]} -c 1: instructions per transaction, ($long - $short) transactions"
for c in "${configs[@]}"; do
	fs=$(run "$c" "$short")
	fl=$(run "$c" "$long")
	is=$(total "$fs")
	il=$(total "$fl")
	per_tx[$c]=$(awk -v a="$il" -v b="$is" -v n=$((long - short)) 'BEGIN {printf "%.0f", (a - b) / n}')
	file_long[$c]=$fl
	printf "%-8s %12s %12s  per transaction %s\n" "$c" "$is" "$il" "${per_tx[$c]}"
done
echo
printf "%-8s %14s %14s\n" config "instr/tx" "stock/config"
for c in "${configs[@]}"; do
	printf "%-8s %14s %14.4f\n" "$c" "${per_tx[$c]}" \
		"$(awk -v a="${per_tx[stock]}" -v b="${per_tx[$c]}" 'BEGIN {print a / b}')"
done
echo "(stock/config: higher is better, 1.0000 costs nothing; the count is exact"
echo " for a given binary and workload, up to PostgreSQL's timed work, such as"
echo " statistics flushes, which runs a few more or fewer times per run)"

if [ -n "${FUNCTIONS:-}" ]; then
	echo
	echo "functions whose inclusive instructions differ most, jitprof - stock, per transaction of the $long run:"
	for c in stock jitprof; do
		callgrind_annotate --inclusive=yes --threshold=100 "${file_long[$c]}" 2>/dev/null |
			sed -nE 's/^ *([0-9,]+) .*:([A-Za-z_][A-Za-z0-9_]*)( .*)?$/\2 \1/p' |
			tr -d , >"$work/fn-$c"
	done
	join <(sort "$work/fn-stock") <(sort "$work/fn-jitprof") -a 2 -e 0 -o 0,1.2,2.2 |
		awk -v n="$long" '{d = ($3 - $2) / n; if (d > 5 || d < -5) printf "%10.1f  %s\n", d, $1}' |
		sort -rn | head -n 30
fi
