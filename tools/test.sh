#!/bin/bash
# Run every jitprof test: pg_regress suites (sql/, expected/) against a
# throwaway cluster, make installcheck exactly as README documents it
# (readme_installcheck, below), then the TAP integration tests (test/t/).
# Run as root on Debian: it installs what is missing (tools/deps.sh),
# builds and installs jitprof, for this machine's PostgreSQL and LLVM.
#
#   tools/test.sh               everything
#   tools/test.sh regress       only pg_regress and readme_installcheck
#   tools/test.sh tap [FILES]   only TAP tests (optionally some test/t files)
#   tools/test.sh readme        with JITPROF_INSTALLED only: README's own
#                               commands against the package (below)
#
# JITPROF_INSTALLED=1 builds and installs nothing: it tests the jitprof
# that is installed in the server's directories, as a Debian package
# installs it (tools/package.sh RELEASE --test).  The installed_package unit
# then checks that jitprof.so, jitprof_llvm.so and jitprof.control belong to
# one installed postgresql-NN-jitprof package, unchanged since (dpkg
# --verify), that the installed default_version is this tree's and the
# package's, and, in the pg_regress phase, that a JIT backend of the test
# server maps exactly those files (the same inodes).  Its installed_docs
# unit checks that every relative link of the installed README resolves,
# and in the "all" and "readme" modes readme_session runs README's install,
# first session and uninstall, extracted from README itself, on a Debian
# cluster (tools/readme_test.pl; the .debs are in JITPROF_DEBS).
#
# JITPROF_PLATFORMS="trixie forky" then runs the same tests on each of those
# Debian releases, in its chroot (tools/platform.sh), and
# JITPROF_PACKAGE_LEGS="bookworm trixie forky" then builds each release's
# packages in its chroot, installs them and runs the pg_regress suites
# against the installed files (tools/package.sh RELEASE --test regress);
# RELEASE:all instead of RELEASE runs every unit against them.
# Each such leg prints its own summary line, and the last line adds up
# every leg.
#
# Results are counted in units: a unit is one pg_regress suite (a name in
# the Makefile's REGRESS), one TAP file, check_layers (the include and
# symbol rules of doc/architecture.md and their self-test, every mode),
# check_settings (README's table of settings against src/, and its
# self-test, every mode), check_versions (tools/check_versions.pl and its
# self-test, every mode), readme_installcheck (make installcheck exactly as
# README documents it, in the all and regress modes) or, with
# JITPROF_INSTALLED, installed_package (below).  A unit is skipped when it
# skipped all its tests (a TAP file's skip_all), passed when all its tests
# passed and the logs of the servers it ran show no crash, and failed
# otherwise, also when it did not run to its end.  The last line, which CI
# reads, is
#
#   jitprof: N passed, N failed, N skipped
#
# and the exit status is non-zero when a unit failed or make installcheck
# did.  Before it come "jitprof: FAILED UNIT: why", "jitprof: skip FILE: ..."
# for a TAP file that skipped all or some of its tests, and
# "jitprof: time FILE SECONDS", each TAP file's wall time (also written to
# the file $JITPROF_TAP_TIMES when that is set).
#
# Crash check (test/lib/JitprofCrashes.pm): a server log line saying that a
# process was terminated by a signal or exited with a crash exit code, or
# holding a PANIC or a TRAP (failed assertion), fails the unit and is
# printed.
#  - pg_regress: the throwaway server's log.  A line is charged to the suite
#    whose session had that PID (log_connections names pg_regress/SUITE); a
#    line no session claims, or a failed "pg_ctl stop", fails every suite.
#  - TAP: every node log of the file, $work/tmp_check/log/FILE_NODE.log.  A
#    test that kills a server process on purpose does it with
#    JitprofTest::kill_backend, which declares that PID and signal: only
#    that death is accepted, and never SIGSEGV, SIGABRT, SIGBUS, SIGILL or
#    SIGFPE.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ]; then
	"$here"/deps.sh
