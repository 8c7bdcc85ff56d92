#!/bin/bash
# Tiered JIT against PostgreSQL's choices, side by side in one run, on one
# throwaway cluster with jitprof as jit_provider (doc/tiering.md):
#
#   defaults  PostgreSQL's JIT settings as shipped
#   off       jit = off
#   eager     jit_above_cost, jit_optimize_above_cost, jit_inline_above_cost 0
#   enforce   PostgreSQL's JIT settings as shipped, jitprof.jit_advisor =
#             enforce after exploring: before the rounds, every statement
#             runs TRAIN times at each of the five JIT levels in explore
#             mode (jitprof.debug_advisor_level), so that the advisor has
#             decided each query in its scope; enforce runs each at its
#             best measured level, exploring on as configured
#   tiered    PostgreSQL's JIT settings as shipped, with jitprof.tiering =
#             on: plans above tiering's floor start interpreted, under
#             jit_above_cost too, and the rule decides (doc/tiering.md).
#             The session runs as a role the advisor has no history for
#             (its entries are per user), so that tiering uses no verdict
#             of the training
#
# Query classes:
#   oltp      pgbench select-only and TPC-B-like, prepared, one client,
#             jit_above_cost = 0 in every configuration but off (tps, per
#             configuration and workload)
#   tpch      the TPC-H-style queries of test/corpus/tpch.sql on the corpus
#             data, lineitem made SCALE times larger
#   over      priced high, touches few rows: a 64-partition table scanned
#             for a few rows, and a set-returning function declared ROWS
#             20000000 that returns 300
#   under     priced under jit_above_cost, runs long: functions declared
#             ROWS 50000 (few_rows: the plan is priced above tiering's
#             floor) and ROWS 10 (tiny_estimate: below it) that return
#             ROWS_UNDER rows, aggregated
#
# Per statement, the backend's own CPU time (/proc/self/schedstat, ns),
# read before and after it in the same session.  Within a round, each
# statement runs in the five configurations back to back, in an order that
# changes from statement to statement and round to round (a Williams
# design: each configuration follows each other one equally often), so
# that the host's slow spells, which last seconds, fall on all five alike.
# Per configuration the median over ROUNDS is kept; a ratio between two
# configurations is taken per round (paired) and its median kept.  A
# statement of the over class (well under a millisecond) runs REPEAT times
# (100) within one reading, and its time per execution is kept, so that one
# reading's error is not a large share of it (at 20, before the fourteenth
# run, `parts`, which tiering leaves as with jit = off, read 1.007 to 1.103
# of off).  Printed:
# CPU ms per query and configuration, ratios to off and to the better of
# off and eager, geometric means per class, and pgbench tps ratios.
#
#   [REPEAT=n] [CLASSES="oltp tpch over under"] bench/tiering.sh [ROUNDS [SCALE [OLTP_SECONDS]]]
#
# CLASSES picks the query classes to run (all by default).
#
# The short form for a shared machine is bench/tiering.sh 3 1 5; the full
# form (a quiet machine) bench/tiering.sh 15 20 60.  Run as root (builds
# and installs like tools/test.sh); JITPROF_PGTREE and JITPROF_PORT select a
# private tree and port.
set -euo pipefail

rounds=${1:-3}
scale=${2:-1}
oltp_seconds=${3:-5}
rows_under=$((200000 * scale))
train=5
repeat=${REPEAT:-100}
classes=" ${CLASSES:-oltp tpch over under} "
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

start_bench_cluster bench-tiering "$BENCH_JITPROF_CONF
shared_buffers = 256MB
autovacuum = off"

