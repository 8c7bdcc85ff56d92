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
trap 'rm -rf "$work"' EXIT
status=0
passed=0
failed=0

if [ "$what" = all ] || [ "$what" = regress ]; then
	tests=$(sed -n 's/^REGRESS = //p' "$TOP"/Makefile)
	echo "== pg_regress: $tests"
	if ! as_pg_user "$PG_REGRESS" \
		--temp-instance="$work/tmp_check" \
		--temp-config="$work/test/jitprof.conf" \
		--bindir="$PG_BINDIR" \
		--inputdir="$work" --outputdir="$work" \
		--port="$PG_PORT" \
		--dbname=contrib_regression \
		$tests | tee "$work"/regress.log; then
		status=1
		cat "$work"/regression.diffs 2>/dev/null | head -200 || true
	fi
	passed=$((passed + $(grep -cE '^(not )?ok [0-9]|^test .* \.\.\. ok' "$work"/regress.log || true)))
	failed=$((failed + $(grep -cE '\.\.\. FAILED|^not ok' "$work"/regress.log || true)))
fi

if [ "$what" = all ] || [ "$what" = tap ]; then
	if [ $# -gt 0 ]; then
		files=("$@")
	else
		files=(test/t/*.pl)
	fi
	echo "== TAP: ${files[*]}"
	if ! (cd "$work" && as_pg_user env \
		PATH="$PG_BINDIR:$PATH" \
		PG_REGRESS="$PG_REGRESS" \
		PG_CONFIG="$(command -v pg_config)" \
		PG_TEST_PORT_DIR="$PG_TEST_PORT_DIR" \
		TESTDIR="$work" \
		JITPROF_SRC="$work" \
		prove ${JITPROF_PROVE_FLAGS:-} -I "$TAP_LIB" -I "$work/test/lib" "${files[@]}") | tee "$work"/tap.log; then
		status=1
		for f in "$work"/tmp_check/log/*; do
			[ -f "$f" ] && { echo "---- $f (tail)"; tail -40 "$f"; }
		done
	fi
fi

if [ "$what" = all ] || [ "$what" = tap ]; then
	passed=$((passed + $(grep -cE '^test/t/.*\.pl \.+ ok$' "$work"/tap.log || true)))
	failed=$((failed + $(grep -cE '^test/t/.*\.pl +\(Wstat' "$work"/tap.log || true)))
fi

echo "jitprof: $passed passed, $failed failed"
exit $status
