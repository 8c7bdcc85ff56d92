# Shared settings for jitprof's scripts (sourced, not run).

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGXS_DIR=$(dirname "$(pg_config --pgxs)")/..
PG_REGRESS="$PGXS_DIR/test/regress/pg_regress"
TAP_LIB="$PGXS_DIR/test/perl"
PG_PORT=${JITPROF_PORT:-54390}

# JITPROF_PGTREE=DIR runs against a private copy of the PostgreSQL
# installation in DIR instead of the system one, so that several checkouts
# can be built and tested side by side: PostgreSQL finds its libraries
# relative to its binaries, and jit_provider must live in that library
# directory.
if [ -n "${JITPROF_PGTREE:-}" ]; then
	sys_lib=$(dirname "$(pg_config --pkglibdir)")
	sys_share=$(pg_config --sharedir)
	if [ ! -x "$JITPROF_PGTREE$sys_lib/bin/postgres" ]; then
		mkdir -p "$JITPROF_PGTREE$(dirname "$sys_lib")" "$JITPROF_PGTREE$(dirname "$sys_share")"
		cp -a "$sys_lib" "$JITPROF_PGTREE$(dirname "$sys_lib")/"
		cp -a "$sys_share" "$JITPROF_PGTREE$(dirname "$sys_share")/"
	fi
	# extensions installed on the system after the copy was made (PoWA,
	# pg_stat_statements...): add the files the copy lacks, keep the rest
	cp -an "$sys_lib" "$JITPROF_PGTREE$(dirname "$sys_lib")/" 2>/dev/null || true
	cp -an "$sys_share" "$JITPROF_PGTREE$(dirname "$sys_share")/" 2>/dev/null || true
	# the copy's pg_config names headers under the copy: link the system's,
	# so that it answers as the system's does (tests compile test modules
	# and read server headers through the pg_config on make's PATH)
	sys_include=$(pg_config --includedir)
	if [ ! -e "$JITPROF_PGTREE$sys_include" ]; then
		mkdir -p "$JITPROF_PGTREE$(dirname "$sys_include")"
		ln -s "$sys_include" "$JITPROF_PGTREE$sys_include"
	fi
	PG_BINDIR="$JITPROF_PGTREE$sys_lib/bin"
	INSTALL_DESTDIR=$JITPROF_PGTREE
else
	PG_BINDIR=$(pg_config --bindir)
	INSTALL_DESTDIR=
fi
export PG_TEST_PORT_DIR=/tmp/jitprof-portlock
mkdir -p "$PG_TEST_PORT_DIR"
chmod 1777 "$PG_TEST_PORT_DIR" 2>/dev/null || true

# The server refuses to run as root: clusters run as this OS user.
PG_OS_USER=${PG_OS_USER:-postgres}

as_pg_user() {
	if [ "$(id -un)" = "$PG_OS_USER" ]; then
		"$@"
	else
		runuser -u "$PG_OS_USER" -- "$@"
	fi
}

# as_pg_user, keeping one capability, CAP_PERFMON, ambient: "perf record
# -a" (test/t/018) needs it at perf_event_paranoid 2, which this machine
# has.  Where setpriv or the kernel cannot give it, the same as as_pg_user.
as_pg_user_perfmon() {
	local home
	if [ "$(id -u)" = 0 ] && [ "$(id -un)" != "$PG_OS_USER" ] &&
		setpriv --inh-caps +perfmon --ambient-caps +perfmon true 2>/dev/null; then
		home=$(getent passwd "$PG_OS_USER" | cut -d: -f6)
		env HOME="$home" USER="$PG_OS_USER" LOGNAME="$PG_OS_USER" \
			setpriv --reuid "$PG_OS_USER" --regid "$PG_OS_USER" --init-groups \
			--inh-caps +perfmon --ambient-caps +perfmon "$@"
	else
		as_pg_user "$@"
	fi
}

# A scratch directory the cluster's OS user owns, holding a copy of the
# tests (the checkout itself may sit where that user cannot read, as /root).
make_workdir() {
	local dir
	dir=$(mktemp -d /tmp/jitprof-"$1".XXXXXX)
	rsync -a --exclude .git --exclude '*.o' --exclude '*.so' "$TOP"/ "$dir"/
	chown -R "$PG_OS_USER" "$dir"
	echo "$dir"
}

build_and_install() {
	make -C "$TOP" -s
	make -C "$TOP" -s install DESTDIR="$INSTALL_DESTDIR"
}

# Throwaway clusters for the benchmarks: init_cluster DATADIR PORT SOCKETDIR
# EXTRA_CONF creates one, listening only on a socket; stop_clusters stops
# every cluster created so (call it from an EXIT trap).
CLUSTERS=()

init_cluster() {
	local data=$1 port=$2 sockets=$3 conf=$4
	as_pg_user "$PG_BINDIR"/initdb -D "$data" -A trust >/dev/null
	printf "port = %s\nlisten_addresses = ''\nunix_socket_directories = '%s'\n%s\n" \
		"$port" "$sockets" "$conf" >>"$data"/postgresql.conf
	CLUSTERS+=("$data")
}

