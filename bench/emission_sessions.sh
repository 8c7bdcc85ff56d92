#!/bin/bash
# Emission in fresh sessions, on clusters running side by side (issue 35,
# item 3: the second of its two methods).  bench/emission.sh warms a
# session up and runs the corpus in it; here every query is the first
# JIT compilation of its own connection, which is what a short-lived
# client's query pays.
#
# Three clusters on the same data, running at once:
#
#   stock, stock_b  PostgreSQL as shipped (no preload, jit_provider =
#                   llvmjit); two of them, so that the ratio of one to the
#                   other shows the method's own spread between clusters
#   jitprof         jitprof preloaded (jit_provider = jitprof), in three
#                   session set-ups: its defaults (JITLink, perf map and
#                   gdb sinks on); JITLink with every sink off
#                   ("nosinks"); RuntimeDyld, which links as stock does
#
# Per round, for every TPC-H-style query of test/corpus/tpch.sql and every
# set-up in a random order: a new psql connection runs the query under
# EXPLAIN (ANALYZE, FORMAT JSON) with every JIT threshold at 0, and the
# plan's JIT timings are kept.  WARM=1 runs, in the same connection and
# before it, a warm-up query that JIT-compiles (as bench/emission.sh
# does), to tell the first compilation's set-up from emission proper.
#
#   [WARM=1] bench/emission_sessions.sh [ROUNDS]
#
# Prints, per set-up, the geometric mean over queries of the ratio of
# median emission (and JIT total) time to stock's, with the range of the
# per-query ratios, and each query's medians.
# Run as root (builds and installs like tools/test.sh); JITPROF_PGTREE and
# JITPROF_PORT are honoured (three ports from JITPROF_PORT on).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh

rounds=${1:-11}
commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)

build_and_install

work=$(make_workdir emission-sessions)
trap 'stop_clusters; rm -rf "$work"' EXIT

conf="jit = on
max_parallel_workers_per_gather = 0
compute_query_id = on"
ports=()
i=0
for name in stock stock_b jitprof; do
	port=$((PG_PORT + i))
	ports+=("$port")
	extra=$conf
	if [ "$name" = jitprof ]; then
		extra="$conf
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off"
	fi
	init_cluster "$work/$name" "$port" "$work" "$extra"
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/$name" -l "$work/$name.log" -w start >/dev/null
	corpus_sql 1 | as_pg_user "$PG_BINDIR"/psql -X -q -v ON_ERROR_STOP=1 \
		-h "$work" -p "$port" -d postgres >/dev/null
	as_pg_user "$PG_BINDIR"/psql -X -q -h "$work" -p "$port" -d postgres \
		-c 'VACUUM ANALYZE' >/dev/null
	i=$((i + 1))
done

as_pg_user env PATH="$PG_BINDIR:$PATH" PGHOST="$work" WARM="${WARM:-0}" \
	perl "$work/bench/emission_sessions.pl" "$work/test/corpus" "$rounds" \
	"${ports[@]}"
echo "commit $commit," \
	"PostgreSQL $("$PG_BINDIR"/postgres --version | awk '{print $3}')," \
	"warm-up ${WARM:-0}"
