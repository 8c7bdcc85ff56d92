#!/bin/bash
# Does the JIT advisor pay, and does tiered JIT alone?  A mixed workload's
# total CPU time under six JIT set-ups, side by side in one run (issue 21,
# item 7; issue 33 for tiered).
#
# Two clusters on the same data:
#
#   stock     PostgreSQL as shipped (jit_provider = llvmjit, no preload)
#   jitprof   jitprof preloaded, jitprof.jit_advisor = enforce after training
#             (ALTER SYSTEM); the tiered set-up turns it off in its session
#
# The mix, one psql session per run (every statement top level):
#
#   pays      TPC-H-like Q1 (a wide aggregate) and Q6 (a filtered sum) over a
#             float8 "lineitem" of LINEITEM rows: compiled expressions win
#   loses     two queries whose plan cost says JIT at every level although
#             they touch few rows: an aggregate over a set-returning function
#             declared ROWS 20000000 that returns 300 rows (row estimates far
#             above the real ones), and a join of it with a table of 64
#             partitions holding 50 rows each (many partitions scanned for a
#             few rows: 64 scans to compile)
#   oltp      500 primary-key lookups in pgbench_accounts (out of the
#             advisor's scope: plan cost about 8)
#
# Set-ups, all at PostgreSQL's default settings otherwise:
#
#   defaults  stock, jit = on, default thresholds
#   off       stock, jit = off
#   forced    stock, jit_above_cost = jit_optimize_above_cost =
#             jit_inline_above_cost = 0 (JIT at every level for everything)
#   advised   stock, the settings jitprof_jit_advice() gave after training
#   enforce   jitprof, jitprof.jit_advisor = enforce (decided queries at their
#             best measured level, the rest at PostgreSQL's, exploring on)
#   tiered    jitprof, per session: jitprof.tiering = on, jitprof.jit_advisor
#             = off, PostgreSQL's JIT settings otherwise (the configuration a
#             user would leave on), with no history and no exploration.
#             The advisor's store holds the training's verdicts for the
#             bootstrap user, and tiering skips a query judged "jit loses"
#             even with the advisor off (tiering_rule.c), so the session
#             also does SET ROLE jitprof_fresh, a superuser role that never
#             ran anything: the advisor's entries are per user, and it finds
#             none.  With the advisor off it records nothing either.
#
# Training (once, before the rounds, on the jitprof cluster in explore
# mode): the pays and loses queries TRAIN times at each of the five JIT
# levels (jitprof.debug_advisor_level: a systematic schedule instead of
# random draws at jitprof.advisor_fraction, so that every level has its
# executions within a benchmark's time); its CPU and its loss against
# PostgreSQL's level are reported as the exploration's own cost.
#
# Per run: the CPU time of the cluster's backends (postmaster's reaped
# children, /proc/<postmaster>/stat, as bench/oltp.sh), so the client's CPU
# is not counted.  Parallel query is off in both clusters
# (max_parallel_workers_per_gather = 0): with 2 cores shared, workers only
# add noise.  Each round runs every set-up once, the order rotating.  Also per
# round: pgbench -S -M prepared for OLTP_SECONDS against each cluster, the
# OLTP ratio with the advisor on (stock CPU per transaction / jitprof's).
#
# Per class (tiered, defaults, off only; after the mix in each round): each
# class of the mix alone, in a session of its own, the three set-ups in a
# rotating order, to see which class tiered wins or loses against which
# set-up.  The ratio is tiered / min(defaults, off) of that class.  A class
# run pays a connection's start-up (a few ms), and the OLTP class is about
# 0.1 s: the 10 ms clock tick is a large part of it.
#
# Targets: enforce <= 0.95 x min(defaults, off); advised <= min(defaults,
# off); tiered <= 0.95 x min(defaults, off) (issue 33).  Printed: per round,
# and the median over rounds of each per-round ratio, with its spread
# (min..max).
#
#   bench/jit_advisor.sh [ROUNDS [LINEITEM [TRAIN [OLTP_SECONDS]]]]
#                        default 5 rounds, 1500000 rows, 5, 8 s
#
# Run as root (it builds and installs jitprof like tools/test.sh);
# JITPROF_PGTREE and JITPROF_PORT are honoured as for tools/test.sh (the
# clusters use that port and the next one).
set -euo pipefail