fi
. "$here"/common.sh

what=${1:-all}
shift || true

# a package leg is RELEASE or RELEASE:all, read here once, before any test
# runs: package_releases[i] is its release, package_units[i] "regress" or
# "all"
package_releases=()
package_units=()
for package_leg in ${JITPROF_PACKAGE_LEGS:-}; do
	if ! [[ $package_leg =~ ^([a-z]+)(:all)?$ ]]; then
		echo "jitprof: JITPROF_PACKAGE_LEGS takes RELEASE or RELEASE:all, not \"$package_leg\"" >&2
		exit 2
	fi
	package_releases+=("${BASH_REMATCH[1]}")
	if [ -n "${BASH_REMATCH[2]}" ]; then
		package_units+=(all)
	else
		package_units+=(regress)
	fi
done

installed=${JITPROF_INSTALLED:-}
if [ -n "$installed" ] && [ -n "${JITPROF_PGTREE:-}" ]; then
	echo "jitprof: JITPROF_INSTALLED tests the server's own directories, not a JITPROF_PGTREE copy" >&2
	exit 1
fi
if [ -z "$installed" ]; then
	build_and_install
fi

work=$(make_workdir test)
declare -A preparing=()
noexec_dir=
readme_dirs=()
cleanup() {
	# a chroot being prepared unmounts its file systems when done
	for pid in "${preparing[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [ -n "$noexec_dir" ]; then
		umount "$noexec_dir" 2>/dev/null || true
	fi
	rm -rf "$work" ${readme_dirs[@]+"${readme_dirs[@]}"}
}
trap cleanup EXIT

# The chroots of the other legs are made and provisioned (debootstrap,
# tools/deps.sh inside) in the background while this machine's tests run:
# that work waits on the network and the disk, and each leg then starts at
# once.  tools/platform.sh's lock on the chroot orders the two runs.
chroot_releases=$(printf '%s\n' ${JITPROF_PLATFORMS:-} ${package_releases[@]+"${package_releases[@]}"} |
	awk 'NF && !seen[$0]++')
if [ -n "$chroot_releases" ] && [ "$(id -u)" = 0 ]; then
	prepare_start=$SECONDS
	for release in $chroot_releases; do
		echo "== $release: preparing its chroot in the background"
		(
			rc=0
			"$here"/platform.sh "$release" --run tools/deps.sh \
				>"$work/prepare-$release.log" 2>&1 || rc=$?
			echo "$rc" >"$work/prepare-$release.status"
		) &
		preparing[$release]=$!
	done
fi

status=0
passed=0
failed=0
skipped=0
# every failed unit, named again at the end: a long log's tail (all that a
# CI page may keep) then still says which unit failed and why
failures=()

# count UNIT passed|failed|skipped [WHY]
count() {
	case $2 in
		passed) passed=$((passed + 1)) ;;
		skipped) skipped=$((skipped + 1)) ;;
		*)
			failed=$((failed + 1))
			status=1
			echo "jitprof: FAILED $1${3:+: $3}"
			failures+=("$1${3:+: $3}")
			;;
	esac
}

# crash_check LOG... prints the lines of those server logs that show a
# crash, as LOG:LINENO: LINE; non-zero status if there is one.
crash_check() {
	perl "$work"/test/lib/JitprofCrashes.pm "$@"
}

# Both phases go through PGXS's "make installcheck" as README documents
# it: as the server's OS user (with CAP_PERFMON, for perf record -a:
# as_pg_user_perfmon), with PG_CONFIG naming the server under test,
# and only what a user may also give it: make variables on the command line
# (REGRESS=, PROVE_TESTS=, PROVE_FLAGS=) and the JITPROF_* settings of
# doc/testing.md.  Nothing is added to perl's or prove's paths: the
# Makefile alone must find test/lib (PERL5LIB and PERL5OPT are removed, so
# that a caller's cannot hide it either), and the readme_installcheck unit
# below runs the command with nothing of this script's environment at all.
pgxs_installcheck() {
	(cd "$work" && as_pg_user_perfmon env -u PERL5LIB -u PERL5OPT \
		make -s installcheck PG_CONFIG="$PG_BINDIR/pg_config" "$@")
}

