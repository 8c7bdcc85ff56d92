#!/bin/bash
# Install what jitprof needs to build, run its demo and run its tests on
# Debian: 12 (PostgreSQL 15 + LLVM 14), and in tools/platform.sh's chroots
# 13 (17 + 19) and testing (18 + 21).  Idempotent; must run as root.
#
# The PostgreSQL major is JITPROF_PG_MAJOR if set, else the installed
# server's (pg_config), else the release's default (the "postgresql"
# package's dependency).  The LLVM major is the one that server's llvmjit.so
# links, which the Makefile builds against (README, "Platforms").
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
updated=
apt_update() {
	if [ -z "$updated" ]; then
		apt-get update -qq
		updated=1
	fi
}
installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}
# the one package of the archive's NAME that PACKAGE depends on: NAME<major>
depends_major() {
	apt-cache depends "$1" 2>/dev/null | sed -nE "s/^ *Depends: $2([0-9]+)\$/\\1/p" | head -n 1
}

major=${JITPROF_PG_MAJOR:-}
if [ -z "$major" ] && command -v pg_config >/dev/null &&
	version=$(pg_config --version 2>/dev/null); then
	major=$(sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p' <<<"$version")
fi
if [ -z "$major" ]; then
	apt_update
	major=$(depends_major postgresql postgresql-)
fi
if [ -z "$major" ]; then
	echo "jitprof: cannot tell which PostgreSQL to install: set JITPROF_PG_MAJOR" >&2
	exit 1
fi

# llvmjit: inside postgresql-NN up to 17, in postgresql-NN-jit from 18 on
# (a Recommends, so installed by name here)
server_pkgs=("postgresql-$major" "postgresql-server-dev-$major")
jit_pkg=postgresql-$major
llvmjit=/usr/lib/postgresql/$major/lib/llvmjit.so
if installed "postgresql-$major-jit"; then
	jit_pkg=postgresql-$major-jit
elif [ ! -f "$llvmjit" ]; then
	apt_update
	if apt-cache show "postgresql-$major-jit" >/dev/null 2>&1; then
		jit_pkg=postgresql-$major-jit
	fi
fi
if [ "$jit_pkg" != "postgresql-$major" ]; then
	server_pkgs+=("$jit_pkg")
fi

# the LLVM of the installed llvmjit.so, else the one its package depends on
llvm=
if [ -f "$llvmjit" ] && command -v readelf >/dev/null; then
	llvm=$(readelf -d "$llvmjit" |
		sed -nE 's/.*\(NEEDED\).*\[libLLVM(-|\.so\.)([0-9]+).*/\2/p' | head -n 1)
fi
if [ -z "$llvm" ]; then
	apt_update
	llvm=$(depends_major "$jit_pkg" libllvm)
fi
if [ -z "$llvm" ]; then
	echo "jitprof: cannot tell which LLVM $jit_pkg links" >&2
	exit 1
fi

packages=(
	make gcc g++ git rsync
	"${server_pkgs[@]}" "llvm-$llvm-dev"
	libelf-dev
	libipc-run-perl
	linux-perf gdb
	binutils
	# monitoring integrations (integrations/, test/t/05x): the exporter,
	# a Prometheus server, PoWA's extension and its remote-mode collector
	prometheus-postgres-exporter prometheus
	"postgresql-$major-powa" powa-collector
	curl
)

missing=()
for p in "${packages[@]}"; do
	installed "$p" || missing+=("$p")
done
# The image may carry an older server than the headers apt installs, and
# jitprof must be built against the server's own minor release (struct
# layouts change between minors): install or upgrade both together.
server=$(dpkg-query -W -f='${Version}' "postgresql-$major" 2>/dev/null || true)
headers=$(dpkg-query -W -f='${Version}' "postgresql-server-dev-$major" 2>/dev/null || true)
if [ -z "$headers" ] || [ "$server" != "$headers" ]; then
	missing+=("${server_pkgs[@]}")
fi

if [ ${#missing[@]} -gt 0 ]; then
	echo "jitprof: installing ${missing[*]}"
	apt_update
	apt-get install -y -qq "${missing[@]}" >/dev/null
fi

server=$(dpkg-query -W -f='${Version}' "postgresql-$major")
headers=$(dpkg-query -W -f='${Version}' "postgresql-server-dev-$major")
if [ "$server" != "$headers" ]; then
	echo "jitprof: postgresql-$major $server and postgresql-server-dev-$major $headers differ; install the same version of both" >&2
	exit 1
fi