rounds=${1:-5}
lineitem=${2:-1500000}
train=${3:-5}
oltp_seconds=${4:-8}

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh

build_and_install >/dev/null

work=$(make_workdir bench-jit-advisor)
cleanup() {
	stop_clusters
	rm -rf "$work"
}
trap cleanup EXIT

declare -A port
port[stock]=$PG_PORT
port[jitprof]=$((PG_PORT + 1))
common="shared_buffers = 256MB
max_connections = 20
max_parallel_workers_per_gather = 0
autovacuum = off"
init_cluster "$work/stock" "${port[stock]}" "$work" "$common
jit_provider = 'llvmjit'"
init_cluster "$work/jitprof" "${port[jitprof]}" "$work" "$common
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
compute_query_id = on
jitprof.advisor_max_queries = 1000"

psql_c() {
	local c=$1
	shift
	as_pg_user "$PG_BINDIR"/psql -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "${port[$c]}" -d postgres "$@"
}

cat >"$work/schema.sql" <<EOF
CREATE TABLE lineitem AS
  SELECT g AS l_orderkey, (g % 50 + 1)::float8 AS l_quantity,
         (g % 100000 + 900)::float8 / 10 AS l_extendedprice,
         (g % 11)::float8 / 100 AS l_discount, (g % 9)::float8 / 100 AS l_tax,
         g % 3 AS l_returnflag, g % 2 AS l_linestatus, g % 2500 AS l_shipdate
  FROM generate_series(1, $lineitem) g;
CREATE TABLE small_t AS SELECT g AS k, g * 0.37::float8 AS v FROM generate_series(1, 300) g;
CREATE FUNCTION est_rows() RETURNS TABLE (k int, v float8)
  LANGUAGE plpgsql STABLE ROWS 20000000
  AS \$\$ BEGIN RETURN QUERY SELECT s.k, s.v FROM small_t s; END \$\$;
CREATE TABLE parts (id int, amount float8, note int) PARTITION BY HASH (id);
SELECT format('CREATE TABLE parts_%s PARTITION OF parts FOR VALUES WITH (MODULUS 64, REMAINDER %s)', r, r)
  FROM generate_series(0, 63) r \gexec
INSERT INTO parts SELECT g, g * 1.1, g % 7 FROM generate_series(1, 3200) g;
VACUUM ANALYZE;
EOF
for c in stock jitprof; do
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/$c" -l "$work/$c.log" -w start >/dev/null
	as_pg_user "$PG_BINDIR"/pgbench -q -i -s 1 -h "$work" -p "${port[$c]}" postgres >/dev/null 2>&1
	psql_c "$c" -f "$work/schema.sql" >/dev/null
done
psql_c jitprof -c 'CREATE EXTENSION jitprof' -c 'CREATE ROLE jitprof_fresh SUPERUSER NOLOGIN' >/dev/null

q1="SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
  sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
  avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
  FROM lineitem WHERE l_shipdate <= 2400 GROUP BY l_returnflag, l_linestatus
  ORDER BY l_returnflag, l_linestatus;"
q6="SELECT sum(l_extendedprice * l_discount) FROM lineitem
  WHERE l_shipdate >= 1000 AND l_shipdate < 1365 AND l_discount BETWEEN 0.05 AND 0.07
    AND l_quantity < 24;"
l1="SELECT k % 10 AS b, sum(v * 1.5 + k), avg(v - k), max(v * k), min(v / (k + 1)), count(*)
  FROM est_rows() GROUP BY 1 ORDER BY 1;"
l2="SELECT p.note, count(*), sum(p.amount * e.v + p.id), max(p.amount - e.v)
  FROM parts p JOIN est_rows() e ON p.id = e.k WHERE p.amount * 2 > e.v GROUP BY p.note ORDER BY 1;"