# The layering of src/ (doc/architecture.md), whichever tests run: the
# includes, and the symbols each object uses from another (the Makefile's
# check-layer-symbols, which builds the objects if they are not there); the
# self-test shows that each rule still fails when broken.
echo "== layers (tools/check_layers.pl)"
if perl "$here"/check_layers.pl "$TOP"/src &&
	make -s -C "$TOP" check-layer-symbols &&
	perl "$here"/check_layers.pl --self-test "$TOP"/src >"$work"/layers.log 2>&1; then
	count check_layers passed
else
	cat "$work"/layers.log
	count check_layers failed "tools/check_layers.pl"
fi

# README's table of settings lists every setting src/ defines, and nothing
# else (tools/check_settings.pl), and each rule fails when broken.
echo "== settings (tools/check_settings.pl)"
if perl "$here"/check_settings.pl "$TOP" &&
	perl "$here"/check_settings.pl --self-test >"$work"/settings.log 2>&1; then
	count check_settings passed
else
	cat "$work"/settings.log
	count check_settings failed "tools/check_settings.pl"
fi

# The versions that META.json, the control files and debian/changelog name
# agree (tools/check_versions.pl), and each rule fails when broken.
echo "== versions (tools/check_versions.pl)"
if perl "$here"/check_versions.pl "$TOP" &&
	perl "$here"/check_versions.pl --self-test >"$work"/versions.log 2>&1; then
	count check_versions passed
else
	cat "$work"/versions.log
	count check_versions failed "tools/check_versions.pl"
fi

# JITPROF_INSTALLED: what the server will load is the package's files.
# package_files_ok is empty when they are not; package_why says why.
package_files_ok=
package_why=
if [ -n "$installed" ]; then
	echo "== the installed package (JITPROF_INSTALLED)"
	pkglibdir=$("$PG_BINDIR"/pg_config --pkglibdir)
	extdir=$("$PG_BINDIR"/pg_config --sharedir)/extension
	package_files=("$pkglibdir/jitprof.so" "$pkglibdir/jitprof_llvm.so" "$extdir/jitprof.control")
	package=
	for f in "${package_files[@]}"; do
		owner=$(dpkg-query -S "$f" 2>/dev/null | sed -n '1s/: .*//p' || true)
		owner=${owner%:*}
		if [ -z "$owner" ]; then
			package_why="no installed package holds $f"
			break
		elif [ -n "$package" ] && [ "$owner" != "$package" ]; then
			package_why="$f belongs to $owner, not $package"
			break
		fi
		package=$owner
	done
	if [ -z "$package_why" ]; then
		package_version=$(dpkg-query -W -f='${Version}' "$package")
		echo "jitprof: testing $package $package_version: ${package_files[*]}"
		upstream=${package_version%-*}
		installed_default=$(sed -nE "s/^default_version = '([^']+)'.*/\1/p" "$extdir/jitprof.control")
		tree_default=$(sed -nE "s/^default_version = '([^']+)'.*/\1/p" "$TOP/jitprof.control")
		verify=$(dpkg --verify "$package" 2>&1 || true)
		if [ -n "$verify" ]; then
			package_why="files of $package changed since it was installed: $verify"
		elif [ "$installed_default" != "$tree_default" ]; then
			package_why="the installed jitprof.control has default_version $installed_default, this tree's tests are for $tree_default"
		elif [ "${upstream%.0}" != "$installed_default" ]; then
			package_why="$package is version $package_version, its jitprof.control's default_version is $installed_default"
		else
			package_files_ok=1
		fi
	fi
	if [ -n "$package_why" ]; then
		echo "jitprof: $package_why"
	fi
	# the pg_regress phase adds what its server maps
	if [ "$what" != all ] && [ "$what" != regress ]; then
		if [ -n "$package_files_ok" ]; then
			count installed_package passed
		else
			count installed_package failed "$package_why"
		fi
	fi
