#!/bin/bash
# Where tiering's rule switches the TPC-H-style queries (doc/tiering.md): on
# one throwaway cluster with jitprof as jit_provider, lineitem SCALE times
# larger (as bench/tiering.sh loads it), each query of test/corpus/tpch.sql
# runs once, tiered at PostgreSQL's settings, and the rule's DEBUG1 lines
# are printed: how many rounds, and the first round's counts (steps, work,
# gain, what it compiled).  Counts, not times, so that two commits can be
# compared on a loaded machine, where bench/tiering.sh's times are noisy.
#
#   bench/tiering_switches.sh [SCALE]
#
# Run as root (builds and installs like tools/test.sh); JITPROF_PGTREE and
# JITPROF_PORT select a private tree and port.
set -euo pipefail

scale=${1:-20}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

start_bench_cluster bench-tiering-switches "$BENCH_JITPROF_CONF
shared_buffers = 256MB
autovacuum = off"

{
	corpus_sql "$scale"
	echo "VACUUM ANALYZE;"
} >"$work/load.sql"
psql_q -f "$work/load.sql" >/dev/null
corpus_statements >"$work/statements.tsv"

bench_banner "$scale"
while IFS=$'\t' read -r label sql; do
	out=$(psql_q -c "SET jitprof.tiering = on" -c "SET client_min_messages = debug1" -c "$sql" 2>&1 >/dev/null |
		sed -n 's/.*jitprof tiering rule: //p')
	n=$(printf '%s' "$out" | grep -c . || true)
	printf '%-9s rounds %s  %s\n' "$label" "$n" "$(printf '%s' "$out" | head -1)"
done <"$work/statements.tsv"
