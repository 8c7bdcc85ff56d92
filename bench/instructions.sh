#!/bin/bash
# Instructions per transaction, or per connection, jitprof ÷ stock, counted
# by callgrind: a count, not a time, so it does not move with the machine's
# load the way tps and CPU time do (bench/connect_one_cluster.sh resolves
# about ±1 point per run of 15 rounds on this 2-core host, and its
# connection rounds differ by up to 40%).
#
# One data directory is started in turn under valgrind --tool=callgrind in
# each configuration:
#
#   stock     no preload, jit_provider = llvmjit
#   jitprof   shared_preload_libraries = jitprof, jit_provider = jitprof,
#             jitprof.save = off
#   qid       stock with compute_query_id = on, which jitprof turns on
#
# Callgrind counts only inside PostgresMain, so every backend's count is its
# own (a forked process otherwise starts with its parent's), and each run
# ends with pgbench, one client:
#
#   WORKLOAD=select   (default) pgbench -S -M prepared, one connection
#   WORKLOAD=tpcb     the TPC-B-like script, -M prepared: three UPDATEs, a
#                     SELECT, an INSERT, BEGIN and END
#   WORKLOAD=connect  pgbench -S -C: a new connection per transaction
#
# running SHORT, then (in a second start) LONG transactions.  The count per
# transaction is (I(LONG) - I(SHORT)) / (LONG - SHORT), where I is the
# busiest backend's count (select, tpcb: the backend that ran the
# transactions; pgbench's short set-up connection is left out) or the sum
# over all backends (connect: fork to exit of each connection, less the
# postmaster's side).  That leaves out what does not grow with the count:
# the start-up and exit of the one backend, the set-up connection.  With
# FUNCTIONS=1 (select and tpcb: one backend runs them all) it also prints
# the functions whose own counts differ most between jitprof and stock, per
# transaction.
#
# The count is exact for a binary and workload, up to PostgreSQL's timed
# work, such as statistics flushes at most once a second, which runs more
# often per transaction when valgrind runs slower: on a quiet machine,
# repeated runs of select agree within about 20 instructions of 43,600;
# under load they moved by up to 90.  tpcb's count (about 313,000) moves by
# about 1,000 (WAL and its flushes), which is as much as jitprof's own cost.
#
#   [WORKLOAD=select|tpcb|connect] [JITPROF_OPTS="-c name=value ..."]
#     [STOCK_OPTS="-c name=value ..."] bench/instructions.sh [SHORT [LONG]]
#
# JITPROF_OPTS adds server options to the jitprof configuration only (for
# example -c jitprof.tiering=off), STOCK_OPTS to stock and qid only (for
# example -c jit=off, against JITPROF_OPTS="-c jit_above_cost=0": tiered
# JIT forced on every statement, against no JIT at all).
#
# SHORT and LONG default to 2000 and 12000 (connect: 100 and 400).  Run as
# root; JITPROF_PGTREE and JITPROF_PORT are honoured.  About 2 minutes per
# 10,000 select transactions and configuration.
set -euo pipefail

case ${WORKLOAD:-select} in
select) pgbench_args=(-S -M prepared) short=${1:-2000} long=${2:-12000} ;;
tpcb) pgbench_args=(-M prepared) short=${1:-2000} long=${2:-12000} ;;
connect) pgbench_args=(-S -C) short=${1:-100} long=${2:-400} ;;
*)
	echo "bench/instructions.sh: WORKLOAD must be select, tpcb or connect, not \"$WORKLOAD\"" >&2
	exit 2
	;;
esac
if ! [[ "$short" =~ ^[0-9]+$ && "$long" =~ ^[0-9]+$ ]] || [ "$long" -le "$short" ]; then
	echo "bench/instructions.sh: SHORT and LONG must be whole numbers, SHORT < LONG" >&2
	exit 2
fi
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
opts[stock]="-c shared_preload_libraries= -c jit_provider=llvmjit ${STOCK_OPTS:-}"
opts[jitprof]="-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.save=off ${JITPROF_OPTS:-}"
opts[qid]="${opts[stock]} -c compute_query_id=on"

