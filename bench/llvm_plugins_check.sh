#!/bin/bash
# What jitprof's sinks and LLVM's own plugins (jitprof.llvm_plugins, LLVM 19
# and later) write for the same code: the companion of bench/llvm_plugins.sh,
# which measures their cost.  On one throwaway cluster with the corpus's
# data, for each of
#
#   jitprof   jitprof.perf_jitdump = on, jitprof.gdb = on
#   llvm      jitprof.llvm_plugins = all (PerfSupportPlugin and
#             DebugObjectManagerPlugin), jitprof's sinks off
#
# one session (jitprof's perf map off) runs the corpus's Q1 in a cursor,
# under perf record; it prints
#
#   - the jitdump file's records by type (bench/jitdump_records.pl),
#   - gdb's JIT entries and the name gdb gives the address of the cursor's
#     first function, while the cursor's code is live and after COMMIT has
#     freed it,
#   - the top of perf report (perf inject --jit) and the first lines of
#     perf annotate of the hottest JIT symbol,
#
# and then the records again with jitprof.steps = on (debug information).
#
#   bench/llvm_plugins_check.sh
#
# On Debian 13:
#   JITPROF_CHROOT_DIR=... tools/platform.sh trixie --run bench/llvm_plugins_check.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh

build_and_install >/dev/null

work=$(make_workdir bench-plugins-check)
cleanup() {
	exec 3>&- 2>/dev/null || true
	stop_clusters
	rm -rf "$work"
}
trap cleanup EXIT

init_cluster "$work/data" "$PG_PORT" "$work" "shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
jit_above_cost = 0
jit_inline_above_cost = 0
jit_optimize_above_cost = 0
max_parallel_workers_per_gather = 0
compute_query_id = on
jitprof.perf_map = off"
mkdir -p "$work/jitdump"
chown "$PG_OS_USER" "$work/jitdump"
as_pg_user env JITDUMPDIR="$work/jitdump" "$PG_BINDIR"/pg_ctl -D "$work/data" -l "$work/log" -w start >/dev/null
psql_do() {
	as_pg_user env PGOPTIONS="${2:-}" "$PG_BINDIR"/psql -X -At -v ON_ERROR_STOP=1 -h "$work" -p "$PG_PORT" -d postgres "${@:3}" -c "$1"
}
psql_do "SET client_min_messages = warning" "-c jit=off" -f "$work/test/corpus/schema.sql" >/dev/null
psql_do "CREATE EXTENSION jitprof" >/dev/null

q1=$(awk '/^-- Q1:/ {on = 1; next} on && /^$/ {exit} on' "$work/test/corpus/tpch.sql" | sed 's/;$//')

gdb_entries() {
	local pid=$1 addr=$2
	cat >"$work/count.gdb" <<GDB
$(cat "$work/test/lib/gdb_prologue.gdb")
python
n = 0
e = gdb.parse_and_eval("__jit_debug_descriptor")["first_entry"]
while int(e) != 0:
    n += 1
    e = e["next_entry"]
print("gdb JIT entries: %d" % n)
end
x/i $addr
GDB
	gdb -batch -p "$pid" -x "$work/count.gdb" 2>/dev/null | grep -E '^gdb JIT entries|^ *0x|^=> ' | sed 's/^/  /'
}

