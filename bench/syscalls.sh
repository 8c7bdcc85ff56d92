#!/bin/bash
# System calls the sampler makes per statement: strace -f -c on the
# postmaster (so on every backend it forks) counts timer and signal-mask
# calls while one pgbench client runs select-only statements with prepared
# statements, first without JIT, then with JIT forced on every statement.
# Divide by the statement count to get calls per statement.
#
#   bench/syscalls.sh [STATEMENTS]
# Run as root (builds and installs like tools/test.sh; JITPROF_PGTREE and
# JITPROF_PORT are honoured).
set -euo pipefail

n=${1:-20000}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir syscalls)
trap 'stop_clusters; rm -rf "$work"' EXIT
init_cluster "$work/data" "$PG_PORT" "$work" "
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
compute_query_id = on"
as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -l "$work/log" -w start >/dev/null
as_pg_user "$PG_BINDIR"/pgbench -q -i -s 1 -h "$work" -p "$PG_PORT" postgres >/dev/null 2>&1
pm=$(head -1 "$work/data/postmaster.pid")

for mode in nojit jit; do
	opts=
	count=$n
	if [ $mode = jit ]; then
		opts='-c jit_above_cost=0 -c jit_inline_above_cost=-1 -c jit_optimize_above_cost=-1'
		count=$((n / 10))
	fi
	strace -f -c -e trace=timer_create,timer_settime,setitimer,rt_sigprocmask \
		-p "$pm" -o "$work/strace.$mode" 2>/dev/null &
	st=$!
	sleep 1
	as_pg_user env PGOPTIONS="$opts" "$PG_BINDIR"/pgbench -n -S -M prepared -c 1 -t "$count" \
		-h "$work" -p "$PG_PORT" postgres >/dev/null
	sleep 0.5
	kill -INT $st
	wait $st || true
	echo "== $mode: $count statements (pgbench -S -M prepared -c 1)"
	awk -v n="$count" '$NF ~ /^(timer_create|timer_settime|setitimer|rt_sigprocmask)$/ {
		printf "%-16s %8d calls  %.3f per statement\n", $NF, $4, $4 / n }' "$work/strace.$mode"
done