# the mix's three classes, then the mix itself (the three in this order)
classes=(pays loses oltp)
{
	for i in 1 2; do echo "$q1"; done
	for i in 1 2 3; do echo "$q6"; done
} >"$work/pays.sql"
{
	for i in $(seq 1 15); do echo "$l1"; done
	for i in $(seq 1 10); do echo "$l2"; done
} >"$work/loses.sql"
awk 'BEGIN {srand(42); for (i = 0; i < 500; i++) printf "SELECT abalance FROM pgbench_accounts WHERE aid = %d;\n", 1 + int(rand() * 100000)}' >"$work/oltp.sql"
cat "$work/pays.sql" "$work/loses.sql" "$work/oltp.sql" >"$work/mix.sql"
chown "$PG_OS_USER" "$work"/*.sql

# CPU time (ms) of the cluster's reaped children so far (bench/oltp.sh)
cluster_cpu_ms() {
	local pid ticks
	pid=$(head -1 "$work/$1/postmaster.pid")
	ticks=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat")
	echo $((ticks * 1000 / $(getconf CLK_TCK)))
}
wait_backends() {
	while [ "$(psql_c "$1" -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" != 0 ]; do
		sleep 0.1
	done
	sleep 0.2
}

# One run of the mix (or of FILE, one of its classes): the CPU ms the
# cluster's backend spent on it.
run_mix() {
	local c=$1 settings=$2 file=${3:-mix} before after
	wait_backends "$c"
	before=$(cluster_cpu_ms "$c")
	{
		printf '%s\n' "$settings"
		cat "$work/$file.sql"
	} | psql_c "$c" >/dev/null
	wait_backends "$c"
	after=$(cluster_cpu_ms "$c")
	echo $((after - before))
}

# --- training: explore mode, every level TRAIN times ---
psql_c jitprof -c 'ALTER SYSTEM SET jitprof.jit_advisor = explore' -c 'SELECT pg_reload_conf()' >/dev/null
train_sql=$(
	# LLVM is loaded by a statement out of scope, so that no measured
	# execution pays for it
	echo "SET jit_above_cost = 0; SELECT count(*) FROM small_t WHERE k * 2 > 0; RESET jit_above_cost;"
	for level in off jit jit+opt jit+inline all; do
		echo "SET jitprof.debug_advisor_level = '$level';"
		for i in $(seq 1 "$train"); do printf '%s\n%s\n%s\n%s\n' "$q1" "$q6" "$l1" "$l2"; done
	done
	# and PostgreSQL's own level, as a session at the defaults runs it
	echo "RESET jitprof.debug_advisor_level;"
	for i in $(seq 1 "$train"); do printf '%s\n%s\n%s\n%s\n' "$q1" "$q6" "$l1" "$l2"; done
)
t_before=$(cluster_cpu_ms jitprof)
echo "$train_sql" | psql_c jitprof >/dev/null
wait_backends jitprof
t_cpu=$(($(cluster_cpu_ms jitprof) - t_before))

echo "mixed workload: lineitem $lineitem rows; per run 2 x Q1, 3 x Q6, 15 x L1, 10 x L2, 500 lookups"
echo "training: $train executions of each analytic query at each of the 5 levels and at PostgreSQL's, $t_cpu ms of backend CPU"
# the four analytic queries by plan cost: their verdicts
psql_c jitprof -c "SET jit = off" -P footer=off -F ' | ' -A -c "
SELECT p.plan_cost::bigint AS plan_cost, p.pg_level, p.best_level, p.verdict, p.enforced_level,
       round(p.saving_ms::numeric, 1) AS saving_ms, round(p.saving_low_ms::numeric, 1) AS low,
       round(p.saving_high_ms::numeric, 1) AS high,
       (SELECT string_agg(l.level || ' ' || round(l.mean_cpu_ms::numeric, 1), ', ' ORDER BY l.mean_cpu_ms)
        FROM jitprof_jit_levels l WHERE l.queryid = p.queryid AND l.userid = p.userid) AS mean_cpu_ms
FROM jitprof_jit_payoff p WHERE p.executions >= $train ORDER BY p.plan_cost DESC"
read -r t_explored t_explore_cpu t_loss t_inscope < <(psql_c jitprof -F ' ' -c "SET jit = off" -c \
	"SELECT explored, round(explore_cpu_ms::numeric), round(explore_loss_ms::numeric), round(cpu_ms::numeric) FROM jitprof_advisor")
echo "exploration's own cost in training: $t_explored executions explored, $t_explore_cpu ms of CPU, of which $t_loss ms above PostgreSQL's level (in-scope CPU $t_inscope ms)"

# read at PostgreSQL's default settings, so that "now" is the defaults
advice=$(psql_c jitprof -F ' ' -c \
	"SELECT jit, coalesce(jit_above_cost, -1), coalesce(jit_optimize_above_cost, -1), coalesce(jit_inline_above_cost, -1),
	        round(current_cpu_ms::numeric), round(advised_cpu_ms::numeric), coalesce(cardinality(unserved), 0) FROM jitprof_jit_advice()")
read -r a_jit a_above a_opt a_inline a_now a_adv a_unserved <<<"$advice"
[ "$a_jit" = t ] && a_jit=on || a_jit=off
echo "advice: jit = $a_jit, jit_above_cost = $a_above, jit_optimize_above_cost = $a_opt, jit_inline_above_cost = $a_inline"
echo "        (predicted on the trained queries: $a_now ms at the defaults, $a_adv ms advised; $a_unserved queries unserved)"

psql_c jitprof -c 'ALTER SYSTEM SET jitprof.jit_advisor = enforce' -c 'SELECT pg_reload_conf()' >/dev/null
read -r e_explored0 e_loss0 e_enforced0 < <(psql_c jitprof -F ' ' -c "SET jit = off" -c \
	"SELECT explored, explore_loss_ms, enforced FROM jitprof_advisor")

declare -A setting
setting[defaults]=""
setting[off]="SET jit = off;"
setting[forced]="SET jit_above_cost = 0; SET jit_optimize_above_cost = 0; SET jit_inline_above_cost = 0;"
setting[advised]="SET jit = $a_jit; SET jit_above_cost = $a_above; SET jit_optimize_above_cost = $a_opt; SET jit_inline_above_cost = $a_inline;"
setting[enforce]=""
setting[tiered]="SET jitprof.jit_advisor = off; SET jitprof.tiering = on; SET ROLE jitprof_fresh;"
declare -A cluster=([defaults]=stock [off]=stock [forced]=stock [advised]=stock [enforce]=jitprof [tiered]=jitprof)
setups=(defaults off forced advised enforce tiered)
class_setups=(defaults off tiered)

# pgbench -S -M prepared against one cluster: CPU us per transaction
oltp() {
	local c=$1 before after out n
	wait_backends "$c"
	before=$(cluster_cpu_ms "$c")
	out=$(as_pg_user "$PG_BINDIR"/pgbench -n -S -M prepared -c 1 -T "$oltp_seconds" -h "$work" -p "${port[$c]}" postgres 2>&1)
	wait_backends "$c"
	after=$(cluster_cpu_ms "$c")
	n=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	awk -v d=$((after - before)) -v n="$n" 'BEGIN {printf "%.1f", d * 1000 / n}'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

declare -A all class_all class_ratios
ratios_enf=() ratios_adv=() ratios_forced=() ratios_oltp=() ratios_tiered=()
echo
echo "CPU ms of the mix per run (backends of the cluster), $rounds rounds"
for r in $(seq 1 "$rounds"); do
	declare -A ms=()
	for k in $(seq 0 $((${#setups[@]} - 1))); do
		s=${setups[$(((r + k) % ${#setups[@]}))]}
		ms[$s]=$(run_mix "${cluster[$s]}" "${setting[$s]}")
		all[$s]+="${ms[$s]} "
	done
	best=$((ms[defaults] < ms[off] ? ms[defaults] : ms[off]))
	ratios_enf+=("$(ratio "${ms[enforce]}" "$best")")
	ratios_adv+=("$(ratio "${ms[advised]}" "$best")")
	ratios_forced+=("$(ratio "${ms[forced]}" "$best")")
	ratios_tiered+=("$(ratio "${ms[tiered]}" "$best")")
	# each class alone, under tiered, defaults and off
	declare -A cms=()
	for cl in "${classes[@]}"; do
		for k in 0 1 2; do
			s=${class_setups[$(((r + k) % 3))]}
			cms[$s.$cl]=$(run_mix "${cluster[$s]}" "${setting[$s]}" "$cl")
			class_all[$s.$cl]+="${cms[$s.$cl]} "
		done
		cbest=$((cms[defaults.$cl] < cms[off.$cl] ? cms[defaults.$cl] : cms[off.$cl]))
		class_ratios[min.$cl]+="$(ratio "${cms[tiered.$cl]}" "$cbest") "
		class_ratios[off.$cl]+="$(ratio "${cms[tiered.$cl]}" "${cms[off.$cl]}") "
		class_ratios[defaults.$cl]+="$(ratio "${cms[tiered.$cl]}" "${cms[defaults.$cl]}") "
	done
	if [ $((r % 2)) = 1 ]; then
		us_stock=$(oltp stock)
		us_jitprof=$(oltp jitprof)
	else
		us_jitprof=$(oltp jitprof)
		us_stock=$(oltp stock)
	fi
	ratios_oltp+=("$(awk -v a="$us_stock" -v b="$us_jitprof" 'BEGIN {printf "%.3f", a / b}')")
	echo "round $r: defaults ${ms[defaults]}  off ${ms[off]}  forced ${ms[forced]}  advised ${ms[advised]}  enforce ${ms[enforce]}  tiered ${ms[tiered]}" \
		" | enforce/min(defaults,off) ${ratios_enf[-1]}  advised/min ${ratios_adv[-1]}  tiered/min ${ratios_tiered[-1]}" \
		" | oltp us/tx stock $us_stock jitprof $us_jitprof (stock/jitprof ${ratios_oltp[-1]})"
	line="  classes alone:"
	for cl in "${classes[@]}"; do
		line+="  $cl defaults ${cms[defaults.$cl]} off ${cms[off.$cl]} tiered ${cms[tiered.$cl]}"
	done
	echo "$line"
	unset ms cms
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
summary() { printf '%s\n' "$@" | median | tr '\n' ' '; printf '(%s..%s)' "$(printf '%s\n' "$@" | sort -g | head -1)" "$(printf '%s\n' "$@" | sort -g | tail -1)"; }

echo
echo "medians over $rounds rounds (min..max of the per-round values)"
for s in "${setups[@]}"; do
	# shellcheck disable=SC2086
	printf '%-9s %s ms\n' "$s" "$(summary ${all[$s]})"
done
echo "enforce / min(defaults, off): $(summary "${ratios_enf[@]}")   target <= 0.95"
echo "advised / min(defaults, off): $(summary "${ratios_adv[@]}")   target <= 1"
echo "forced  / min(defaults, off): $(summary "${ratios_forced[@]}")"
echo "tiered  / min(defaults, off): $(summary "${ratios_tiered[@]}")   target <= 0.95"
echo
echo "each class alone, medians over $rounds rounds (min..max): CPU ms, then tiered / min(defaults, off), / off, / defaults"
for cl in "${classes[@]}"; do
	# shellcheck disable=SC2086
	printf '%-6s defaults %s  off %s  tiered %s\n' "$cl" "$(summary ${class_all[defaults.$cl]})" \
		"$(summary ${class_all[off.$cl]})" "$(summary ${class_all[tiered.$cl]})"
	# shellcheck disable=SC2086
	printf '       tiered/min %s  tiered/off %s  tiered/defaults %s\n' "$(summary ${class_ratios[min.$cl]})" \
		"$(summary ${class_ratios[off.$cl]})" "$(summary ${class_ratios[defaults.$cl]})"
done
echo "OLTP with the advisor on (pgbench -S -M prepared, stock CPU per tx / jitprof's): $(summary "${ratios_oltp[@]}")"
read -r e_explored1 e_loss1 e_enforced1 e_cpu1 < <(psql_c jitprof -F ' ' -c "SET jit = off" -c \
	"SELECT explored, explore_loss_ms, enforced, cpu_ms FROM jitprof_advisor")
awk -v x0="$e_explored0" -v x1="$e_explored1" -v l0="$e_loss0" -v l1="$e_loss1" -v n0="$e_enforced0" -v n1="$e_enforced1" \
	'BEGIN {printf "enforce rounds: %d executions explored at the drift rate, losing %.0f ms; %d executions enforced at a level other than PostgreSQL'"'"'s\n", x1 - x0, l1 - l0, n1 - n0}'

# What tiering did in the tiered runs (the mix's and the classes'), per
# analytic query: from jitprof_queries, the rows of the role the tiered
# sessions ran as.
echo
echo "tiered runs, per query (jitprof_queries, role jitprof_fresh): executions, tiered, switches, expressions compiled, never compiled"
for name in q1 q6 l1 l2; do
	qid=$(psql_c jitprof -c "SET jit = off" -c "EXPLAIN (VERBOSE) ${!name}" | sed -n 's/^Query Identifier: //p')
	printf '%s %s\n' "$name" "$(psql_c jitprof -F ' ' -c "SET jit = off" -c \
		"SELECT executions, tiered_executions, tiering_switches, tiering_expressions_compiled, tiering_expressions_never_compiled
		 FROM jitprof_queries WHERE userid = 'jitprof_fresh'::regrole AND queryid = $qid")"
done