run_case() {
	local name=$1 opts=$2 fifo="$work/in.$1" out="$work/out.$1" pid addr
	echo "== $name ($opts)"
	rm -f "$fifo"
	mkfifo "$fifo"
	chown "$PG_OS_USER" "$fifo"
	as_pg_user env PGOPTIONS="-c client_min_messages=warning $opts" "$PG_BINDIR"/psql -X -At -h "$work" -p "$PG_PORT" -d postgres \
		<"$fifo" >"$out" 2>&1 &
	exec 3>"$fifo"
	echo "SELECT 'pid=' || pg_backend_pid();" >&3
	until grep -q '^pid=' "$out"; do sleep 0.1; done
	pid=$(sed -n 's/^pid=//p' "$out")
	perf record -q -k 1 -e cpu-clock -F 2000 -p "$pid" -o "$work/perf.$name.data" 2>/dev/null &
	local perf_pid=$!
	sleep 1
	printf 'BEGIN;\nDECLARE c CURSOR FOR %s;\nFETCH 1 FROM c;\n' "$q1" >&3
	echo "SELECT 'addr=' || address, symbol, llvm_name FROM jitprof_functions WHERE live AND node_type = 'Agg' ORDER BY address LIMIT 1;" >&3
	until grep -q '^addr=' "$out"; do sleep 0.1; done
	addr=$(sed -n 's/^addr=\([^|]*\).*/\1/p' "$out")
	echo " code live (cursor open), function at $addr ($(sed -n 's/^addr=[^|]*|//p' "$out" | tr '|' ' ')):"
	gdb_entries "$pid" "$addr"
	printf 'FETCH ALL FROM c;\nCOMMIT;\n' >&3
	printf '%s;\n%s;\n' "$q1" "$q1" >&3
	echo "SELECT 'done';" >&3
	until grep -q '^done' "$out"; do sleep 0.1; done
	kill -INT "$perf_pid"
	wait "$perf_pid" 2>/dev/null || true
	echo " after COMMIT and two more runs (the cursor's code freed):"
	gdb_entries "$pid" "$addr"
	exec 3>&-
	wait
	grep -E 'WARNING|ERROR' "$out" || true
	echo " jitdump files of the backend: $(find "$work/jitdump" -name "jit-$pid.dump" | wc -l)"
	for f in $(find "$work/jitdump" -name "jit-$pid.dump"); do
		perl "$work/bench/jitdump_records.pl" "$f" | sed 's/^/  /'
	done
	chown "$PG_OS_USER" "$work/perf.$name.data"
	(cd "$work" && perf inject -f --jit -i "perf.$name.data" -o "perf.$name.jit.data" 2>&1 | tail -2 | sed 's/^/  inject: /') || true
	echo " perf report (top 6 by symbol):"
	(cd "$work" && perf report -f -q -i "perf.$name.jit.data" --sort dso,sym --stdio 2>/dev/null | grep -v '^$' | head -6 | sed 's/^/  /') || true
	local top
	top=$(cd "$work" && perf report -f -q -i "perf.$name.jit.data" --sort sym --stdio 2>/dev/null |
		awk '/\[\.\] (q|evalexpr|deform)/ {print $NF; exit}') || true
	echo " perf annotate $top: $(cd "$work" && perf annotate -f -q -i "perf.$name.jit.data" --stdio "$top" 2>/dev/null | grep -c ':') lines"
	(cd "$work" && perf annotate -f -q -i "perf.$name.jit.data" --stdio "$top" 2>/dev/null | grep -v '^ *$' | head -4 | sed 's/^/  /') || true
	local jitted
	jitted=$(find "$work"/jitdump/.debug/jit -name "jitted-$pid-*.so" | wc -l)
	local with_eh=0 so
	for so in "$work"/jitdump/.debug/jit/*/jitted-"$pid"-*.so; do
		[ -f "$so" ] || continue
		readelf -S "$so" 2>/dev/null | grep -q '\.eh_frame ' && with_eh=$((with_eh + 1))
	done
	echo " perf inject: $jitted jitted .so files, $with_eh with an .eh_frame"
}

run_case jitprof "-c jitprof.perf_jitdump=on -c jitprof.gdb=on"
run_case llvm "-c jitprof.llvm_plugins=perf_debugger"
run_case jitprof_steps "-c jitprof.perf_jitdump=on -c jitprof.gdb=on -c jitprof.steps=on"
run_case llvm_steps "-c jitprof.llvm_plugins=perf_debugger -c jitprof.steps=on"
echo "server log lines written by LLVM's plugin (\"Writing unwind record\"): $(grep -c '^Writing unwind record' "$work/log" || true)"
grep -E 'PANIC|terminated by signal' "$work/log" || echo "no crash in the server log"
