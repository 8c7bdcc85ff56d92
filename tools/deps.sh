#!/bin/bash
# Install what jitprof needs to build, run its demo and run its tests on
# Debian 12.  Idempotent; must run as root.
set -euo pipefail

packages=(
	make gcc g++ git rsync
	postgresql-15 postgresql-server-dev-15 llvm-14-dev
	libelf-dev
	libipc-run-perl
	linux-perf gdb
	binutils
	# monitoring integrations (integrations/, test/t/05x): the exporter,
	# a Prometheus server, PoWA's extension and its remote-mode collector
	prometheus-postgres-exporter prometheus
	postgresql-15-powa powa-collector
	curl
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The image may carry an older postgresql-15 than the headers apt installs,
# and jitprof must be built against the server's own minor release (struct
# layouts change between minors): install or upgrade both together.
server=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null || true)
headers=$(dpkg-query -W -f='${Version}' postgresql-server-dev-15 2>/dev/null || true)
if [ -z "$headers" ] || [ "$server" != "$headers" ]; then
	missing+=(postgresql-15 postgresql-server-dev-15)
fi

if [ ${#missing[@]} -gt 0 ]; then
	echo "jitprof: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi

server=$(dpkg-query -W -f='${Version}' postgresql-15)
headers=$(dpkg-query -W -f='${Version}' postgresql-server-dev-15)
if [ "$server" != "$headers" ]; then
	echo "jitprof: postgresql-15 $server and postgresql-server-dev-15 $headers differ; install the same version of both" >&2
	exit 1
fi