init_cluster "$data" "$PG_PORT" "$work" "autovacuum = off"
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$work/log" -o "${opts[stock]}" -w start >/dev/null
as_pg_user "$PG_BINDIR"/pgbench -q -i -s 1 -h "$work" -p "$PG_PORT" postgres >/dev/null 2>&1
as_pg_user "$PG_BINDIR"/psql -X -q -h "$work" -p "$PG_PORT" -c "VACUUM ANALYZE" postgres
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast stop >/dev/null

total() { sed -n 's/^summary: *//p; s/^totals: *//p' "$1" | head -n 1; }

# run CONFIG COUNT: the instructions counted for COUNT transactions, and
# the callgrind file of the busiest backend
run() {
	local c=$1 n=$2 out=$work/cg-$1-$2 f best most
	mkdir -p "$out"
	chown "$PG_OS_USER" "$out"
	# shellcheck disable=SC2086
	as_pg_user valgrind --tool=callgrind --trace-children=no \
		--collect-atstart=no --toggle-collect=PostgresMain \
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
	# of the processes that ran PostgresMain: the busiest, or all of them
	best= most=0 sum=0
	for f in $(grep -l PostgresMain "$out"/cg.*); do
		n=$(total "$f")
		sum=$((sum + n))
		if [ "$n" -gt "$most" ]; then
			best=$f most=$n
		fi
	done
	if [ -z "$best" ]; then
		echo "bench/instructions.sh: no backend profile in $out" >&2
		exit 1
	fi
	if [ "${WORKLOAD:-select}" = connect ]; then
		echo "$sum $best"
	else
		echo "$most $best"
	fi
}

declare -A per_tx file_short file_long
echo "pgbench ${pgbench_args[*]} -c 1: instructions per transaction in PostgresMain, ($long - $short) transactions${JITPROF_OPTS:+; jitprof with $JITPROF_OPTS}${STOCK_OPTS:+; stock with $STOCK_OPTS}"
for c in "${configs[@]}"; do
	out=$(run "$c" "$short")
	read -r is fs <<<"$out"
	out=$(run "$c" "$long")
	read -r il fl <<<"$out"
	per_tx[$c]=$(awk -v a="$il" -v b="$is" -v n=$((long - short)) 'BEGIN {printf "%.0f", (a - b) / n}')
	file_short[$c]=$fs
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
echo " statistics flushes, which runs a few more or fewer times per run: see"
echo " the header for the spread measured)"

if [ -n "${FUNCTIONS:-}" ] && [ "${WORKLOAD:-select}" = connect ]; then
	echo
	echo "FUNCTIONS: not with WORKLOAD=connect, where every transaction has a backend of its own"
elif [ -n "${FUNCTIONS:-}" ]; then
	echo
	echo "own instructions per transaction, jitprof - stock, of the functions that differ by 5 or more:"
	# "COUNT (PCT)  FILE:FUNCTION [OBJECT]" rows of callgrind_annotate
	self_counts() {
		callgrind_annotate --auto=no --threshold=100 "$1" 2>/dev/null |
			sed -nE 's/^ *([0-9,]+) +\([^)]*\) +([^ ]*:)?([^ :]+)( \[.*\])?$/\3 \1/p' |
			tr -d , | awk '{n[$1] += $2} END {for (f in n) print f, n[f]}'
	}
	for c in stock jitprof; do
		join -a 1 -a 2 -e 0 -o 0,1.2,2.2 <(self_counts "${file_short[$c]}" | sort) \
			<(self_counts "${file_long[$c]}" | sort) |
			awk '{print $1, $3 - $2}' | sort >"$work/fn-$c"
	done
	join -a 1 -a 2 -e 0 -o 0,1.2,2.2 "$work/fn-stock" "$work/fn-jitprof" |
		awk -v n=$((long - short)) '{d = ($3 - $2) / n; if (d >= 5 || d <= -5) printf "%10.1f  %s\n", d, $1}' |
		sort -rn
fi
