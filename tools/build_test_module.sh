#!/bin/bash
# Compile one of test/modules/NAME.c into DIR/NAME.so with the server's
# compiler and flags, and print that path: the one compile line of the
# TAP tests (JitprofTest.pm's build_test_module) and the benchmarks that
# load a test module.
#
#   tools/build_test_module.sh NAME DIR [COMPILER ARGUMENTS...]
#
# JITPROF_BUILD_PG_CONFIG names the pg_config of the installed headers
# (default: pg_config on PATH; a private JITPROF_PGTREE copy links the
# system's headers, tools/common.sh).
set -euo pipefail

if [ $# -lt 2 ]; then
	echo "usage: tools/build_test_module.sh NAME DIR [COMPILER ARGUMENTS...]" >&2
	exit 2
fi
name=$1
dir=$2
shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/test/modules/$name.c
if [ ! -f "$src" ]; then
	echo "jitprof: no test module \"$name\": $src does not exist" >&2
	exit 1
fi
pg_config=${JITPROF_BUILD_PG_CONFIG:-pg_config}
# word splitting is intended: each pg_config answer is a list of flags
# shellcheck disable=SC2046
$("$pg_config" --cc) $("$pg_config" --cppflags) $("$pg_config" --cflags) \
	$("$pg_config" --cflags_sl) -I"$("$pg_config" --includedir-server)" \
	-I"$top/src" -shared -o "$dir/$name.so" "$src" "$@"
echo "$dir/$name.so"