fi

# package_mapped: whether a backend of the pg_regress server that has
# JIT-compiled a query maps jitprof.so and jitprof_llvm.so from the
# package's own files (the inode /proc/self/maps shows is the file's).
package_mapped() {
	local maps f want line
	maps=$(PGOPTIONS="-c jit=on -c jit_above_cost=0" as_pg_user "$PG_BINDIR"/psql -X -At \
		-h "$work" -p "$PG_PORT" -d postgres \
		-c 'SELECT sum(g) + 1 FROM generate_series(1, 10) g' \
		-c "SELECT pg_read_file('/proc/self/maps')") || return 1
	for f in "$pkglibdir/jitprof.so" "$pkglibdir/jitprof_llvm.so"; do
		want=$(stat -L -c '%i' "$f")
		line=$(awk -v f="$f" '$6 == f { print; exit }' <<<"$maps")
		if [ -z "$line" ]; then
			echo "jitprof: the JIT backend does not map $f"
			return 1
		fi
		if [ "$(awk '{ print $5 }' <<<"$line")" != "$want" ]; then
			echo "jitprof: the JIT backend maps another $f than the installed one (inode $want): $line"
			return 1
		fi
		echo "jitprof: the JIT backend maps $f, inode $want"
	done
}

if [ "$what" = all ] || [ "$what" = regress ]; then
	echo "== pg_regress (make installcheck) against a throwaway server"
	# the suites the Makefile lists: one that never ran failed too
	read -ra suites < <(make -s --no-print-directory -C "$work" -f Makefile -f - \
		print-regress <<<$'print-regress:\n\t@echo $(REGRESS)')
	data="$work/regress_data"
	server_log="$work"/regress_server.log
	as_pg_user "$PG_BINDIR"/initdb -D "$data" -A trust >/dev/null
	{
		cat "$work"/test/jitprof.conf
		printf "port = %s\nlisten_addresses = ''\nunix_socket_directories = '%s'\n" \
			"$PG_PORT" "$work"
		# for the crash check: which suite's session a PID was
		printf "log_line_prefix = '%%m [%%p] '\nlog_connections = on\n"
	} >>"$data"/postgresql.conf
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$server_log" -w start >/dev/null
	if [ -n "$installed" ]; then
		if [ -z "$package_files_ok" ]; then
			count installed_package failed "$package_why"
		elif package_mapped; then
			count installed_package passed
		else
			count installed_package failed "the server does not load $package's files"
		fi
	fi
	if ! PGHOST="$work" PGPORT="$PG_PORT" pgxs_installcheck TAP_TESTS= 2>&1 |
		tee "$work"/regress.log; then
		status=1
		echo "jitprof: make installcheck (pg_regress) failed"
	fi
	if grep -qE '\.\.\. FAILED|^(# )?not ok ' "$work"/regress.log; then
		head -200 "$work"/regression.diffs 2>/dev/null || true
	fi
	every=
	# after a crash, let recovery end first: PostgreSQL 15 can leave a fast
	# shutdown requested during crash recovery waiting for ever
	for _ in $(seq 120); do
		as_pg_user "$PG_BINDIR"/pg_isready -q -h "$work" -p "$PG_PORT" && break
		sleep 1
	done
	if ! as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast -w stop >/dev/null; then
		every="the server did not stop (pg_ctl stop -m fast failed)"
		echo "jitprof: $every; the end of its log:"
		tail -20 "$server_log"
		# leave no server behind the work directory's removal
		as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m immediate -w stop >/dev/null || true
	fi
	declare -A crashed=()
	if ! crash_check "$server_log" >"$work"/regress_crashes.txt; then
		echo "jitprof: crash in the pg_regress server's log:"
		cat "$work"/regress_crashes.txt
		while IFS= read -r line; do
			lineno=$(cut -d: -f2 <<<"$line")
			pid=$(sed -nE 's/.*\(PID ([0-9]+)\).*/\1/p; t; s/^[^:]*:[0-9]+: [^[]*\[([0-9]+)\].*/\1/p' <<<"$line")
			suite=
			if [ -n "$pid" ]; then
				suite=$(head -n "$lineno" "$server_log" |
					sed -nE "s|.*\[$pid\] .*connection authorized: .*application_name=pg_regress/([^ ]+).*|\1|p" |
					tail -n 1)
			fi
			if [ -n "$suite" ]; then
				crashed[$suite]=1
			else
				every="a crash in the server log that no suite's session claims"
			fi
		done <"$work"/regress_crashes.txt
	fi
	for s in "${suites[@]}"; do
		if [ -n "$every" ]; then
			count "$s" failed "$every"
		elif [ -n "${crashed[$s]:-}" ]; then
			count "$s" failed "a process of its session crashed"
		else
			# pg_regress's verdict: "test NAME ... ok   12 ms" (15), or in
			# TAP form "ok 1   - NAME   12 ms", "not ok 2 - NAME" (16 on)
			verdict=$(sed -nE "/^(test +| +)$s +\.\.\. /{s///; s/ +[0-9]+ ms\$//; p}
				/^ok +[0-9]+ +[-+] +$s( |\$)/{s/.*/ok/; p}
				/^not ok +[0-9]+ +[-+] +$s( |\$)/{s/.*/FAILED/; p}" \
				"$work"/regress.log | tail -n 1)
			case $verdict in
				ok) count "$s" passed ;;
				'') count "$s" failed "pg_regress gave no result for it" ;;
				FAILED) count "$s" failed "its output differs from expected/$s.out" ;;
				*) count "$s" failed "pg_regress: $verdict" ;;
			esac
		fi
	done
