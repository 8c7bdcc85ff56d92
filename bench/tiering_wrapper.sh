#!/bin/bash
# What tiering's counting wrapper costs on expressions that never switch
# (doc/tiering.md, "Benchmark"), in instructions per row counted by
# callgrind: a count, not a time (CPU time per statement moved by up to 30%
# between runs on this 2-core VM, far more than the 1% to be resolved).
#
#   off      jit = off: the interpreter, no wrapper
#   counted  jit_above_cost = 0, jitprof.tiering = on and a forced switch
#            point (jitprof.tiering_threshold) no query reaches: every
#            expression runs interpreted, through the counting wrapper; the
#            sampler off (its cost is bench/sampler.sh's)
#
# Each query runs in a single-user backend (postgres --single) under
# valgrind --tool=callgrind, counting inside PostgresMain, once on a table
# of SHORT rows and once on one of LONG rows; instructions per row are
# (I(LONG) - I(SHORT)) / (LONG - SHORT), which leaves out start-up, the
# provider's loading and planning.  The queries: a count (the aggregate's
# transition, one evaluation per row), a one-column qual (two), a sum of
# a + b (one, with more steps), and a qual of 41 additions (87 steps).
#
#   bench/tiering_wrapper.sh [SHORT [LONG]]
#
# SHORT and LONG default to 100000 and 300000.  Run as root (builds and
# installs like tools/test.sh); JITPROF_PGTREE and JITPROF_PORT select a
# private tree and port.  About 3 minutes.
set -euo pipefail

short=${1:-100000}
long=${2:-300000}
if ! [[ "$short" =~ ^[0-9]+$ && "$long" =~ ^[0-9]+$ ]] || [ "$long" -le "$short" ]; then
	echo "bench/tiering_wrapper.sh: SHORT and LONG must be whole numbers, SHORT < LONG" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
build_and_install >/dev/null

start_bench_cluster bench-tiering-wrapper "shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
compute_query_id = on
max_parallel_workers_per_gather = 0
autovacuum = off
jitprof.save = off"
psql_q >/dev/null <<EOF
SET jit = off;
CREATE EXTENSION jitprof;
CREATE TABLE t_short AS SELECT (g % 1000)::int AS a, g AS b FROM generate_series(1, $short) g;
CREATE TABLE t_long AS SELECT (g % 1000)::int AS a, g AS b FROM generate_series(1, $long) g;
VACUUM ANALYZE;
EOF
as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -w stop >/dev/null

wide=$(perl -e 'print join(" + ", ("a") x 41), " > 0"')
declare -A sql cfg
sql[count]="SELECT count(*) FROM TABLE"
sql[qual]="SELECT count(*) FROM TABLE WHERE a > 500"
sql[sum]="SELECT sum(a + b) FROM TABLE"
sql[wide]="SELECT count(*) FROM TABLE WHERE $wide"
queries=(count qual sum wide)
cfg[off]="SET jit = off;"
cfg[counted]="SET jit_above_cost = 0; SET jitprof.tiering = on; SET jitprof.tiering_threshold = 2000000000; SET jitprof.sample_rate = 0;"

# the counted configuration defers and never switches: checked once
check=$(count_instructions "${cfg[counted]}" "${sql[wide]//TABLE/t_long};" \
	"SELECT name, value FROM jitprof_status WHERE name IN ('tiering_queries', 'tiering_switches', 'tiering_expressions_never_compiled');" >/dev/null
	grep -o 'value = "[0-9]*"' "$work/single.log" | tr -dc '0-9 \n' | tr '\n' ' ')
read -r tiered switches never <<<"$check"
if [ "${tiered:-0}" -lt 1 ] || [ "${switches:-1}" -ne 0 ] || [ "${never:-0}" -lt 1 ]; then
	echo "bench/tiering_wrapper.sh: the counted run did not defer without switching (tiering_queries, switches, never compiled: $tiered $switches $never)" >&2
	exit 1
fi

bench_banner "$short" "$long"
echo "# instructions per row, (I($long rows) - I($short rows)) / $((long - short)), callgrind inside PostgresMain"
printf '%-6s %12s %12s %14s %9s\n' query off counted "added per row" ratio
for q in "${queries[@]}"; do
	declare -A per_row=()
	for c in off counted; do
		i_short=$(count_instructions "${cfg[$c]}" "${sql[$q]//TABLE/t_short};")
		i_long=$(count_instructions "${cfg[$c]}" "${sql[$q]//TABLE/t_long};")
		per_row[$c]=$(echo "($i_long - $i_short) / ($long - $short)" | bc -l)
	done
	printf '%-6s %12.1f %12.1f %14.1f %9.4f\n' "$q" "${per_row[off]}" "${per_row[counted]}" \
		"$(echo "${per_row[counted]} - ${per_row[off]}" | bc -l)" \
		"$(echo "${per_row[counted]} / ${per_row[off]}" | bc -l)"
done
