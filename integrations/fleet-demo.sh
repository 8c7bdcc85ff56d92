#!/bin/bash
# A two-server fleet on one machine, for doc/monitoring.md: two throwaway
# clusters with jitprof (db1 runs a scan-heavy query, db2 an aggregate-heavy
# one), one prometheus-postgres-exporter per cluster with
# integrations/postgres_exporter/jitprof.yaml (its flags from
# exporter-args.sh, for the installed exporter), and a prometheus server
# scraping both every 2 s.  It prints a sample of /metrics and the answers
# of the PromQL queries the document shows, then stops everything it
# started.  Everything listens on 127.0.0.1 or a unix socket.
#
#   integrations/fleet-demo.sh
# Run as root (it builds and installs like tools/test.sh; JITPROF_PGTREE and
# JITPROF_PORT are honoured).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir fleet)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	stop_clusters
	rm -rf "$work"
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
psql_() {
	local port=$1
	shift
	as_pg_user "$PG_BINDIR"/psql -X -q -v ON_ERROR_STOP=1 -h "$work" -p "$port" -d postgres "$@"
}

conf="shared_preload_libraries = 'jitprof,pg_stat_statements'
jit_provider = 'jitprof'
jit_above_cost = 0
jitprof.tiering = off
compute_query_id = on
max_parallel_workers_per_gather = 0"
targets=
eports=()
for i in 1 2; do
	port=$((PG_PORT + i))
	init_cluster "$work/db$i" "$port" "$work" "$conf"
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/db$i" -l "$work/db$i.log" -w start >/dev/null
	psql_ "$port" -c "CREATE EXTENSION jitprof" -c "CREATE EXTENSION pg_stat_statements" \
		-c "CREATE ROLE jitprof_exporter LOGIN" -c "GRANT pg_monitor TO jitprof_exporter" \
		-c "ALTER ROLE jitprof_exporter SET jit = off" \
		-c "CREATE TABLE f AS SELECT random() AS a, random() AS b, random() AS c FROM generate_series(1, 300000)"
	eport=$(free_port)
	eports+=("$eport")
	# the flags this exporter release takes (exporter-args.sh reads its --help)
	mapfile -t args < <("$TOP"/integrations/postgres_exporter/exporter-args.sh \
		"$TOP"/integrations/postgres_exporter/jitprof.yaml)
	cmd=(prometheus-postgres-exporter "${args[@]}"
		--web.listen-address=127.0.0.1:"$eport")
	dsn="host=$work port=$port user=jitprof_exporter dbname=postgres sslmode=disable"
	if [ "$i" = 1 ]; then
		echo "\$ DATA_SOURCE_NAME='$dsn' \\"
		echo "    ${cmd[*]//$TOP\//}"
	fi
	DATA_SOURCE_NAME="$dsn" runuser -u "$PG_OS_USER" -- "${cmd[@]}" --log.level=warn \
		>"$work/exporter$i.log" 2>&1 &
	pids+=($!)
	targets="$targets
      - targets: ['127.0.0.1:$eport']
        labels: {instance: 'db$i'}"
done

pport=$(free_port)
cat >"$work/prometheus.yml" <<CONF
global:
  scrape_interval: 2s
scrape_configs:
  - job_name: postgres
    static_configs:$targets
CONF
chown "$PG_OS_USER" "$work/prometheus.yml"
runuser -u "$PG_OS_USER" -- prometheus --config.file="$work/prometheus.yml" \
	--storage.tsdb.path="$work/tsdb" --web.listen-address=127.0.0.1:"$pport" \
	--log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)

scan="SELECT count(*) FROM f WHERE a * b + b * c - a * c * 0.5 + (a + b) * (b + c) * (c + a) > 0.7 AND a * a + b * b + c * c < 2.5;"
agg="SELECT sum(a * b * c + sqrt(a + b + c) * ln(b + 1.5)) FROM f;"
# 30 s of workload on both servers while Prometheus scrapes them
end=$((SECONDS + 30))
while [ $SECONDS -lt $end ]; do
	psql_ $((PG_PORT + 1)) -o /dev/null -c "$scan" &
	w=$!
	psql_ $((PG_PORT + 2)) -o /dev/null -c "$agg" -c "$scan"
	wait "$w"
done
sleep 3

echo
pattern='^(# (HELP|TYPE) )?jitprof_(hotspot_self_samples|query_executions|sampler_(samples_taken|evictions|seconds_since_reset))'
echo "\$ curl -s http://127.0.0.1:${eports[0]}/metrics | grep -E '$pattern'"
curl -s "http://127.0.0.1:${eports[0]}/metrics" | grep -E "$pattern"

promql() {
	echo
	echo "PromQL: $1"
	curl -s -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
		python3 -c '
import json, sys
# largest value first, then by labels: the order Prometheus returns
# series in differs between its releases
rows = []
for r in json.load(sys.stdin)["data"]["result"]:
    m = r["metric"]
    rows.append((-float(r["value"][1]), " ".join("%s=%s" % (k, m[k]) for k in sorted(m)), r["value"][1]))
for _, labels, value in sorted(rows):
    print("  " + labels + "  " + value)'
}
promql 'topk(5, sum by (instance, queryid, plan_node_id, node_type, role) (rate(jitprof_hotspot_self_samples[1m])))'
promql 'sum by (instance) (rate(jitprof_sampler_jit_self_samples[1m])) / sum by (instance) (rate(jitprof_sampler_samples_taken[1m]))'
promql 'topk(3, rate(jitprof_query_jit_self_samples[1m]) / rate(jitprof_query_samples[1m]))'
promql 'sum by (instance) (increase(jitprof_sampler_evictions[1h]))'