fi

# readme_installcheck: "make installcheck" exactly as README's "Building and packaging"
# documents it, so that a difference between README and what the command
# needs fails here rather than on a user's machine.  A new server gets
# README's own settings (its shared_preload_libraries and jit_provider
# lines, read from README.md: each name's first value, as a conf line or
# an ALTER SYSTEM) and Debian's default local authentication (peer), nothing
# else but where it listens; then, in a copy of the tree owned by the
# server's OS user, that user runs make installcheck with the environment
# of a fresh login (HOME, USER, LOGNAME, SHELL, the default PATH) plus
# README's PGHOST and PGPORT for a server off the default socket and port,
# PG_CONFIG when the server is not the pg_config on that PATH (README's way
# to name one), and PROVE_TESTS naming one TAP file (the whole TAP suite is
# the tap phase's).  It passes when make succeeds, every suite passes,
# prove reports that file passed, and no server log shows a crash.
readme_installcheck() {
	local dir port data log settings name value why="" pgc=() home
	dir=$(make_workdir readme)
	readme_dirs+=("$dir")
	port=$((PG_PORT + 1))
	data="$dir/readme_data"
	log="$dir/readme_server.log"
	settings=$(perl -ne '
		if (/^\s*(?:ALTER\s+SYSTEM\s+SET\s+)?(shared_preload_libraries|jit_provider)\s*(?:=|\bTO\b)\s*('\''[^'\'']*'\'')/i
			&& !$seen{lc $1}++) { print lc($1), " = $2\n" }' "$TOP"/README.md)
	for name in shared_preload_libraries jit_provider; do
		value=$(sed -n "s/^$name = //p" <<<"$settings")
		if [ -z "$value" ]; then
			count readme_installcheck failed "README.md sets no $name"
			return
		fi
		echo "jitprof: README's setting: $name = $value"
	done
	if ! as_pg_user "$PG_BINDIR"/initdb -D "$data" --auth-local=peer --auth-host=scram-sha-256 >/dev/null; then
		count readme_installcheck failed "initdb failed"
		return
	fi
	printf "%s\nport = %s\nlisten_addresses = ''\nunix_socket_directories = '%s'\n" \
		"$settings" "$port" "$dir" >>"$data"/postgresql.conf
	if ! as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$log" -w start >/dev/null; then
		tail -20 "$log"
		count readme_installcheck failed "the server with README's settings did not start"
		return
	fi
	# README: "with more than one server installed, name one"
	if [ "$(env -i PATH=/usr/local/bin:/usr/bin:/bin pg_config --bindir 2>/dev/null)" != "$PG_BINDIR" ]; then
		pgc=(PG_CONFIG="$PG_BINDIR/pg_config")
	fi
	home=$(getent passwd "$PG_OS_USER" | cut -d: -f6)
	echo "jitprof: as $PG_OS_USER in a copy of the tree: PGHOST=$dir PGPORT=$port make installcheck PROVE_TESTS=$readme_tap_file ${pgc[*]}"
	if ! (cd "$dir" && as_pg_user env -i HOME="$home" USER="$PG_OS_USER" LOGNAME="$PG_OS_USER" \
		SHELL=/bin/sh PATH=/usr/local/bin:/usr/bin:/bin PGHOST="$dir" PGPORT="$port" \
		make installcheck PROVE_TESTS="$readme_tap_file" ${pgc[@]+"${pgc[@]}"}) \
		>"$dir"/readme.log 2>&1; then
		why="make installcheck failed"
	fi
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast -w stop >/dev/null ||
		as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m immediate -w stop >/dev/null || true
	if [ -z "$why" ] && grep -q "Can't locate" "$dir"/readme.log; then
		why="a module was not found"
	elif [ -z "$why" ] && ! grep -qE '^Result: PASS$' "$dir"/readme.log; then
		why="prove did not report \"Result: PASS\" for $readme_tap_file"
	elif [ -z "$why" ] && grep -qE '\.\.\. FAILED|^not ok ' "$dir"/readme.log; then
		why="a pg_regress suite failed"
	fi
	if [ -z "$why" ] && ! grep -qE "^(test +| +)?jit_advice +\.\.\. ok|^ok +[0-9]+ +[-+] +jit_advice " "$dir"/readme.log; then
		why="pg_regress did not run every suite"
	fi
	if ! crash_check "$log" "$dir"/tmp_check/log/*.log >"$dir"/crashes.txt 2>/dev/null &&
		[ -s "$dir"/crashes.txt ]; then
		cat "$dir"/crashes.txt
		why="${why:+$why; }a server process crashed"
	fi
	if [ -n "$why" ]; then
		echo "---- make installcheck's output (tail)"
		tail -60 "$dir"/readme.log
		head -100 "$dir"/regression.diffs 2>/dev/null || true
		count readme_installcheck failed "$why"
	else
		grep -E '^(ok|not ok) |^test .* \.\.\. |^Files=|^Result:' "$dir"/readme.log || true
		count readme_installcheck passed
	fi
}

# the TAP file of readme_installcheck: quick, and it loads test/lib's
# JitprofTest, as every file does
readme_tap_file=test/t/001_provider.pl
if [ "$what" = all ] || [ "$what" = regress ]; then
	echo "== make installcheck as README documents it (readme_installcheck)"
	readme_installcheck
fi

if [ "$what" = all ] || [ "$what" = tap ]; then
	if [ $# -gt 0 ]; then
		files=("$@")
	else
		files=(test/t/*.pl)
	fi
	echo "== TAP (make installcheck): ${files[*]}"
	# 061_jitdump_noexec_dir.pl needs a file system mounted noexec, which
	# only root can mount: a small tmpfs, private to the cluster's OS user.
	if [ "$(id -u)" = 0 ]; then
		noexec_dir="$work/noexec"
		mkdir -p "$noexec_dir"
		mount -t tmpfs -o noexec,nosuid,nodev,size=4m,mode=0700,uid="$(id -u "$PG_OS_USER")" \
			jitprof-noexec "$noexec_dir"
	fi
	# TAP files run two at a time by default (JITPROF_JOBS): most of them
	# keep one core busy, and every one must pass on a busy machine anyway.
	jobs=${JITPROF_JOBS:-2}
	# prove's harness is test/lib/JitprofHarness.pm: one line per file in
	# $summary with its result, wall time and skipped subtests.
	summary="$work"/tap-summary.txt
	if ! JITPROF_NOEXEC_DIR="$noexec_dir" JITPROF_TAP_SUMMARY="$summary" \
		pgxs_installcheck REGRESS= PROVE_TESTS="${files[*]}" \
		PROVE_FLAGS="--harness JitprofHarness --timer -j$jobs ${JITPROF_PROVE_FLAGS:-}" 2>&1 |
		tee "$work"/tap.log; then
		status=1
		echo "jitprof: make installcheck (TAP) failed"
	fi
	logdir="$work"/tmp_check/log
	if [ -n "${JITPROF_TAP_TIMES:-}" ]; then
		: >"$JITPROF_TAP_TIMES"
	fi
	for f in "${files[@]}"; do
		base=$(basename "$f" .pl)
		result=failed why="prove gave no result for it (not run, or not to its end)" seconds='' tests=0 nskip=0 reasons=''
		if line=$(awk -F'\t' -v f="$f" '$1 == f' "$summary" 2>/dev/null | tail -n 1) && [ -n "$line" ]; then
			IFS=$'\t' read -r _ result seconds tests nskip reasons <<<"$line"
			why="prove counts it failed"
		fi
		if [ -n "$seconds" ]; then
			echo "jitprof: time $f $seconds"
			if [ -n "${JITPROF_TAP_TIMES:-}" ]; then
				echo "$f $seconds" >>"$JITPROF_TAP_TIMES"
			fi
		fi
		if [ "$result" = skipped ]; then
			echo "jitprof: skip $f: all its tests (${reasons:-no reason given})"
		elif [ "$nskip" -gt 0 ]; then
			echo "jitprof: skip $f: $nskip of $tests tests (${reasons:-no reason given})"
		fi
		# this file's node logs: FILE_NODE.log, not those of a longer name
		logs=()
		for log in "$logdir/${base}"_*.log; do
			[ -f "$log" ] || continue
			owner=$base
			for g in "${files[@]}"; do
				b=$(basename "$g" .pl)
				if [[ $(basename "$log") == "${b}"_* ]] && [ ${#b} -gt ${#owner} ]; then
					owner=$b
				fi
			done
			if [ "$owner" = "$base" ]; then
				logs+=("$log")
			fi
		done
		if [ ${#logs[@]} -gt 0 ] && ! crash_check "${logs[@]}" >"$work/crashes-$base.txt"; then
			echo "jitprof: crash in the server logs of $f:"
			cat "$work/crashes-$base.txt"
			result=failed why="a server process crashed"
		fi
		count "$f" "$result" "$why"
		if [ "$result" = failed ]; then
			for log in "$logdir/regress_log_$base" "${logs[@]}"; do
				if [ -f "$log" ]; then
					echo "---- $log (tail)"
					tail -40 "$log"
				fi
			done
		fi
	done
fi

# JITPROF_INSTALLED: the installed docs' links resolve (every mode), and
# README's own install, first session and uninstall run as written against
# the package ("all" and "readme" modes; README's session is Debian 13's,
# and it needs the .debs of the package leg, JITPROF_DEBS), last, since it
# purges and reinstalls the package (tools/readme_test.pl).
if [ -n "$installed" ]; then
	major=$("$PG_BINDIR"/pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	docdir=/usr/share/doc/postgresql-$major-jitprof
	echo "== the installed docs ($docdir)"
	if perl "$here"/readme_test.pl links "$docdir" >"$work"/docs.log 2>&1; then
		cat "$work"/docs.log
		count installed_docs passed
	else
		cat "$work"/docs.log
		count installed_docs failed "$(tail -n 1 "$work"/docs.log)"
	fi
	if [ "$what" = all ] || [ "$what" = readme ]; then
		echo "== README's install, first session and uninstall (tools/readme_test.pl session)"
		if [ "${JITPROF_PLATFORM:-}" != trixie ]; then
			echo "jitprof: skip readme_session: README's first session is written for Debian 13 (trixie), this is ${JITPROF_PLATFORM:-the host}"
			count readme_session skipped
		elif [ -z "${JITPROF_DEBS:-}" ]; then
			count readme_session failed "JITPROF_DEBS names no directory of .debs (tools/package.sh sets it)"
		elif perl "$here"/readme_test.pl session "$TOP"/README.md "$JITPROF_DEBS" trixie "$major" "$PG_PORT" \
			"${JITPROF_README_TRANSCRIPT:-$work/readme-transcript.txt}" 2>&1 | tee "$work"/readme.log &&
			grep -qx 'readme: ok' "$work"/readme.log; then
			count readme_session passed
		else
			count readme_session failed "$(grep '^readme: FAILED' "$work"/readme.log | head -n 1)"
		fi
	fi
fi

# wait_chroot RELEASE: waits for that release's chroot preparation, if one
# was started, and reports it; a failed one is retried by the leg itself.
wait_chroot() {
	[ -n "${preparing[$1]:-}" ] || return 0
	# bash may have reaped it already: its status is in the file
	wait "${preparing[$1]}" 2>/dev/null || true
	unset "preparing[$1]"
	local prepared
	prepared=$(cat "$work/prepare-$1.status" 2>/dev/null || echo "unknown")
	echo "== $1: chroot ready $((SECONDS - prepare_start)) s after the start (its preparation's exit status: $prepared)"
	[ "$prepared" = 0 ] || tail -20 "$work/prepare-$1.log"
}

# leg NAME COMMAND...: runs another leg's suite and adds the counts of its
# summary line to this run's; no summary line is one failed unit.
leg() {
	local name=$1 log="$work/leg-${1// /-}.log" leg_status=0 line p f k
	shift
	echo "== $name ($*)"
	"$@" 2>&1 | tee "$log" || leg_status=$?
	line=$(grep -E '^jitprof: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1 || true)
	if [ -z "$line" ]; then
		count "$name" failed "${1##*/} $2 gave no summary (exit status $leg_status)"
		summaries+=("$name: no summary")
		return
	fi
	read -r p f k < <(sed -E 's/^jitprof: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/' <<<"$line")
	while IFS= read -r unit; do
		failures+=("$name: $unit")
	done < <(sed -n 's/^jitprof: FAILED //p' "$log")
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + k))
	if [ "$leg_status" != 0 ]; then
		status=1
		[ "$f" -gt 0 ] || count "$name" failed "${1##*/} $2 exited with status $leg_status"
	fi
	summaries+=("$name: ${line#jitprof: }")
}

# The other legs: each platform in its chroot with the same arguments, then
# each release's packages.
if [ -n "$chroot_releases" ]; then
	here_summary="jitprof: $passed passed, $failed failed, $skipped skipped"
	summaries=("platform host ($(pg_config --version)): ${here_summary#jitprof: }")
	for platform in ${JITPROF_PLATFORMS:-}; do
		wait_chroot "$platform"
		leg "platform $platform" "$here"/platform.sh "$platform" "$what" "$@"
	done
	for i in "${!package_releases[@]}"; do
		release=${package_releases[$i]}
		units=()
		if [ "${package_units[$i]}" = regress ]; then
			units=(regress)
		fi
		wait_chroot "$release"
		leg "package $release" "$here"/package.sh "$release" --test ${units[@]+"${units[@]}"}
	done
	for line in "${summaries[@]}"; do
		echo "jitprof: $line"
	done
fi

for unit in ${failures[@]+"${failures[@]}"}; do
	echo "jitprof: failed unit: $unit"
done
echo "jitprof: $passed passed, $failed failed, $skipped skipped"
exit $status
