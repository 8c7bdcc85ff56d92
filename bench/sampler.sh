#!/bin/bash
# Throughput cost of jitprof's hotspot sampler on a TPC-H-style workload.
#
# One run measures four configurations side by side:
#   stock     PostgreSQL's own llvmjit (jit_provider = llvmjit, no preload)
#   off       jitprof preloaded, jitprof.sample_rate = 0
#   default   jitprof.sample_rate = 99
#   1khz      jitprof.sample_rate = 1000
# The three sample rates alternate query by query in one session, and each
# round also measures stock (a server restart), so that the machine's
# changing load hits every configuration alike.  Throughput is workload
# executions per second of the backend's own CPU time; wall-clock throughput
# is printed too.  It prints each configuration's throughput as a ratio of
# "off" (targets: default >= 99%, 1 kHz >= 98%) and of stock.
#
# The workload is TPC-H Q1 (pricing summary: grouped aggregates over numeric
# expressions) and Q6 (revenue forecast: a selective scan), on a generated
# lineitem table, with JIT forced on.
#
#   bench/sampler.sh [ROUNDS] [REPETITIONS_PER_MEASUREMENT] [ROWS]
# Run as root (it builds and installs like tools/test.sh; JITPROF_PGTREE and
# JITPROF_PORT are honoured) or as the postgres user.
set -euo pipefail

rounds=${1:-4}
reps=${2:-10}
rows=${3:-300000}

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir bench)
data=$work/data
port=$PG_PORT
trap 'as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

as_pg_user "$PG_BINDIR"/initdb -D "$data" >/dev/null 2>&1
cat >>"$data"/postgresql.conf <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$work'
shared_buffers = 256MB
max_parallel_workers_per_gather = 0
jit = on
jit_above_cost = 0
jit_inline_above_cost = 0
jit_optimize_above_cost = 0
compute_query_id = on
CONF

start() {
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$work"/log -w -o "$1" start >/dev/null
}
stop() {
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -w stop >/dev/null
}
psql_() {
	as_pg_user "$PG_BINDIR"/psql -X -q -v ON_ERROR_STOP=1 -h "$work" -p "$port" -d postgres "$@"
}

jitprof_opts="-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.tiering=off"
stock_opts="-c jit_provider=llvmjit"

start "$jitprof_opts"
psql_ -c "CREATE EXTENSION jitprof" -c "
CREATE TABLE lineitem AS
SELECT (g / 4)::int AS l_orderkey,
       (1 + g % 50)::numeric(15,2) AS l_quantity,
       (900 + (g::bigint * 7919) % 100000 / 100.0)::numeric(15,2) AS l_extendedprice,
       ((g % 11) / 100.0)::numeric(15,2) AS l_discount,
       ((g % 9) / 100.0)::numeric(15,2) AS l_tax,
       (ARRAY['A','N','R'])[1 + g % 3]::char(1) AS l_returnflag,
       (ARRAY['F','O'])[1 + g % 2]::char(1) AS l_linestatus,
       date '1992-01-02' + (g % 2500) AS l_shipdate
FROM generate_series(1, $rows) g" -c "VACUUM ANALYZE lineitem"
stop

cat >"$work"/tpch.sql <<'SQL'
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price,
       avg(l_discount) AS avg_disc, count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= date '1998-12-01' - interval '90 day'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus;
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= date '1994-01-01'
  AND l_shipdate < date '1994-01-01' + interval '1 year'
  AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01
  AND l_quantity < 24;
SQL
chown "$PG_OS_USER" "$work"/tpch.sql

# One measurement session: $reps repetitions of the workload at each sample
# rate, interleaved (the order rotates every repetition) so that changes in
# the machine's load hit every rate alike.  Prints, per rate (0, 99, 1000),
# the backend's CPU seconds and the wall-clock seconds it spent on the
# workload.  CPU time is the backend's own (utime + stime from
# /proc/self/stat).  Run against stock llvmjit, where the setting means
# nothing, it measures stock three times.
rates=(0 99 1000)
measure() {
	local r i k
	local cpu="(split_part(s, ' ', 14)::bigint + split_part(s, ' ', 15)::bigint)"
	local now="extract(epoch FROM clock_timestamp())"
	{
		for r in "${rates[@]}"; do echo "\\set c_$r 0"; echo "\\set w_$r 0"; done
		for i in $(seq 1 "$reps"); do
			for k in 0 1 2; do
				r=${rates[$(((i + k) % 3))]}
				echo "SET jitprof.sample_rate = $r;"
				echo "SELECT $cpu AS t0, $now AS w0 FROM pg_read_file('/proc/self/stat') AS s \\gset"
				echo "\\i $work/tpch.sql"
				echo "SELECT :c_$r + $cpu - :t0 AS c_$r, :w_$r + $now - :w0 AS w_$r"
				echo "  FROM pg_read_file('/proc/self/stat') AS s \\gset"
			done
		done
		echo "SELECT :c_0::numeric / $(getconf CLK_TCK), :w_0, :c_99::numeric / $(getconf CLK_TCK), :w_99,"
		echo "       :c_1000::numeric / $(getconf CLK_TCK), :w_1000;"
	} >"$work"/measure.sql
	chown "$PG_OS_USER" "$work"/measure.sql
	as_pg_user "$PG_BINDIR"/psql -X -q -At -F ' ' -v ON_ERROR_STOP=1 \
		-h "$work" -p "$port" -d postgres -f "$work"/measure.sql | tail -1
}

