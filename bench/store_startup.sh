#!/bin/bash
# Start-up cost of the hotspot store at given caps: how long "pg_ctl start"
# takes, how much shared memory the postmaster then has resident
# (RssShmem), and what pg_shmem_allocations shows for jitprof's tables and
# for <anonymous>, with jitprof preloaded and, for comparison, without.
#
#   bench/store_startup.sh [MAX_HOTSPOTS MAX_PLAN_NODES MAX_STEPS [RUNS]]
# The defaults are the largest caps (1000000 10000000 10000000: about
# 4.85 GB of shared memory) and 3 runs.  Run as root (builds and installs
# like tools/test.sh; JITPROF_PGTREE and JITPROF_PORT are honoured).
set -euo pipefail

hotspots=${1:-1000000}
plan_nodes=${2:-10000000}
steps=${3:-10000000}
runs=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
build_and_install >/dev/null

work=$(make_workdir store-startup)
trap 'stop_clusters; rm -rf "$work"' EXIT
init_cluster "$work/data" "$PG_PORT" "$work" "
jitprof.max_hotspots = $hotspots
jitprof.max_plan_nodes = $plan_nodes
jitprof.max_steps = $steps"

psql_() {
	as_pg_user "$PG_BINDIR"/psql -XAt -h "$work" -p "$PG_PORT" -d postgres "$@"
}

for preload in jitprof ''; do
	echo "== shared_preload_libraries = '$preload'"
	for run in $(seq "$runs"); do
		t0=$(date +%s.%N)
		as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -l "$work/log" \
			-o "-c shared_preload_libraries='$preload'" -w start >/dev/null
		t1=$(date +%s.%N)
		pm=$(head -1 "$work/data/postmaster.pid")
		printf 'run %d: start %.2f s, postmaster %s\n' "$run" "$(echo "$t1 - $t0" | bc)" \
			"$(grep RssShmem /proc/"$pm"/status | tr -s ' \t' ' ')"
		if [ "$run" = "$runs" ]; then
			psql_ -c "SELECT name, size FROM pg_shmem_allocations
			          WHERE name LIKE 'jitprof %' OR name = '<anonymous>' ORDER BY 1"
		fi
		as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -w stop >/dev/null
	done
done