as_pg_user "$PG_BINDIR"/pgbench -q -i -s 1 -h "$work" -p "$PG_PORT" postgres >/dev/null 2>&1
{
	corpus_sql "$scale"
	cat <<EOF
CREATE TABLE small_t AS SELECT g AS k, g * 0.37::float8 AS v FROM generate_series(1, 300) g;
CREATE FUNCTION est_rows() RETURNS TABLE (k int, v float8)
  LANGUAGE plpgsql STABLE ROWS 20000000
  AS \$\$ BEGIN RETURN QUERY SELECT s.k, s.v FROM small_t s; END \$\$;
CREATE TABLE parts (id int, amount float8, note int) PARTITION BY HASH (id);
SELECT format('CREATE TABLE parts_%s PARTITION OF parts FOR VALUES WITH (MODULUS 64, REMAINDER %s)', r, r)
  FROM generate_series(0, 63) r \gexec
INSERT INTO parts SELECT g, g * 1.1, g % 7 FROM generate_series(1, 3200) g;
CREATE TABLE long_t AS SELECT g AS k, g * 0.37::float8 AS v FROM generate_series(1, $rows_under) g;
CREATE FUNCTION few_rows() RETURNS TABLE (k int, v float8)
  LANGUAGE plpgsql STABLE ROWS 50000
  AS \$\$ BEGIN RETURN QUERY SELECT s.k, s.v FROM long_t s; END \$\$;
CREATE FUNCTION tiny_estimate() RETURNS TABLE (k int, v float8)
  LANGUAGE plpgsql STABLE ROWS 10
  AS \$\$ BEGIN RETURN QUERY SELECT s.k, s.v FROM long_t s; END \$\$;
VACUUM ANALYZE;
$(cpu_ns_sql)
CREATE TABLE m (rnd int, cfg text, class text, q text, cpu bigint, switches bigint);
CREATE EXTENSION jitprof;
CREATE ROLE jitprof_fresh SUPERUSER NOLOGIN;
EOF
} >"$work/load.sql"
psql_q -f "$work/load.sql" >/dev/null

# the statements: CLASS LABEL SQL, one a line
{
	corpus_statements | sed 's/^/tpch\t/'
	printf 'over\tparts\tSELECT sum(amount * 1.5 + note), count(*) FROM parts WHERE id IN (7, 77, 777)\n'
	printf 'over\test_rows\tSELECT k %% 10, sum(v * 1.5 + k), avg(v - k), count(*) FROM est_rows() GROUP BY 1 ORDER BY 1\n'
	for f in few_rows tiny_estimate; do
		printf 'under\t%s\tSELECT k %% 10, sum(v * 1.5 + k), avg(v - k), max(v * k), min(v / (k + 1)), count(*) FROM %s() GROUP BY 1 ORDER BY 1\n' $f $f
	done
} | while IFS=$'\t' read -r class rest; do
	[[ $classes == *" $class "* ]] && printf '%s\t%s\n' "$class" "$rest"
done >"$work/statements.tsv"

# what each configuration sets, after the settings and the role are reset
# (RESET ALL leaves the role as it was: without RESET ROLE, every
# configuration after tiered's first would run as jitprof_fresh, and
# enforce would explore for that role, giving tiered verdicts to use)
declare -A cfg
cfg[defaults]=""
cfg[off]="SET jit = off;"
cfg[eager]="SET jit_above_cost = 0; SET jit_optimize_above_cost = 0; SET jit_inline_above_cost = 0;"
cfg[enforce]="SET jitprof.jit_advisor = enforce;"
cfg[tiered]="SET jitprof.tiering = on; SET ROLE jitprof_fresh;"
configs=(defaults off eager enforce tiered)

# The order of the configurations for one statement: sequence K (0 to 9)
# of a Williams design for five, in which each configuration follows each
# other one equally often (twice over the ten), so that what one leaves
# behind (caches, the heap) is not charged to the same one each time.
# Sequences 5 to 9 are 0 to 4 read backwards.
williams=(0 1 4 2 3)
config_order() {
	local k=$1 j i
	for ((j = 0; j < 5; j++)); do
		i=$j
		((k >= 5)) && i=$((4 - j))
		echo "${configs[$(((williams[i] + k) % 5))]}"
	done
}

# training for enforce: explore mode, each statement TRAIN times at each
# level (the advisor decides a query from 5 executions a level)
{
	echo "SET jit_above_cost = 0; SELECT count(*) FROM small_t; RESET ALL;"
	echo "SET jitprof.jit_advisor = explore;"
	for level in off jit jit+opt jit+inline all; do
		echo "SET jitprof.debug_advisor_level = '$level';"
		for ((i = 0; i < train; i++)); do
			cut -f3 "$work/statements.tsv" | sed 's/$/;/'
		done
	done
} >"$work/train.sql"
psql_q -o /dev/null -f "$work/train.sql"

