#!/bin/bash
# Would compiling on a thread of its own pay (issue 33's stretch goal,
# doc/tiering.md "A compile thread")?  Measured before building it: how
# much of a tiered query's time is the LLVM work such a thread would take
# off the backend (optimisation and emission; inlining too, which reads
# bitcode files, is left to the backend here), against the query's time.
#
# The TPC-H-style queries of test/corpus/tpch.sql on the corpus data,
# lineitem made SCALE times larger (as bench/tiering.sh), each run with
# PostgreSQL's settings and jitprof.tiering = on: once to warm up, then
# EXPLAIN (ANALYZE, FORMAT JSON) ROUNDS times; the medians of its execution
# time and of its JIT timings are printed per query, with the share of the
# execution time a compile thread could overlap, and the sums.
#
#   bench/tiering_thread.sh [ROUNDS [SCALE]]
#
# Run as root (builds and installs like tools/test.sh); JITPROF_PGTREE and
# JITPROF_PORT select a private tree and port.
set -euo pipefail

rounds=${1:-3}
scale=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
command -v jq >/dev/null || apt-get install -y -qq jq >/dev/null
build_and_install >/dev/null

start_bench_cluster bench-tiering-thread "$BENCH_JITPROF_CONF
shared_buffers = 256MB
autovacuum = off"
{
	corpus_sql "$scale"
	echo "CREATE EXTENSION jitprof;"
} | psql_q >/dev/null
psql_q -c "VACUUM ANALYZE" >/dev/null

# one statement per line, with its "-- Qn" label before it
corpus_statements >"$work/queries.tsv"

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

echo "# bench/tiering_thread.sh $rounds $scale, commit $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%F), PostgreSQL $("$PG_BINDIR"/postgres -V | awk '{ print $3 }')"
echo "# tiered (PostgreSQL's settings, jitprof.tiering = on): medians of $rounds EXPLAIN ANALYZE runs, ms"
printf '%-10s %10s %10s %10s %10s %10s %10s %8s\n' query execution functions generation inlining optimise emission thread%
sum_exec=0
sum_thread=0
while IFS=$'\t' read -r label sql; do
	psql_q -c "SET jitprof.tiering = on" -c "$sql" >/dev/null
	declare -A v=()
	for key in exec functions gen inl opt emit; do v[$key]=""; done
	for ((r = 0; r < rounds; r++)); do
		json=$(psql_q -c "SET jitprof.tiering = on" -c "EXPLAIN (ANALYZE, FORMAT JSON) $sql")
		v[exec]+="$(jq '.[0]["Execution Time"]' <<<"$json") "
		v[functions]+="$(jq '.[0].JIT.Functions // 0' <<<"$json") "
		v[gen]+="$(jq '(.[0].JIT.Timing.Generation | if type == "object" then .Total else . end) // 0' <<<"$json") "
		v[inl]+="$(jq '.[0].JIT.Timing.Inlining // 0' <<<"$json") "
		v[opt]+="$(jq '.[0].JIT.Timing.Optimization // 0' <<<"$json") "
		v[emit]+="$(jq '.[0].JIT.Timing.Emission // 0' <<<"$json") "
	done
	for key in exec functions gen inl opt emit; do
		v[$key]=$(tr ' ' '\n' <<<"${v[$key]}" | grep . | median)
	done
	thread=$(echo "${v[opt]} + ${v[emit]}" | bc -l)
	printf '%-10s %10.2f %10.0f %10.2f %10.2f %10.2f %10.2f %8.1f\n' "$label" "${v[exec]}" "${v[functions]}" \
		"${v[gen]}" "${v[inl]}" "${v[opt]}" "${v[emit]}" "$(echo "100 * $thread / ${v[exec]}" | bc -l)"
	sum_exec=$(echo "$sum_exec + ${v[exec]}" | bc -l)
	sum_thread=$(echo "$sum_thread + $thread" | bc -l)
done <"$work/queries.tsv"
printf '%-10s %10.2f %54s %8.1f\n' all "$sum_exec" "" "$(echo "100 * $sum_thread / $sum_exec" | bc -l)"
echo "(thread%: optimisation and emission, the work a compile thread would run, as a share of the execution time)"
