#!/bin/bash
# What each optimisation level costs to compile, and saves, on the
# TPC-H-style queries of test/corpus/tpch.sql (lineitem SCALE times larger),
# for tiering's level table (src/provider/tiering_rule.c, doc/tiering.md,
# "Calibration"): the table's compile costs were measured on int4pl
# expressions, whose inlined callees are tiny; these queries call numeric,
# date and text functions, which inlining copies whole.
#
# On one throwaway cluster, in one backend, side by side (the levels rotate
# within each round), each query runs eagerly (jit_above_cost = 0) at jit
# (optimisation and inlining off), jit+opt (optimisation only) and all, and
# with jit = off:
#
#  - EXPLAIN (ANALYZE, FORMAT JSON)'s JIT section gives the functions and the
#    compile time (generation + inlining + optimisation + emission);
#  - the same query, run plainly, gives the backend's CPU time
#    (/proc/self/schedstat), from which "run" is CPU minus compile time.
#
# Medians over ROUNDS rounds.  The last columns are the ratios the level
# table's structure assumes: compile time at jit+opt and at all over jit.
#
#   bench/tiering_levels.sh [ROUNDS [SCALE]]
#
# Run as root (builds and installs like tools/test.sh); JITPROF_PGTREE and
# JITPROF_PORT select a private tree and port as for the tests.
set -euo pipefail

rounds=${1:-3}
scale=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

start_bench_cluster bench-tiering-levels "$BENCH_JITPROF_CONF
shared_buffers = 256MB
autovacuum = off"

{
	corpus_sql "$scale"
	echo "VACUUM ANALYZE;"
	cpu_ns_sql
	cat <<'EOF'
CREATE FUNCTION jit_of(q text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || q INTO j;
  RETURN j->0->'JIT';
END $$;
CREATE TABLE m (lvl text, q text, functions int, compile_ms float8, cpu_ms float8);
EOF
} >"$work/load.sql"
psql_q -f "$work/load.sql" >/dev/null

corpus_statements >"$work/statements.tsv"

declare -A lvl
lvl[off]="SET jit = off;"
lvl[jit]="SET jit = on; SET jit_above_cost = 0; SET jit_optimize_above_cost = -1; SET jit_inline_above_cost = -1;"
lvl[jit+opt]="SET jit = on; SET jit_above_cost = 0; SET jit_optimize_above_cost = 0; SET jit_inline_above_cost = -1;"
lvl[all]="SET jit = on; SET jit_above_cost = 0; SET jit_optimize_above_cost = 0; SET jit_inline_above_cost = 0;"
levels=(off jit jit+opt all)

{
	echo "SET jit_above_cost = 0; SELECT count(*) FROM region; RESET ALL;"
	for ((r = 0; r < rounds; r++)); do
		for ((i = 0; i < ${#levels[@]}; i++)); do
			l=${levels[$(((i + r) % ${#levels[@]}))]}
			echo "${lvl[$l]}"
			while IFS=$'\t' read -r label sql; do
				q=${sql//\'/\'\'}
				timed_sql "$sql"
				echo "SELECT coalesce(jit_of('$q')::text, '') AS j \\gset"
				echo "INSERT INTO m SELECT '$l', '$label', coalesce((j->>'Functions')::int, 0),"
				echo "  coalesce((j->'Timing'->>'Total')::float8, 0), :dt / 1e6"
				echo "  FROM (SELECT nullif(:'j', '')::json AS j) s;"
			done <"$work/statements.tsv"
		done
	done
} >"$work/run.sql"
psql_q -f "$work/run.sql" >/dev/null

bench_banner "$rounds" "$scale"
echo "# medians of $rounds rounds: functions, compile ms (EXPLAIN ANALYZE's JIT total), CPU ms of the plain run"
psql_q -P footer=off <<'EOF'
\pset tuples_only off
\pset format aligned
SET jit = off;
CREATE TEMP VIEW med AS
  SELECT q, lvl,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY functions) AS f,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY compile_ms) AS c,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms) AS cpu
  FROM m GROUP BY q, lvl;
CREATE TEMP VIEW w AS
  SELECT q,
    max(f) FILTER (WHERE lvl = 'jit') AS f,
    max(cpu) FILTER (WHERE lvl = 'off') AS off,
    max(c) FILTER (WHERE lvl = 'jit') AS c_jit,
    max(c) FILTER (WHERE lvl = 'jit+opt') AS c_opt,
    max(c) FILTER (WHERE lvl = 'all') AS c_all,
    max(cpu - c) FILTER (WHERE lvl = 'jit') AS run_jit,
    max(cpu - c) FILTER (WHERE lvl = 'jit+opt') AS run_opt,
    max(cpu - c) FILTER (WHERE lvl = 'all') AS run_all
  FROM med GROUP BY q;
SELECT q, f AS functions, round(off::numeric, 1) AS "off ms",
  round(c_jit::numeric, 1) AS "compile jit", round(c_opt::numeric, 1) AS "compile jit+opt",
  round(c_all::numeric, 1) AS "compile all",
  round(run_jit::numeric, 1) AS "run jit", round(run_opt::numeric, 1) AS "run jit+opt",
  round(run_all::numeric, 1) AS "run all",
  round((c_opt / c_jit)::numeric, 2) AS "opt/jit", round((c_all / c_jit)::numeric, 2) AS "all/jit"
FROM w ORDER BY q;
SELECT count(*) AS queries,
  round(sum(c_jit)::numeric, 1) AS "compile jit", round(sum(c_opt)::numeric, 1) AS "compile jit+opt",
  round(sum(c_all)::numeric, 1) AS "compile all",
  round(exp(avg(ln(c_opt / c_jit)))::numeric, 2) AS "geomean opt/jit",
  round(exp(avg(ln(c_all / c_jit)))::numeric, 2) AS "geomean all/jit",
  round((sum(c_opt) / sum(f))::numeric, 2) AS "jit+opt ms/function",
  round((sum(c_all) / sum(f))::numeric, 2) AS "all ms/function",
  round((sum(c_jit) / sum(f))::numeric, 2) AS "jit ms/function"
FROM w;
EOF
