#!/bin/bash
# What a tiered statement that does not switch pays over jit = off, in CPU
# time, taken apart (doc/tiering.md, "Benchmark"):
#
#   off       jit = off
#   counted   every expression interpreted through tiering's counting
#             wrapper at every call, never switched
#             (jitprof.tiering_threshold at its maximum), the sampler off
#             (jitprof.sample_rate = 0): the wrapper's whole cost
#   norest    tiering as shipped but with jitprof.tiering_rest = off: the
#             rule decides, every evaluation counted, the sampler on
#   tiered    tiering as shipped: the rule decides, and between two of the
#             sampler's samples the hottest expressions rest (run without
#             the wrapper)
#
# The tiered configurations run as a role the advisor has no history for
# (bench/tiering.sh's).  The statements are bench/tiering.sh's
# TPC-H-style ones on the corpus with lineitem SCALE times larger.  Within
# a round each statement runs in the four configurations back to back, in
# an order from a Williams design for four; per statement, the median over
# ROUNDS of the ratios taken within a round is kept.  CPU time is the
# backend's own (/proc/self/schedstat), read before and after the
# statement.
#
#   bench/tiering_overhead.sh [ROUNDS [SCALE]]
#
# ROUNDS defaults to 10 and SCALE to 20 (bench/tiering.sh's).  Run as root
# (builds and installs like tools/test.sh); JITPROF_PGTREE and JITPROF_PORT
# select a private tree and port.  About 15 minutes at the defaults.
set -euo pipefail

rounds=${1:-10}
scale=${2:-20}
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ && "$scale" =~ ^[1-9][0-9]*$ ]]; then
	echo "bench/tiering_overhead.sh: ROUNDS and SCALE must be whole numbers above 0" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

start_bench_cluster bench-tiering-overhead "$BENCH_JITPROF_CONF
shared_buffers = 256MB
autovacuum = off"

{
	corpus_sql "$scale"
	echo "VACUUM ANALYZE;"
	cpu_ns_sql
	echo "CREATE TABLE m (rnd int, cfg text, q text, cpu bigint, switches bigint);"
	echo "CREATE EXTENSION jitprof;"
	echo "CREATE ROLE jitprof_fresh SUPERUSER NOLOGIN;"
} >"$work/load.sql"
psql_q -f "$work/load.sql" >/dev/null
corpus_statements >"$work/statements.tsv"

declare -A cfg
cfg[off]="SET jit = off;"
cfg[counted]="SET jitprof.tiering = on; SET jitprof.tiering_threshold = 2147483647; SET jitprof.sample_rate = 0;"
cfg[norest]="SET jitprof.tiering = on; SET jitprof.tiering_rest = off; SET ROLE jitprof_fresh;"
cfg[tiered]="SET jitprof.tiering = on; SET ROLE jitprof_fresh;"
configs=(off counted norest tiered)
# a Williams design for four: each configuration follows each other one
# once over the four sequences
williams=("0 1 3 2" "1 2 0 3" "2 3 1 0" "3 0 2 1")

switches="(SELECT value::bigint FROM jitprof_status WHERE name = 'tiering_switches')"
{
	echo "SET jit_above_cost = 0; SELECT count(*) FROM pg_class; RESET ALL;"
	for ((r = 0; r < rounds; r++)); do
		s=0
		while IFS=$'\t' read -r label sql; do
			for i in ${williams[$(((r + s) % 4))]}; do
				c=${configs[$i]}
				echo "RESET ALL; RESET ROLE; ${cfg[$c]}"
				echo "SELECT $switches AS sw \\gset"
				timed_sql "$sql"
				echo "INSERT INTO m SELECT $r, '$c', '$label', :dt, $switches - :sw;"
			done
			s=$((s + 1))
		done <"$work/statements.tsv"
	done
} >"$work/run.sql"
psql_q -f "$work/run.sql" >/dev/null

bench_banner "$rounds" "$scale"
echo "# per statement: median CPU ms of off, and medians of ratios paired within a round"
psql_q -P footer=off <<'EOF'
\pset tuples_only off
\pset format aligned
SET jit = off;
CREATE TEMP VIEW r AS
  SELECT o.q,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY o.cpu) / 1e6 AS off_ms,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY c.cpu::float8 / o.cpu) AS counted_off,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY s.cpu::float8 / o.cpu) AS norest_off,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY t.cpu::float8 / s.cpu) AS tiered_norest,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY t.cpu::float8 / o.cpu) AS tiered_off,
    sum(t.switches) AS switches
  FROM m o
  JOIN m c ON c.q = o.q AND c.rnd = o.rnd AND c.cfg = 'counted'
  JOIN m s ON s.q = o.q AND s.rnd = o.rnd AND s.cfg = 'norest'
  JOIN m t ON t.q = o.q AND t.rnd = o.rnd AND t.cfg = 'tiered'
  WHERE o.cfg = 'off'
  GROUP BY o.q;
SELECT q, round(off_ms::numeric, 1) AS "off ms",
  round(counted_off::numeric, 3) AS "counted/off",
  round(norest_off::numeric, 3) AS "norest/off",
  round(tiered_norest::numeric, 3) AS "tiered/norest",
  round(tiered_off::numeric, 3) AS "tiered/off", switches
FROM r ORDER BY q;
\echo # geometric means over the statements that did not switch
SELECT count(*) AS statements,
  round(exp(avg(ln(counted_off)))::numeric, 4) AS "counted/off",
  round(exp(avg(ln(norest_off)))::numeric, 4) AS "norest/off",
  round(exp(avg(ln(tiered_norest)))::numeric, 4) AS "tiered/norest",
  round(exp(avg(ln(tiered_off)))::numeric, 4) AS "tiered/off"
FROM r WHERE switches = 0;
\echo # the spread: per round, the geometric mean over the same statements; quartiles over the rounds
CREATE TEMP VIEW per_round AS
  SELECT o.rnd,
    exp(avg(ln(c.cpu::float8 / o.cpu))) AS counted_off,
    exp(avg(ln(s.cpu::float8 / o.cpu))) AS norest_off,
    exp(avg(ln(t.cpu::float8 / o.cpu))) AS tiered_off
  FROM m o
  JOIN m c ON c.q = o.q AND c.rnd = o.rnd AND c.cfg = 'counted'
  JOIN m s ON s.q = o.q AND s.rnd = o.rnd AND s.cfg = 'norest'
  JOIN m t ON t.q = o.q AND t.rnd = o.rnd AND t.cfg = 'tiered'
  WHERE o.cfg = 'off' AND o.q IN (SELECT q FROM r WHERE switches = 0)
  GROUP BY o.rnd;
SELECT x.ratio, count(*) AS rounds,
  round(min(x.v)::numeric, 4) AS min,
  round(percentile_cont(0.25) WITHIN GROUP (ORDER BY x.v)::numeric, 4) AS q1,
  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x.v)::numeric, 4) AS median,
  round(percentile_cont(0.75) WITHIN GROUP (ORDER BY x.v)::numeric, 4) AS q3,
  round(max(x.v)::numeric, 4) AS max
FROM (SELECT 'counted/off' AS ratio, counted_off AS v FROM per_round
      UNION ALL SELECT 'norest/off', norest_off FROM per_round
      UNION ALL SELECT 'tiered/off', tiered_off FROM per_round) x
GROUP BY x.ratio ORDER BY x.ratio;
EOF
