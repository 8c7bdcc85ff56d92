#!/bin/bash
# Cost of registering JIT code with gdb, per object, with no debugger and
# with gdb attached while 1,000 objects are live.
#
# One session opens cursors in a single transaction: each DECLARE + FETCH
# compiles and links one JIT object (one llvmjit module) and the open cursor
# keeps it live until COMMIT.  That is how 1,000 objects are held at once
# (one query with many plan nodes still makes one object).  Per object, the
# script reports the time for
#
#   first100   cursors 1-100      (0 to 100 objects live)
#   at1000     cursors 1001-1100  (1,000 to 1,100 objects live)
#   commit     closing all 1,100  (unregistration)
#
# in six configurations measured side by side, interleaved round by round:
#
#   jitprof            jitprof.gdb = off
#   jitprof_gdb        jitprof.gdb = on, no debugger
#   jitprof_gdb_att    jitprof.gdb = on, gdb attached to the backend
#   llvmjit            stock provider
#   llvmjit_dbg        stock provider, jit_debugging_support = on
#   llvmjit_dbg_att    same, gdb attached
#
# For jitprof with jitprof.gdb = on it also prints the sink's own timers
# (jitprof_status: gdb_build_us, gdb_register_us, gdb_unregister_us), which
# isolate the sink from compilation, and the time gdb takes to attach to a
# backend holding 1,100 registered objects.
#
#   bench/gdb_registration.sh              3 rounds
#   ROUNDS=5 bench/gdb_registration.sh
#   CONFIGS="jitprof jitprof_gdb" bench/gdb_registration.sh   some configurations
#
# Run as root (it builds and installs jitprof like tools/test.sh) or as the
# postgres user; set JITPROF_PGTREE/JITPROF_PORT as for tools/test.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh

ROUNDS=${ROUNDS:-3}
port_jp=$PG_PORT
port_stock=$((PG_PORT + 1))

build_and_install

work=$(make_workdir bench-gdb)
cleanup() {
	stop_clusters
	rm -rf "$work"
}
trap cleanup EXIT

start_cluster() {
	local name=$1 port=$2 extra=$3
	init_cluster "$work/$name" "$port" "$work" "jit = on
jit_above_cost = 0
jit_inline_above_cost = -1
jit_optimize_above_cost = -1
compute_query_id = on
max_parallel_workers_per_gather = 0
$extra"
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/$name" -l "$work/$name.log" -w start >/dev/null
}

# jitprof must not be preloaded in the stock cluster: its linker would
# replace the stock one there too.
start_cluster jitprof "$port_jp" "shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off"
start_cluster stock "$port_stock" "jit_provider = 'llvmjit'"
as_pg_user "$PG_BINDIR"/psql -X -q -h "$work" -p "$port_jp" -d postgres -c 'CREATE EXTENSION jitprof'

# gdb detaches when the backend calls pg_backend_pid(), the script's signal
cat "$here"/../test/lib/gdb_prologue.gdb - >"$work/attach.gdb" <<'EOF'
break pg_backend_pid
echo @@READY\n
continue
detach
echo @@DETACHED\n
EOF

# psql lines that open cursors $1..$2 (each DECLARE + FETCH: one JIT object)
cursors() {
	cat <<EOF
SET jit = off;
SELECT stmt FROM (
  SELECT 0 AS o, 'SET jit = on' AS stmt
  UNION ALL SELECT 2 * i - 1, format('DECLARE c%s CURSOR FOR SELECT sum(g) FROM generate_series(1, 10) g WHERE g > %s', i, i) FROM generate_series($1, $2) i
  UNION ALL SELECT 2 * i, format('FETCH c%s', i) FROM generate_series($1, $2) i
  UNION ALL SELECT 2147483647, 'SET jit = off') s ORDER BY o \gexec
EOF
}

# a snapshot: wall clock, plus the gdb sink's timers when jitprof is loaded
snapshot() {
	if [ "$2" = jitprof ]; then
		echo "SELECT extract(epoch FROM clock_timestamp()) AS t$1,
  (SELECT value FROM jitprof_status WHERE name = 'gdb_build_us') AS b$1,
  (SELECT value FROM jitprof_status WHERE name = 'gdb_register_us') AS r$1,
  (SELECT value FROM jitprof_status WHERE name = 'gdb_unregister_us') AS u$1,
  (SELECT value FROM jitprof_status WHERE name = 'gdb_objects_registered') AS n$1 \gset"
	else
		echo "SELECT extract(epoch FROM clock_timestamp()) AS t$1, 0 AS b$1, 0 AS r$1, 0 AS u$1, 0 AS n$1 \gset"
	fi
}

