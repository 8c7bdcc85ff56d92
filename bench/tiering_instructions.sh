#!/bin/bash
# What tiered JIT costs a TPC-H-style query that does not switch, in
# instructions counted by callgrind against jit = off (doc/tiering.md,
# "Benchmark"): CPU time per 50 ms statement spreads by several percent
# between runs on this 2-core host, more than the cost to be resolved.
#
#   off      jit = off
#   tiered   jitprof.tiering = on at PostgreSQL's JIT settings, the rule
#            deciding; jitprof.sample_rate = SAMPLE_RATE (0 by default,
#            because a CPU-time timer fires far more often per unit of work
#            under valgrind, which runs the backend about 50 times slower;
#            the sampler's own cost is bench/sampler.sh's).  With 0, a
#            tiered query never rests (doc/tiering.md, "Resting"); 2 under
#            valgrind rests about as often per unit of work as the default
#            99 does natively; TIERED_SETTINGS, SQL run after those (say
#            "SET jitprof.tiering_rest = off;")
#
# The corpus (test/corpus/schema.sql) is loaded with lineitem SCALE times
# larger, the server stopped, and each query then runs RUNS times in a
# single-user backend (postgres --single) under valgrind --tool=callgrind,
# counting inside PostgresMain: the count includes parsing, planning and
# the executor's start-up, as a client's statement does.  The tiered run
# also reads jitprof_status.tiering_switches, so that a query that switched
# is marked (its count then includes compiling).
#
#   [QUERIES="Q3 Q10 ..."] [SAMPLE_RATE=n] [TIERED_SETTINGS=sql] bench/tiering_instructions.sh [SCALE [RUNS]]
#
# SCALE defaults to 2 and RUNS to 3; QUERIES to the labels of
# test/corpus/tpch.sql that take under 100 ms at bench/tiering.sh's scale
# (20).  Run as root (builds and installs like tools/test.sh);
# JITPROF_PGTREE and JITPROF_PORT select a private tree and port.  About 3
# minutes.
set -euo pipefail

scale=${1:-2}
runs=${2:-3}
queries=${QUERIES:-Q3 Q4 Q5 Q6 Q7 Q10 Q12 Q13 Q14 Q15-like Q16-like Q19 Q22-like}
sample_rate=${SAMPLE_RATE:-0}
tiered_settings=${TIERED_SETTINGS:-}
if ! [[ "$scale" =~ ^[1-9][0-9]*$ && "$runs" =~ ^[1-9][0-9]*$ && "$sample_rate" =~ ^[0-9]+$ ]]; then
	echo "bench/tiering_instructions.sh: SCALE and RUNS must be whole numbers above 0, SAMPLE_RATE a whole number" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
build_and_install >/dev/null

start_bench_cluster bench-tiering-instructions "$BENCH_JITPROF_CONF
autovacuum = off
jitprof.save = off"
{
	corpus_sql "$scale"
	echo "VACUUM ANALYZE;"
	echo "CREATE EXTENSION jitprof;"
} >"$work/load.sql"
psql_q -f "$work/load.sql" >/dev/null
corpus_statements >"$work/statements.tsv"
as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -w stop >/dev/null

bench_banner "$scale" "$runs"
echo "# instructions inside PostgresMain, $runs executions of each query in a single-user backend, lineitem x $scale, tiered at jitprof.sample_rate = $sample_rate $tiered_settings"
printf '%-10s %14s %14s %9s %8s %s\n' query off tiered ratio switches rests
ratios=()
for q in $queries; do
	sql=$(awk -F'\t' -v q="$q" '$1 == q { print $2 }' "$work/statements.tsv")
	if [ -z "$sql" ]; then
		echo "bench/tiering_instructions.sh: no query labelled $q in test/corpus/tpch.sql" >&2
		exit 2
	fi
	repeated=()
	for ((i = 0; i < runs; i++)); do repeated+=("$sql;"); done
	# both read the counters at the end (with JIT off), so that reading
	# them is not charged to tiering: the two reads cost about as many
	# instructions as a 4 ms query
	status=("SET jit = off;"
		"SELECT value FROM jitprof_status WHERE name = 'tiering_switches';"
		"SELECT value FROM jitprof_status WHERE name = 'tiering_rests';")
	off=$(count_instructions "SET jit = off;" "${repeated[@]}" "${status[@]}")
	tiered=$(count_instructions "SET jitprof.tiering = on; SET jitprof.sample_rate = $sample_rate; $tiered_settings" "${repeated[@]}" \
		"${status[@]}")
	switches=$(grep -o 'value = "[0-9]*"' "$work/single.log" | tail -2 | head -1 | tr -dc '0-9')
	rests=$(grep -o 'value = "[0-9]*"' "$work/single.log" | tail -1 | tr -dc '0-9')
	ratio=$(echo "$tiered / $off" | bc -l)
	ratios+=("$ratio")
	printf '%-10s %14d %14d %9.4f %8s %s\n' "$q" "$off" "$tiered" "$ratio" "${switches:-?}" "${rests:-?}"
done
printf '%s\n' "${ratios[@]}" | awk '{ s += log($1); n++ } END { printf "geometric mean tiered / off: %.4f over %d queries\n", exp(s / n), n }'
