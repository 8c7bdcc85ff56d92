#!/bin/bash
# Emission benchmark: the same JIT-compiled workload (the TPC-H-style
# queries of test/corpus on its generated data, JIT forced with inlining
# and optimization) under stock llvmjit, jitprof with JITLink and jitprof
# with RuntimeDyld, side by side in one run.  One throwaway cluster is
# restarted between configurations, and the rounds are interleaved (the
# order rotates every round) so that machine noise hits all three alike.
#
#   bench/emission.sh [ROUNDS] [--noopt]
#
# Prints, per configuration, the medians of EXPLAIN ANALYZE's JIT emission
# time, total JIT time and execution time, with ratios against stock.
# Run as root (builds and installs like tools/test.sh) or as postgres;
# JITPROF_PGTREE and JITPROF_PORT select a private tree and port as for the
# tests.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh

build_and_install

work=$(make_workdir bench)
cleanup() {
	as_pg_user "$PG_BINDIR/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

as_pg_user "$PG_BINDIR/initdb" -D "$work/data" -A trust >/dev/null
cat >>"$work/data/postgresql.conf" <<CONF
port = $PG_PORT
listen_addresses = ''
unix_socket_directories = '$work'
jit = on
jit_above_cost = 0
jit_inline_above_cost = 0
jit_optimize_above_cost = 0
max_parallel_workers_per_gather = 0
compute_query_id = on
CONF

as_pg_user env PATH="$PG_BINDIR:$PATH" PGHOST="$work" PGPORT="$PG_PORT" \
	perl "$work/bench/emission.pl" "$work/data" "$work/test/corpus" "$@"