# the psql script of one configuration: $1 jitprof|stock, $2 attach|none,
# $3 probe (time a gdb attach with all objects live)|none
bench_script() {
	cat <<EOF
\set ON_ERROR_STOP on
\o /dev/null
SET jit = off;
SELECT pg_backend_pid() AS pid \gset
\setenv JP_BACKEND :pid
EOF
	if [ "$2" = attach ]; then
		echo "\\! timeout 600 gdb -nx -batch -x $work/attach.gdb -p \$JP_BACKEND > $work/gdb.out 2>&1 & until grep -q '^@@READY' $work/gdb.out 2>/dev/null; do sleep 0.1; done"
	fi
	echo "BEGIN;"
	snapshot 0 "$1"
	cursors 1 100
	snapshot 1 "$1"
	cursors 101 1000
	snapshot 2 "$1"
	cursors 1001 1100
	snapshot 3 "$1"
	if [ "$3" = probe ]; then
		echo "\\! s=\$(date +%s%N); gdb -nx -batch -ex 'set debuginfod enabled off' -p \$JP_BACKEND >/dev/null 2>&1; echo \$(( (\$(date +%s%N) - s) / 1000000 )) > $work/attach_ms"
	fi
	# COMMIT is timed from here, after the probe
	snapshot p "$1"
	echo "COMMIT;"
	snapshot 4 "$1"
	if [ "$2" = attach ]; then
		echo "SELECT pg_backend_pid();"
		echo "\\! until grep -q '^@@DETACHED' $work/gdb.out 2>/dev/null; do sleep 0.1; done"
	fi
	cat <<'EOF'
\o
SELECT format('%s %s %s %s %s %s %s %s %s',
  round(1000 * (:t1 - :t0) / 100, 3),
  round(1000 * (:t3 - :t2) / 100, 3),
  round(1000 * (:t4 - :tp) / 1100, 3),
  round((:b1 - :b0)::numeric / greatest(:n1 - :n0, 1), 1),
  round((:r1 - :r0)::numeric / greatest(:n1 - :n0, 1), 1),
  round((:r3 - :r2)::numeric / greatest(:n3 - :n2, 1), 1),
  round((:u4 - :up)::numeric / 1100, 1),
  :n4 - :n0,
  round((:b3 - :b2)::numeric / greatest(:n3 - :n2, 1), 1));
EOF
}

configs=(${CONFIGS:-jitprof jitprof_gdb jitprof_gdb_att llvmjit llvmjit_dbg llvmjit_dbg_att})
declare -A port opts kind attach probe results
for c in "${configs[@]}"; do
	case $c in
		jitprof*) port[$c]=$port_jp kind[$c]=jitprof ;;
		llvmjit*) port[$c]=$port_stock kind[$c]=stock ;;
	esac
	attach[$c]=none
	probe[$c]=none
done
opts[jitprof]="-c jitprof.gdb=off"
opts[jitprof_gdb]="-c jitprof.gdb=on"
probe[jitprof_gdb]=probe
opts[jitprof_gdb_att]="-c jitprof.gdb=on"
attach[jitprof_gdb_att]=attach
opts[llvmjit]=""
opts[llvmjit_dbg]="-c jit_debugging_support=on"
opts[llvmjit_dbg_att]="-c jit_debugging_support=on"
attach[llvmjit_dbg_att]=attach

for c in "${configs[@]}"; do
	bench_script "${kind[$c]}" "${attach[$c]}" "${probe[$c]}" >"$work/$c.sql"
done
chown -R "$PG_OS_USER" "$work"

# one line of figures: first100 at1000 commit build0 register0 register1000
# unregister registered build1000
run_one() {
	as_pg_user env PGOPTIONS="${opts[$1]}" "$PG_BINDIR"/psql -X -q -At -h "$work" \
		-p "${port[$1]}" -d postgres -f "$work/$1.sql"
}

echo "gdb registration benchmark: $ROUNDS rounds, 1,100 cursors (one JIT object each) per configuration"
echo "(ms per object; round r: first100 at1000 commit)"
for r in $(seq 1 "$ROUNDS"); do
	for c in "${configs[@]}"; do
		line=$(run_one "$c")
		results[$c]="${results[$c]:-}$line"$'\n'
		[ "${probe[$c]}" = probe ] && results[attach_ms]="${results[attach_ms]:-} $(cat "$work/attach_ms")"
		echo "round $r $c: $(echo "$line" | cut -d' ' -f1-3)"
	done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
# median of column $2 of configuration $1's lines
col() { echo -n "${results[$1]}" | cut -d' ' -f"$2" | median; }

echo
echo "wall clock per object, median of $ROUNDS rounds (ms): compile + link + registration"
printf '%-18s %12s %12s %12s\n' configuration first100 at1000 commit
for c in "${configs[@]}"; do
	printf '%-18s %12.3f %12.3f %12.3f\n' "$c" "$(col "$c" 1)" "$(col "$c" 2)" "$(col "$c" 3)"
done

have() { [ -n "${results[$1]:-}" ]; }

echo
echo "jitprof's gdb sink alone, per object, median (us): from jitprof_status timers"
printf '%-18s %9s %11s %12s %14s %11s %8s\n' configuration build@0 build@1000 register@0 register@1000 unregister objects
for c in jitprof_gdb jitprof_gdb_att; do
	have "$c" || continue
	printf '%-18s %9.1f %11.1f %12.1f %14.1f %11.1f %8s\n' "$c" "$(col "$c" 4)" "$(col "$c" 9)" \
		"$(col "$c" 5)" "$(col "$c" 6)" "$(col "$c" 7)" "$(col "$c" 8)"
done
if have attach_ms; then
	echo "gdb attach + detach with 1,100 objects registered: $(echo "${results[attach_ms]}" | median) ms"
fi

echo
ratio() {
	if have "$1" && have "$2"; then
		awk -v a="$(col "$1" "$3")" -v b="$(col "$2" "$3")" 'BEGIN {printf "%.2f", a / b}'
	else
		echo "n/a"
	fi
}
for p in "first100 1" "at1000 2" "commit 3"; do
	set -- $p
	echo "$1: jitprof_gdb_att / llvmjit_dbg_att = $(ratio jitprof_gdb_att llvmjit_dbg_att "$2")," \
		"jitprof_gdb / jitprof = $(ratio jitprof_gdb jitprof "$2")," \
		"jitprof / llvmjit = $(ratio jitprof llvmjit "$2")"
done
