#!/bin/bash
# Run every jitprof test: pg_regress suites (sql/, expected/) against a
# throwaway cluster, then the TAP integration tests (test/t/).  Run as root
# on Debian 12: it installs what is missing, builds and installs jitprof.
#
#   tools/test.sh               everything
#   tools/test.sh regress       only pg_regress
#   tools/test.sh tap [FILES]   only TAP tests (optionally some test/t files)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ]; then
	"$here"/deps.sh
fi
. "$here"/common.sh

what=${1:-all}
shift || true

build_and_install

work=$(make_workdir test)
noexec_dir=
cleanup() {
	if [ -n "$noexec_dir" ]; then
		umount "$noexec_dir" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT
status=0
passed=0
failed=0

# Both phases go through PGXS's "make installcheck", as a user of the
# extension would run it, with the pg_config of the tree under test.
pgxs_installcheck() {
	(cd "$work" && as_pg_user env PATH="$PG_BINDIR:$PATH" \
		JITPROF_BUILD_PG_CONFIG="$(command -v pg_config)" \
		make -s installcheck PG_CONFIG="$PG_BINDIR/pg_config" "$@")
}

if [ "$what" = all ] || [ "$what" = regress ]; then
	echo "== pg_regress (make installcheck) against a throwaway server"
	data="$work/regress_data"
	as_pg_user "$PG_BINDIR"/initdb -D "$data" -A trust >/dev/null
	{
		cat "$work"/test/jitprof.conf
		printf "port = %s\nlisten_addresses = ''\nunix_socket_directories = '%s'\n" \
			"$PG_PORT" "$work"
	} >>"$data"/postgresql.conf
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -l "$work"/regress_server.log -w start >/dev/null
	if ! PGHOST="$work" PGPORT="$PG_PORT" pgxs_installcheck TAP_TESTS= 2>&1 |
		tee "$work"/regress.log; then
		status=1
	fi
	if grep -qE '\.\.\. FAILED|^not ok' "$work"/regress.log; then
		status=1
		head -200 "$work"/regression.diffs 2>/dev/null || true
	fi
	as_pg_user "$PG_BINDIR"/pg_ctl -D "$data" -m fast stop >/dev/null || true
	passed=$((passed + $(grep -cE '^(not )?ok [0-9]|^test .* \.\.\. ok' "$work"/regress.log || true)))
	failed=$((failed + $(grep -cE '\.\.\. FAILED|^not ok' "$work"/regress.log || true)))
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
	if ! JITPROF_NOEXEC_DIR="$noexec_dir" pgxs_installcheck REGRESS= PROVE_TESTS="${files[*]}" \
		PROVE_FLAGS="-I test/lib ${JITPROF_PROVE_FLAGS:-}" 2>&1 |
		tee "$work"/tap.log; then
		status=1
	fi
	if ! grep -q '^Result: PASS' "$work"/tap.log; then
		status=1
		for f in "$work"/tmp_check/log/*; do
			[ -f "$f" ] && { echo "---- $f (tail)"; tail -40 "$f"; }
		done
	fi
	passed=$((passed + $(grep -cE '^test/t/.*\.pl \.+ ok$' "$work"/tap.log || true)))
	failed=$((failed + $(grep -cE '^test/t/.*\.pl +\(Wstat' "$work"/tap.log || true)))
fi

echo "jitprof: $passed passed, $failed failed"
exit $status
