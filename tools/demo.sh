#!/bin/bash
# jitprof demo: starts a throwaway cluster with jitprof, runs a JIT-heavy
# TPC-H-style workload, and shows what jitprof saw: the linker status, the
# named JIT functions, the hotspots per query and plan node, Q1's plan
# annotated per node with its share of the CPU time (jitprof_explain), and a perf
# report of a backend.  Run as root on Debian 12; everything it starts is
# stopped and removed at the end (set KEEP=1 to keep the cluster's files).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ]; then
	"$here"/deps.sh
fi
. "$here"/common.sh

build_and_install

port=${JITPROF_DEMO_PORT:-54380}
dir=$(mktemp -d /tmp/jitprof-demo.XXXXXX)
chown "$PG_OS_USER" "$dir"
data=$dir/data
pg_started=
backend=

cleanup() {
	# the workload backend kept its perf map for perf report
	if [ -n "$backend" ]; then
		rm -f "/tmp/perf-$backend.map"
	fi
	if [ -n "$pg_started" ]; then
		as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast -w stop >/dev/null || true
	fi
	if [ -z "${KEEP:-}" ]; then
		rm -rf "$dir"
	else
		echo "kept $dir"
	fi
}
trap cleanup EXIT

psql_demo() {
	as_pg_user psql -X -h "$dir" -p "$port" -d postgres "$@"
}

heading() {
	printf '\n==== %s\n' "$*"
}

heading "starting a throwaway cluster in $dir (port $port)"
as_pg_user "$PG_BINDIR"/initdb -D "$data" -A trust >/dev/null
cat >>"$data"/postgresql.conf <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
shared_preload_libraries = 'pg_stat_statements, jitprof'
jit_provider = 'jitprof'
compute_query_id = on
max_parallel_workers_per_gather = 0
# JIT from moderately expensive queries on (the defaults are 100000 / 500000)
jit_above_cost = 10000
jit_inline_above_cost = 50000
jit_optimize_above_cost = 50000
# compile before the first row, so that every JIT function shows (tiered JIT,
# on by default, compiles a query only once it has done enough work)
jitprof.tiering = off
CONF
as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$dir"/server.log -w start >/dev/null
pg_started=1

heading "loading a TPC-H-style lineitem table (1,000,000 rows)"
psql_demo -q <<'SQL'
CREATE EXTENSION jitprof;
CREATE EXTENSION pg_stat_statements;
CREATE TABLE lineitem AS
SELECT g AS l_orderkey,
       (g % 200000) + 1 AS l_partkey,
       (g % 50) + 1 AS l_quantity,
       round(((g % 100000) + 900)::numeric * ((g % 50) + 1) / 10, 2) AS l_extendedprice,
       ((g % 11) / 100.0)::numeric(4, 2) AS l_discount,
       ((g % 9) / 100.0)::numeric(4, 2) AS l_tax,
       (ARRAY['A', 'N', 'R'])[g % 3 + 1] AS l_returnflag,
       (ARRAY['F', 'O'])[g % 2 + 1] AS l_linestatus,
       date '1992-01-01' + (g % 2500) AS l_shipdate
FROM generate_series(1, 1000000) g;
VACUUM ANALYZE lineitem;
SQL

workload=$dir/workload.sql
cat >"$workload" <<'SQL'
SELECT pg_backend_pid() \g (tuples_only=on) pid.txt
-- keep this backend's perf map for perf report after it exits
SET jitprof.perf_map_keep = on;
-- charge every sample to the plan node that was running
SET jitprof.plan_nodes = on;
SELECT pg_sleep(1);
-- Q1: pricing summary report
SELECT l_returnflag, l_linestatus,
       sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price,
       avg(l_discount) AS avg_disc, count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= date '1998-12-01' - interval '90 days'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
\g /dev/null
\g /dev/null
\g /dev/null
-- Q6: forecasting revenue change
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01'
  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24
\g /dev/null
\g /dev/null
SQL
chown "$PG_OS_USER" "$workload"

heading "running Q1 x3 and Q6 x2 in one backend, under perf record"
(cd "$dir" && as_pg_user psql -X -h "$dir" -p "$port" -d postgres -q -f "$workload") &
psql_pid=$!
for _ in $(seq 50); do
	[ -s "$dir"/pid.txt ] && break
	sleep 0.1
done
backend=$(tr -d ' \n' <"$dir"/pid.txt)
as_pg_user perf record -q -e cpu-clock -F 999 -p "$backend" -o "$dir"/perf.data >/dev/null 2>&1 &
perf_pid=$!
wait "$psql_pid"
kill -INT "$perf_pid" 2>/dev/null || true
wait "$perf_pid" || true

heading "jitprof_status (this demo's session)"
psql_demo -c "SELECT sum(l_quantity) FROM lineitem WHERE l_discount > 0.05" -c "SELECT * FROM jitprof_status"

heading "the JIT functions of Q6, as named by jitprof (jitprof_functions)"
psql_demo -c "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24" \
	-c "SELECT symbol, llvm_name, node_type, role, size FROM jitprof_functions WHERE NOT live ORDER BY address"

heading "hotspots per query and plan node (jitprof_hotspots joined with pg_stat_statements)"
psql_demo <<'SQL'
SELECT left(s.query, 30) AS query, h.node_type, h.plan_node_id AS node, h.role,
       round(h.self_pct::numeric, 1) AS self_pct,
       round(h.total_pct::numeric, 1) AS total_pct, h.symbol
FROM jitprof_hotspots h JOIN pg_stat_statements s USING (userid, dbid, queryid)
ORDER BY h.self_samples DESC LIMIT 8;
SELECT left(s.query, 30) AS query, q.executions, q.query_samples,
       round(q.jit_pct::numeric, 1) AS jit_pct
FROM jitprof_queries q JOIN pg_stat_statements s USING (userid, dbid, queryid)
ORDER BY q.query_samples DESC LIMIT 5;
SQL

heading "where Q1's time goes, plan node by plan node (jitprof_explain)"
q1="(SELECT queryid FROM pg_stat_statements WHERE query LIKE 'SELECT l_returnflag, l_linestatus,%' ORDER BY calls DESC LIMIT 1)"
psql_demo -At -c "SELECT * FROM jitprof_explain($q1)"
psql_demo -At -c "SELECT format('hot node of Q1: %s (node %s), %s%% of its CPU samples in the node itself',
                                label, plan_node_id, round(self_pct::numeric, 1))
                  FROM jitprof_plan_nodes WHERE queryid = $q1 AND plan_node_id >= 0
                  ORDER BY self_samples DESC LIMIT 1"

heading "perf report of the workload backend (pid $backend), top symbols summed by name"
as_pg_user perf report -i "$dir"/perf.data --stdio --sort sym 2>/dev/null |
	"$here"/perf-by-name.sh - | sed -n 1,20p

heading "done"
