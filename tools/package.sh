#!/bin/bash
# Build jitprof's Debian packages (debian/, README "Building and packaging") for one
# Debian release, in that release's chroot (tools/platform.sh), and
# optionally test what they install.  As root on the Debian 12 host:
#
#   tools/package.sh bookworm|trixie|forky                 build
#   tools/package.sh bookworm|trixie|forky --test [ARGS]   build, install the
#                       .debs in the chroot with apt, then run
#                       JITPROF_INSTALLED=1 tools/test.sh ARGS there (all
#                       units by default; "regress", "tap FILES" as for
#                       tools/test.sh), which tests the installed files and
#                       builds nothing from the tree
#   tools/package.sh bookworm|trixie|forky --test-built [ARGS]   the same
#                       with the .debs an earlier build left, building none
#   tools/package.sh --build-here   build on this system itself (any Debian
#                       with the release's PostgreSQL; what the chroot runs)
#
# The .debs (postgresql-NN-jitprof, postgresql-NN-jitprof-powa, the
# -dbgsym package) with their .changes and .buildinfo end up in
# dist/RELEASE/ of this tree (JITPROF_DEB_DIR overrides it), replacing that
# directory's earlier contents; --build-here leaves them in dist/here/.
#
# The build installs the release's PostgreSQL, LLVM and build tools
# (tools/deps.sh, debhelper, postgresql-server-dev-all), makes
# debian/control for the release's PostgreSQL majors ("pg_buildext
# updatecontrol"; the committed one is Debian 12's), checks the build
# dependencies (dpkg-checkbuilddeps) and runs "dpkg-buildpackage -b" on a
# clean copy of the tree.  The settings of tools/platform.sh apply
# (JITPROF_CHROOT_DIR, JITPROF_MIRROR...).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

usage() {
	echo "usage: tools/package.sh bookworm|trixie|forky [--test|--test-built [tools/test.sh arguments]] | --build-here" >&2
	exit 2
}

# The packages' upstream version, from debian/changelog (1.3.0-1 -> 1.3.0).
upstream_version() {
	sed -nE '1s/^[^ ]+ \(([^-)]+)(-[^)]*)?\).*/\1/p' "$top/debian/changelog"
}

build_here() {
	local out=$1 version
	if [ "$(id -u)" != 0 ]; then
		echo "jitprof: tools/package.sh --build-here installs packages: run it as root" >&2
		exit 1
	fi
	"$here"/deps.sh
	export DEBIAN_FRONTEND=noninteractive
	local tools=(build-essential debhelper dpkg-dev postgresql-server-dev-all)
	local missing=() p
	for p in "${tools[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "jitprof: installing ${missing[*]}"
		apt-get install -y -qq "${missing[@]}" >/dev/null
	fi

	version=$(upstream_version)
	[ -n "$version" ] || {
		echo "jitprof: no version in debian/changelog" >&2
		exit 1
	}
	# a clean copy: no objects of an earlier build, no dist/ (src is global:
	# the EXIT trap removes it)
	src=$(mktemp -d /var/tmp/jitprof-package.XXXXXX)
	trap 'rm -rf "$src"' EXIT
	rsync -a --exclude .git --exclude /dist --exclude '*.o' --exclude '*.so' \
		--exclude src/names/eeop_names.h "$top"/ "$src/jitprof-$version/"
	cd "$src/jitprof-$version"
	pg_buildext updatecontrol
	if ! diff -u "$top"/debian/control debian/control; then
		echo "jitprof: debian/control for this release's PostgreSQL majors (above)"
	fi
	echo "jitprof: PostgreSQL majors: $(pg_buildext supported-versions | tr '\n' ' ')"
	dpkg-checkbuilddeps
	dpkg-buildpackage -b -uc -us 2>&1 | tee "$src/build.log"
	[ "${PIPESTATUS[0]}" = 0 ] || {
		echo "jitprof: dpkg-buildpackage failed" >&2
		exit 1
	}
	# the compiler's (FILE:LINE:COL: warning:, cc1plus: warning:) and the
	# linker's: the build is warning-free
	if grep -E '(:[0-9]+:([0-9]+:)? |^(cc1|cc1plus|ld|/usr/bin/ld): )warning: ' "$src/build.log"; then
		echo "jitprof: the build printed compiler warnings (above)" >&2
		exit 1
	fi
	rm -rf "$out"
	mkdir -p "$out"
	mv "$src"/*.deb "$src"/*.changes "$src"/*.buildinfo "$out"/
	for p in "$out"/*.deb; do
		echo "== $(basename "$p")"
		dpkg-deb -f "$p" Package Version Architecture Depends
		dpkg-deb -c "$p" | awk '$NF ~ /\.(so|control|sql)$/ { print "  " $NF }'
	done
}

[ $# -ge 1 ] || usage
if [ "$1" = --build-here ]; then
	[ $# = 1 ] || usage
	build_here "${JITPROF_DEB_DIR:-$top/dist/here}"
	exit 0
fi

release=$1
shift
case $release in
	bookworm | trixie | forky) ;;
	*) usage ;;
esac
build=1 test=
if [ $# -gt 0 ]; then
	case $1 in
		--test) test=1 ;;
		--test-built) test=1 build= ;;
		*) usage ;;
	esac
	shift
fi
out=${JITPROF_DEB_DIR:-$top/dist/$release}

# The .debs go in and out of the chroot through the host's /tmp, which it
# shares: built inside into /build/debs, then copied to $out.
handoff=$(mktemp -d /tmp/jitprof-debs.XXXXXX)
trap 'rm -rf "$handoff"' EXIT
chmod 755 "$handoff"
start=$(date +%s)
if [ -n "$build" ]; then
	JITPROF_DEB_DIR=/build/debs "$here"/platform.sh "$release" --run \
		bash -c 'tools/package.sh --build-here && cp -a /build/debs/. "$0"/' "$handoff"
	rm -rf "$out"
	mkdir -p "$out"
	cp -a "$handoff"/. "$out"/
	echo "jitprof: packages for $release in $out ($(($(date +%s) - start)) s):"
	ls -1 "$out"
else
	cp -a "$out"/*.deb "$handoff"/ || {
		echo "jitprof: no .debs in $out: build them first (tools/package.sh $release)" >&2
		exit 1
	}
fi

[ -n "$test" ] || exit 0
# apt resolves the packages' dependencies from the release's archive, as a
# user's "apt install ./postgresql-NN-jitprof_*.deb" would.
status=0
JITPROF_INSTALLED=1 JITPROF_DEBS=$handoff "$here"/platform.sh "$release" --run bash -c '
	set -e
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq --reinstall "$0"/*.deb >/dev/null
	dpkg-query -W -f "jitprof: installed \${Package} \${Version}\n" "postgresql-*-jitprof*" |
		grep -v dbgsym
	exec tools/test.sh "$@"' "$handoff" "$@" || status=$?
echo "jitprof: package leg for $release took $(($(date +%s) - start)) s"
exit $status
