#!/bin/bash
# perf report, summed by symbol name.
#
# perf report groups samples by symbol *address*.  jitprof never reuses a
# JIT code address within a backend, so each execution of a query has its
# own copy of each function, and perf lists the copies on separate lines
# under the same name.  This adds those lines up: one line per name.
#
#   tools/perf-by-name.sh -i perf.data [more perf report options]
#   perf report --stdio --sort sym ... | tools/perf-by-name.sh -
#
# (perf reads /tmp/perf-<pid>.map only if it belongs to the user running
# perf or to root, so run perf report as the server's OS user and pipe it
# in with "-" when you are neither.)
set -euo pipefail

if [ "${1:-}" = - ]; then
	cat
else
	perf report --stdio --sort sym "$@" 2>/dev/null
fi |
	awk '
		/^#/ || NF < 3 { next }
		{
			pct = $1; sub(/%$/, "", pct)
			name = $0
			sub(/^[ \t]*[0-9.]+%[ \t]+\[[^]]*\][ \t]+/, "", name)
			sum[name] += pct
		}
		END { for (n in sum) printf "%8.2f%%  %s\n", sum[n], n }' |
	sort -rn
