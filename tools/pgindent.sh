#!/bin/bash
# Format jitprof's C sources the way PostgreSQL's pgindent does: pg_bsd_indent
# with pgindent's options, and a typedef list made of the installed server
# and LLVM C headers' typedefs plus jitprof's own (typedefs.list).
#   tools/pgindent.sh           reformat src/*.c src/*.h src/*/*.c src/*/*.h in place
#   tools/pgindent.sh --check   list files that would change, exit 1 if any
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v pg_bsd_indent >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pg-bsd-indent >/dev/null
fi

server=$(pg_config --includedir-server)
# snowball's "typedef unsigned char symbol" is not ours, and would break
# every field named symbol
exclude='^(symbol)$'
llvm_c=$(llvm-config-14 --includedir)/llvm-c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
	grep -rhoE '^\}\s*[A-Za-z_][A-Za-z0-9_]*\s*;' "$server" | sed -E 's/^\}\s*//; s/\s*;//'
	grep -rhoE '^typedef\s+[^;(]*\b[A-Za-z_][A-Za-z0-9_]*\s*;' "$server" "$llvm_c" |
		sed -E 's/.*\b([A-Za-z_][A-Za-z0-9_]*)\s*;$/\1/'
	grep -rhoE '^typedef\s+[^;]*\(\s*\*\s*[A-Za-z_][A-Za-z0-9_]*\)' "$server" "$llvm_c" |
		sed -E 's/.*\(\s*\*\s*([A-Za-z_][A-Za-z0-9_]*)\)$/\1/'
	cat "$top"/typedefs.list
} | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | grep -vE "$exclude" | sort -u >"$tmp"/typedefs

status=0
shopt -s nullglob
for f in "$top"/src/*.c "$top"/src/*.h "$top"/src/*/*.c "$top"/src/*/*.h; do
	# C++ headers (LLVM style) are not pgindent's business
	head -1 "$f" | grep -q '^//' && continue
	pg_bsd_indent -bad -bap -bbb -bc -bl -cli1 -cp33 -cdb -nce -d0 -di12 \
		-nfc1 -i4 -l79 -lp -lpl -nip -npro -sac -tpg -ts4 \
		-U"$tmp"/typedefs "$f" "$tmp"/out
	if ! cmp -s "$f" "$tmp"/out; then
		if [ "${1:-}" = --check ]; then
			echo "would reformat: ${f#$top/}"
			status=1
		else
			cp "$tmp"/out "$f"
		fi
	fi
done
exit $status