switches="(SELECT value::bigint FROM jitprof_status WHERE name = 'tiering_switches')"
{
	# the session loads LLVM before anything is measured
	echo "SET jit_above_cost = 0; SELECT count(*) FROM small_t; RESET ALL;"
	for ((r = 0; r < rounds; r++)); do
		s=0
		while IFS=$'\t' read -r class label sql; do
			n=1
			[ "$class" = over ] && n=$repeat
			for c in $(config_order $(((r + s) % 10))); do
				echo "RESET ALL; RESET ROLE; ${cfg[$c]}"
				# tiered: the backend's switch count, read outside the timed part
				sw=0
				[ "$c" = tiered ] && sw=$switches
				echo "SELECT $sw AS sw \\gset"
				timed_sql "$sql" "$n"
				echo "INSERT INTO m SELECT $r, '$c', '$class', '$label', :dt / $n, $sw - :sw;"
			done
			s=$((s + 1))
		done <"$work/statements.tsv"
	done
} >"$work/run.sql"
psql_q -f "$work/run.sql" >/dev/null

# oltp: pgbench select-only and TPC-B-like, prepared, JIT forced where JIT
# is on, the configurations' order rotating as above
declare -A tps
workloads=(select tpcb)
[[ $classes == *" oltp "* ]] || workloads=()
for ((r = 0; r < rounds; r++)); do
	for w in "${workloads[@]}"; do
		script=-S
		[ "$w" = tpcb ] && script=
		for ((i = 0; i < ${#configs[@]}; i++)); do
			c=${configs[$(((i + r) % ${#configs[@]}))]}
			opts="-c jit_above_cost=0"
			case $c in
			off) opts="-c jit=off" ;;
			eager) opts="$opts -c jit_optimize_above_cost=0 -c jit_inline_above_cost=0" ;;
			enforce) opts="$opts -c jitprof.jit_advisor=enforce" ;;
			tiered) opts="$opts -c jitprof.tiering=on" ;;
			esac
			t=$(as_pg_user env PGOPTIONS="$opts" "$PG_BINDIR"/pgbench -n $script -M prepared -c 1 -T "$oltp_seconds" \
				-h "$work" -p "$PG_PORT" postgres 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
			tps[$w/$c]="${tps[$w/$c]:-} $t"
		done
	done
done

bench_banner "$rounds" "$scale" "$oltp_seconds"
echo "# CPU: the backend's schedstat per statement, median of $rounds rounds (ms)"
psql_q -P footer=off <<'EOF'
\pset tuples_only off
\pset format aligned
SET jit = off;
CREATE TEMP VIEW med AS
  SELECT class, q, cfg, percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu) / 1e6 AS ms
  FROM m GROUP BY class, q, cfg;
CREATE TEMP VIEW w AS
  SELECT class, q,
    max(ms) FILTER (WHERE cfg = 'defaults') AS defaults,
    max(ms) FILTER (WHERE cfg = 'off') AS off,
    max(ms) FILTER (WHERE cfg = 'eager') AS eager,
    max(ms) FILTER (WHERE cfg = 'enforce') AS enforce,
    max(ms) FILTER (WHERE cfg = 'tiered') AS tiered,
    CASE WHEN max(ms) FILTER (WHERE cfg = 'off') <= max(ms) FILTER (WHERE cfg = 'eager')
      THEN 'off' ELSE 'eager' END AS best
  FROM med GROUP BY class, q;
-- paired: within a round, a statement's configurations ran back to back,
-- so the ratio of two of them is taken per round and its median kept
CREATE TEMP VIEW paired AS
  SELECT w.class, w.q, w.best,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY t.cpu::float8 / o.cpu) AS t_off,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY t.cpu::float8 / e.cpu) AS t_eager,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY t.cpu::float8 / CASE w.best WHEN 'off' THEN o.cpu ELSE e.cpu END) AS t_best,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY n.cpu::float8 / CASE w.best WHEN 'off' THEN o.cpu ELSE e.cpu END) AS n_best,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY d.cpu::float8 / o.cpu) AS d_off
  FROM w
  JOIN m t ON t.q = w.q AND t.cfg = 'tiered'
  JOIN m o ON o.q = w.q AND o.cfg = 'off' AND o.rnd = t.rnd
  JOIN m e ON e.q = w.q AND e.cfg = 'eager' AND e.rnd = t.rnd
  JOIN m n ON n.q = w.q AND n.cfg = 'enforce' AND n.rnd = t.rnd
  JOIN m d ON d.q = w.q AND d.cfg = 'defaults' AND d.rnd = t.rnd
  GROUP BY w.class, w.q, w.best;
