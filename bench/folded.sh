#!/bin/bash
# How long jitprof_folded() takes over a big store (issue 19: at most
# 100 ms at 50,000 hotspot entries with their plan-node rows).
#
# It fills the store with the JIT functions and plan-node rows of many
# distinct queries (one small table each, so one query ID each; every
# query links five or six JIT functions and has two plan nodes), with
# jitprof.plan_nodes on and the sampler at 1 kHz, then runs
# SELECT count(*) FROM jitprof_folded() RUNS times and prints the median
# and the maximum, with the store's entry and plan-node row counts and the
# md5 of the output of jitprof_folded() and jitprof_plan_nodes; then the
# same call RUNS times, each in a new connection (median and maximum of
# psql's \timing); then the backend's CPU time per call over 3 x RUNS more
# calls in one session (the first field of /proc/<pid>/schedstat:
# nanoseconds on a CPU), which a loaded machine moves less than the
# wall-clock times.
#
#   [BEFORE_PGTREE=/work/pgtree-old] [FILL_ROUNDS=N] bench/folded.sh [ENTRIES [RUNS]]
#
# ENTRIES (default 50000) is the store size aimed at: about ENTRIES / 4.7
# queries are run.  RUNS defaults to 9.  FILL_ROUNDS (default 1) runs the
# whole fill that many times: the same entries, more of them sampled, so
# more queries with their plan-node rows.
#
# BEFORE_PGTREE: an installation tree of another build (see
# bench/connect_one_cluster.sh for how to make one).  The server is then
# stopped (jitprof.save writes the store to pg_stat/jitprof.stat), started
# from that tree's binaries, which load the same store back, and timed
# again; then the same once more with this checkout.  Both builds must
# share the stats file format, or the other build starts empty (the script
# says so).
#
# Run as root (it builds and installs like tools/test.sh; JITPROF_PGTREE
# and JITPROF_PORT are honoured).
set -euo pipefail

target=${1:-50000}
runs=${2:-9}

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir bench-folded)
data=$work/data
trap 'stop_clusters; rm -rf "$work"' EXIT
tables=$(((target * 10 + 46) / 47))
init_cluster "$data" "$PG_PORT" "$work" "
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
jitprof.max_hotspots = $((target + target / 5 + 100))
jitprof.max_plan_nodes = $((tables * 3 + 100))
jitprof.plan_nodes = on
jitprof.sample_rate = 1000
jitprof.save = on
jit = on
jit_above_cost = 0
jit_inline_above_cost = -1
jit_optimize_above_cost = -1
compute_query_id = on
max_parallel_workers_per_gather = 0"

bindir=$PG_BINDIR
start() { as_pg_user "$bindir"/pg_ctl -D "$data" -l "$work/log" -w start >/dev/null; }
stop() { as_pg_user "$bindir"/pg_ctl -D "$data" -m fast -w stop >/dev/null; }
psql_() {
	as_pg_user "$bindir"/psql -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "$PG_PORT" -d postgres "$@"
}
start

t0=$(date +%s)
# (committing every 500 tables: one transaction would run out of locks)
psql_ -c "CREATE EXTENSION jitprof" -c "SET jit = off" -c "
DO \$\$
BEGIN
	FOR i IN 1..$tables LOOP
		EXECUTE format('CREATE TABLE t%s (a int, b int)', i);
		EXECUTE format('INSERT INTO t%s VALUES (1, 2)', i);
		IF i % 500 = 0 THEN
			COMMIT;
		END IF;
	END LOOP;
END
\$\$" -c "SELECT jitprof_reset()" >/dev/null
# two clients, one per core
for i in $(seq 1 "$tables"); do
	echo "SELECT sum(a) FILTER (WHERE b > 0), max(b + a) FROM t$i WHERE a >= 0;" >>"$work/fill$((i % 2)).sql"