stop_clusters() {
	local data
	for data in "${CLUSTERS[@]}"; do
		if [ -f "$data"/postmaster.pid ]; then
			as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m immediate stop >/dev/null 2>&1 || true
		fi
	done
}

# The lines a benchmark cluster running jitprof starts its CONF with: jitprof
# preloaded and the JIT provider, query IDs on, no parallel workers (with 2
# cores they only add noise), and JIT before the first row as PostgreSQL
# decides it (tiered JIT, on by default, is set per session where measured).
BENCH_JITPROF_CONF="shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
compute_query_id = on
max_parallel_workers_per_gather = 0
jitprof.tiering = off"

# start_bench_cluster NAME CONF: a throwaway cluster for a benchmark, with
# CONF added to its postgresql.conf, started; $work is its directory (the
# socket's too), removed with the cluster on exit.  psql_q runs psql on it,
# unaligned and quiet, stopping at the first error.
start_bench_cluster() {
	work=$(make_workdir "$1")
	trap 'stop_clusters; rm -rf "$work"' EXIT
	init_cluster "$work/data" "$PG_PORT" "$work" "$2"
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -l "$work/log" -w start >/dev/null
}

psql_q() {
	as_pg_user "$PG_BINDIR"/psql -X -q -At -v ON_ERROR_STOP=1 -h "$work" -p "$PG_PORT" -d postgres "$@"
}

# callgrind_single OUT LOG [OPTION...]: a single-user backend (postgres
# --single) on the stopped cluster $work/data, with the server OPTIONs,
# runs the statements on its standard input under callgrind, counting
# inside PostgresMain; the profile goes to OUT, the backend's output to
# LOG, and an ERROR in it stops the script.
callgrind_single() {
	local out=$1 log=$2
	shift 2
	rm -f "$out"
	as_pg_user valgrind --tool=callgrind --toggle-collect=PostgresMain \
		--callgrind-out-file="$out" "$PG_BINDIR"/postgres --single -D "$work/data" "$@" postgres \
		>"$log" 2>&1
	if grep -q 'ERROR' "$log"; then
		cat "$log" >&2
		exit 1
	fi
}

# count_instructions SQL...: callgrind_single's count for the statements
# SQL (one an argument); the backend's output is left in $work/single.log.
# For bench/tiering_wrapper.sh and bench/tiering_instructions.sh.
count_instructions() {
	printf '%s\n' "$@" | callgrind_single "$work/cg.out" "$work/single.log"
	sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$work/cg.out"
}

# The TPC-H-style statements of test/corpus/tpch.sql, one a line: its
# "-- Qn" label, a tab, the statement on one line without its semicolon
# (bench/Corpus.pm, which the Perl drivers use).
corpus_statements() {
	perl -I"$TOP/bench" -MCorpus -e 'print "$_->{label}\t$_->{sql}\n" for Corpus::tpch_statements($ARGV[0])' \
		"$TOP/test/corpus/tpch.sql"
}

# SQL defining cpu_ns(): the backend's own CPU time in ns, from
# /proc/self/schedstat, which the benchmarks read before and after each
# statement.
cpu_ns_sql() {
	cat <<'EOF'
CREATE FUNCTION cpu_ns() RETURNS bigint LANGUAGE sql
  AS $$ SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint $$;
EOF
}

# timed_sql SQL [N]: psql lines that run SQL N times (default 1), its
# output discarded, and leave the backend's CPU time they took, in ns, in
# the psql variable dt (cpu_ns_sql's cpu_ns() must exist).
timed_sql() {
	local sql=$1 n=${2:-1} k
	echo "SELECT cpu_ns() AS t0 \\gset"
	echo "\\o /dev/null"
	for ((k = 0; k < n; k++)); do echo "$sql;"; done
	echo "\\o"
	echo "SELECT cpu_ns() - :t0 AS dt \\gset"
}

# bench_banner ARGS...: a benchmark report's first line, naming the
# script, its arguments, the commit and the date.
bench_banner() {
	echo "# bench/$(basename "$0") $*, commit $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%F)"
}

# The corpus's schema and data (test/corpus/schema.sql), JIT off, with
# lineitem made SCALE times larger (its primary key dropped for the copies):
# SQL for psql, as bench/tiering.sh and bench/tiering_thread.sh load it.
corpus_sql() {
	local scale=$1
	echo "SET client_min_messages = warning; SET jit = off;"
	cat "$TOP/test/corpus/schema.sql"
	if [ "$scale" -gt 1 ]; then
		echo "CREATE TABLE lineitem_base AS SELECT * FROM lineitem;"
		echo "ALTER TABLE lineitem DROP CONSTRAINT lineitem_pkey;"
		for ((s = 1; s < scale; s++)); do
			echo "INSERT INTO lineitem SELECT * FROM lineitem_base;"
		done
	fi
}