SELECT class, q, round(defaults::numeric, 2) AS defaults, round(off::numeric, 2) AS off,
  round(eager::numeric, 2) AS eager, round(enforce::numeric, 2) AS enforce,
  round(tiered::numeric, 2) AS tiered, best,
  round(t_off::numeric, 3) AS "tiered/off",
  round(t_eager::numeric, 3) AS "tiered/eager",
  round(t_best::numeric, 3) AS "tiered/best",
  round(n_best::numeric, 3) AS "enforce/best",
  round(d_off::numeric, 3) AS "defaults/off"
FROM w JOIN paired USING (class, q, best) ORDER BY class, q;
\echo # per class: geometric means and the worst of the paired ratios above, and the sums of the medians (ms)
SELECT class, count(*) AS queries,
  round(exp(avg(ln(t_off)))::numeric, 3) AS "geomean tiered/off",
  round(exp(avg(ln(t_eager)))::numeric, 3) AS "geomean tiered/eager",
  round(exp(avg(ln(t_best)))::numeric, 3) AS "geomean tiered/best",
  round(max(t_best)::numeric, 3) AS "max tiered/best",
  round(exp(avg(ln(n_best)))::numeric, 3) AS "geomean enforce/best",
  round(exp(avg(ln(d_off)))::numeric, 3) AS "geomean defaults/off",
  round(sum(tiered)::numeric, 1) AS "tiered ms",
  round(sum(off)::numeric, 1) AS "off ms", round(sum(eager)::numeric, 1) AS "eager ms",
  round(sum(enforce)::numeric, 1) AS "enforce ms",
  round(sum(defaults)::numeric, 1) AS "defaults ms"
FROM w JOIN paired USING (class, q, best) GROUP BY class ORDER BY class;
\echo # the same, from the medians per configuration (ratio of medians)
SELECT class,
  round(exp(avg(ln(tiered / least(off, eager))))::numeric, 3) AS "geomean tiered/best",
  round(max(tiered / least(off, eager))::numeric, 3) AS "max tiered/best",
  round(exp(avg(ln(enforce / least(off, eager))))::numeric, 3) AS "geomean enforce/best"
FROM w GROUP BY class ORDER BY class;
\echo # tiered: the executions whose code switched, of the rounds (jitprof_status.tiering_switches)
SELECT q, count(*) FILTER (WHERE switches > 0) AS switched, count(*) AS executions
FROM m WHERE cfg = 'tiered' GROUP BY q HAVING count(*) FILTER (WHERE switches > 0) > 0 ORDER BY q;
\echo # the advisor after the rounds, for the training user: verdicts and enforced levels
SELECT verdict, best_level, enforced_level, count(*) AS queries
FROM jitprof_jit_payoff WHERE userid = 'postgres'::regrole GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT explored, enforced FROM jitprof_advisor;
EOF
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# the median over rounds of one configuration's tps over another's in the
# same round: the two ran minutes apart at most, so the host's slow spells
# weigh less than in the ratio of the two medians
paired() {
	local -a a b
	local r out=
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	for ((r = 0; r < ${#a[@]}; r++)); do
		out="$out $(echo "${a[$r]} / ${b[$r]}" | bc -l)"
	done
	echo "$out" | median
}
for w in "${workloads[@]}"; do
	label="-S"
	[ "$w" = tpcb ] && label="(TPC-B-like)"
	echo "# oltp $w: pgbench $label -M prepared -c 1 -T $oltp_seconds, JIT forced (jit_above_cost = 0) except off; median tps, and the median of the per-round ratios (paired)"
	off_tps=$(echo "${tps[$w/off]}" | median)
	for c in "${configs[@]}"; do
		m=$(echo "${tps[$w/$c]}" | median)
		printf '%-9s tps %10.1f  ratio to off %.3f, paired %.3f   (runs:%s)\n' "$c" "$m" "$(echo "$m / $off_tps" | bc -l)" \
			"$(paired "${tps[$w/$c]}" "${tps[$w/off]}")" "${tps[$w/$c]}"
	done
done