declare -A cpu wall
configs=(stock off default 1khz)
for c in "${configs[@]}"; do cpu[$c]=0; wall[$c]=0; done
add() { awk -v a="$1" -v b="$2" 'BEGIN { print a + b }'; }
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.3f", n / t }'; }

echo "jitprof sampler benchmark: $rounds rounds x $reps runs of TPC-H Q1+Q6 per configuration, lineitem $rows rows"
echo "workload executions per CPU second (per wall-clock second):"
printf '%-6s %18s %18s %18s %18s\n' round "${configs[@]}"
for r in $(seq 1 "$rounds"); do
	start "$stock_opts"
	reps_saved=$reps; reps=1; measure >/dev/null; reps=$reps_saved	# warm up
	set -- $(measure)
	stop
	# stock ran the workload 3 * reps times
	s_cpu=$(add "$(add "$1" "$3")" "$5")
	s_wall=$(add "$(add "$2" "$4")" "$6")
	start "$jitprof_opts"
	reps_saved=$reps; reps=1; measure >/dev/null; reps=$reps_saved
	psql_ -c "SELECT jitprof_reset()" >/dev/null
	set -- $(measure)
	if [ "$r" = "$rounds" ]; then
		psql_ -c "SELECT sample_rate, samples_taken, jit_self_samples, jit_total_samples, samples_dropped FROM jitprof_sampler" \
			-c "SELECT node_type, plan_node_id, role, round(self_pct::numeric, 1) AS self_pct, round(total_pct::numeric, 1) AS total_pct FROM jitprof_hotspots ORDER BY self_samples DESC LIMIT 5" > "$work"/hotspots.txt
	fi
	stop
	line=$(printf '%-6s %18s' "$r" "$(rate $((3 * reps)) "$s_cpu") ($(rate $((3 * reps)) "$s_wall"))")
	line+=$(printf ' %18s' "$(rate "$reps" "$1") ($(rate "$reps" "$2"))")
	line+=$(printf ' %18s' "$(rate "$reps" "$3") ($(rate "$reps" "$4"))")
	line+=$(printf ' %18s' "$(rate "$reps" "$5") ($(rate "$reps" "$6"))")
	echo "$line"
	# totals, as seconds per workload execution
	cpu[stock]=$(add "${cpu[stock]}" "$(awk -v t="$s_cpu" 'BEGIN { print t / 3 }')")
	wall[stock]=$(add "${wall[stock]}" "$(awk -v t="$s_wall" 'BEGIN { print t / 3 }')")
	cpu[off]=$(add "${cpu[off]}" "$1"); wall[off]=$(add "${wall[off]}" "$2")
	cpu[default]=$(add "${cpu[default]}" "$3"); wall[default]=$(add "${wall[default]}" "$4")
	cpu[1khz]=$(add "${cpu[1khz]}" "$5"); wall[1khz]=$(add "${wall[1khz]}" "$6")
done

# throughput ratio a/b = time b / time a
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f%%", 100 * b / a }'; }
echo
echo "sampler at 99 Hz:  $(ratio "${cpu[default]}" "${cpu[off]}") of sampler off by CPU time (target >= 99%), $(ratio "${wall[default]}" "${wall[off]}") by wall clock"
echo "sampler at 1 kHz:  $(ratio "${cpu[1khz]}" "${cpu[off]}") of sampler off by CPU time (target >= 98%), $(ratio "${wall[1khz]}" "${wall[off]}") by wall clock"
echo "sampler off:       $(ratio "${cpu[off]}" "${cpu[stock]}") of stock llvmjit by CPU time, $(ratio "${wall[off]}" "${wall[stock]}") by wall clock"
echo "sampler at 99 Hz:  $(ratio "${cpu[default]}" "${cpu[stock]}") of stock llvmjit by CPU time"
echo "sampler at 1 kHz:  $(ratio "${cpu[1khz]}" "${cpu[stock]}") of stock llvmjit by CPU time"
echo
echo "what the sampler saw (last round):"
cat "$work"/hotspots.txt