done
chown "$PG_OS_USER" "$work"/fill*.sql
# FILL_ROUNDS runs of the whole fill: a query's plan-node rows come from
# its sampled executions, and one execution of these queries takes less
# CPU time than the sampler's timer advances by (the kernel checks CPU-time
# timers at its clock tick), so one round samples only some of them
for _ in $(seq 1 "${FILL_ROUNDS:-1}"); do
	psql_ -o /dev/null -f "$work/fill0.sql" &
	p0=$!
	psql_ -o /dev/null -f "$work/fill1.sql" &
	p1=$!
	wait "$p0" "$p1"
done
t1=$(date +%s)
echo "filled with $tables queries in $((t1 - t0)) s"
# the readers compile nothing and add nothing to the store
psql_ -c "ALTER ROLE $PG_OS_USER SET jit = off"

echo 'SELECT count(*) FROM jitprof_folded();' >"$work/folded.sql"
chown "$PG_OS_USER" "$work/folded.sql"

# pgbench -l writes one line per transaction; field 3 is its latency in us
measure() {
	local label=$1 store lines
	store=$(psql_ -c "SELECT entries || ' entries, ' || plan_node_entries || ' plan-node rows' FROM jitprof_sampler")
	lines=$(psql_ -c "SELECT count(*) FROM jitprof_folded()")
	# the output itself, in the order the functions return it: equal
	# digests mean byte-identical output of two builds over one store
	digests=$(psql_ -c "SELECT 'folded ' || md5(string_agg(f, E'\n')) FROM jitprof_folded() f" \
		-c "SELECT 'plan_nodes ' || md5(string_agg(p::text, E'\n')) FROM jitprof_plan_nodes p" | tr '\n' ' ')
	rm -f "$work"/folded_log.*
	(cd "$work" && as_pg_user "$bindir"/pgbench -n -h "$work" -p "$PG_PORT" -f folded.sql \
		-t "$runs" -l --log-prefix=folded_log postgres >/dev/null 2>&1)
	cut -d' ' -f3 "$work"/folded_log.* | sort -n | awk -v l="$label" -v s="$store" -v n="$lines" '
		{ v[NR] = $1 }
		END { printf "%s: %s, %d lines: median %.1f ms, max %.1f ms (%d runs)\n",
			  l, s, n, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000, NR }'
	echo "  md5: $digests"
	# a new connection per call, as a scraper that does not keep its
	# connection: its first calls touch memory for the first time (the
	# store's shared pages, and the malloc'd copy), which later calls reuse
	for _ in $(seq 1 "$runs"); do
		psql_ -c '\timing on' -c 'SELECT count(*) FROM jitprof_folded()' |
			sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
	done | sort -n | awk '
		{ v[NR] = $1 }
		END { printf "  a new connection per call: median %.1f ms, max %.1f ms (%d calls)\n",
			  v[int((NR + 1) / 2)], v[NR], NR }'
	cpu=$( {
		echo "SELECT pg_backend_pid() AS pid \\gset"
		echo "SELECT split_part(pg_read_file('/proc/' || :pid || '/schedstat'), ' ', 1)::bigint AS t0 \\gset"
		for _ in $(seq 1 $((runs * 3))); do echo "SELECT count(*) FROM jitprof_folded() \\g /dev/null"; done
		echo "SELECT round((split_part(pg_read_file('/proc/' || :pid || '/schedstat'), ' ', 1)::bigint - :t0) / 1e6 / $((runs * 3)), 1)"
	} | psql_ -f -)
	echo "  CPU: $cpu ms per call ($((runs * 3)) calls in one session)"
}

measure "this build"
if [ -n "${BEFORE_PGTREE:-}" ]; then
	stop
	bindir=$BEFORE_PGTREE$(dirname "$(pg_config --pkglibdir)")/bin
	start
	measure "BEFORE_PGTREE"
	stop
	bindir=$PG_BINDIR
	start
	measure "this build, again"
fi
