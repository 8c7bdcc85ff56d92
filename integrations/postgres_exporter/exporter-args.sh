#!/bin/bash
# The command-line flags that make the installed prometheus-postgres-exporter
# read jitprof.yaml, one per line, decided from that exporter's own --help
# (doc/monitoring.md, "Which flags"):
#
#   integrations/postgres_exporter/exporter-args.sh [--jitprof-only] [QUERIES]
#
# QUERIES is the queries file (default: jitprof.yaml next to this script).
# With --jitprof-only, the flags also turn off everything the exporter
# collects by default (its built-in metric maps, pg_settings, and each
# collector its --help says is enabled by default), so that /metrics holds
# jitprof's series and the exporter's own health only.
#
# Flag names change between exporter releases (0.11.1 has
# --collector.bgwriter, 0.17.1 --collector.stat_bgwriter, 0.20.0 drops
# --disable-settings-metrics for --no-collector.settings), and an exporter
# refuses a flag it does not know, so none is hard-coded here.
#
# Settings: PG_EXPORTER, the exporter's program (default:
# prometheus-postgres-exporter, Debian's name).
#
# Exits 1, naming the exporter's version, if that exporter has no
# --extend.query-path: custom queries were deprecated upstream in 0.13.0
# and an exporter without them cannot export jitprof's series.
set -euo pipefail

exporter=${PG_EXPORTER:-prometheus-postgres-exporter}
only=
if [ "${1:-}" = --jitprof-only ]; then
	only=1
	shift
fi
queries=${1:-$(cd "$(dirname "$0")" && pwd)/jitprof.yaml}

if ! help=$("$exporter" --help 2>&1); then
	echo "exporter-args.sh: $exporter --help failed:" >&2
	echo "$help" >&2
	exit 1
fi
# kingpin wraps the help text: one line, single spaces
help=$(tr -s ' \n' '  ' <<<"$help")

has_flag() {
	grep -qE -- "(^| )--(\[no-\])?$1([ =]|\$)" <<<"$help"
}

if ! has_flag extend.query-path; then
	version=$("$exporter" --version 2>&1 | head -n 1)
	echo "exporter-args.sh: $exporter ($version) has no --extend.query-path, so it cannot run jitprof.yaml's queries (doc/monitoring.md, \"Which flags\")" >&2
	exit 1
fi
echo "--extend.query-path=$queries"

if [ -n "$only" ]; then
	has_flag disable-default-metrics && echo --disable-default-metrics
	has_flag disable-settings-metrics && echo --disable-settings-metrics
	# "Enable the NAME collector (default: enabled)."
	grep -oE 'Enable the [a-z0-9_]+ collector \(default: enabled\)' <<<"$help" |
		awk '{ print "--no-collector." $3 }' | sort -u
fi
exit 0
