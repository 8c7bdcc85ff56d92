#!/bin/bash
# Run jitprof's tests on another Debian release's PostgreSQL and LLVM, in a
# chroot (README, "Platforms"; doc/testing.md).  As root:
#
#   tools/platform.sh bookworm|trixie|forky [tools/test.sh ARGS]
#   tools/platform.sh bookworm|trixie|forky --run COMMAND [ARGS]
#
# (--run runs COMMAND in /build/jitprof inside the chroot instead, with the
# same mounts: a shell, a build, a cluster to look at by hand;
# tools/package.sh builds the .deb packages that way.)
#
#   bookworm Debian 12: PostgreSQL 15 + LLVM 14, the host's own release (a
#            clean system to build and install the .deb in)
#   trixie   Debian 13: PostgreSQL 17 + LLVM 19
#   forky    Debian testing: PostgreSQL 18 + LLVM 21
#
# The first run makes the chroot with debootstrap from the archive this host
# uses (read from /etc/apt/sources.list.d/*.sources or sources.list;
# JITPROF_MIRROR overrides it) and installs the base tools; tools/deps.sh,
# run by tools/test.sh inside, installs that release's PostgreSQL, LLVM and
# test packages.  Later runs reuse the chroot.  Each run copies this source
# tree to /build/jitprof inside it, mounts proc, sys, /dev, /dev/pts,
# /dev/shm and the host's /tmp (so the host's perf finds a chrooted
# backend's /tmp/perf-PID.map), runs tools/test.sh ARGS there, and unmounts
# everything on exit, failed or not.  The exit status is tools/test.sh's.
#
# Settings:
#   JITPROF_CHROOT_DIR    the chroot (default /var/tmp/jitprof-chroot-RELEASE)
#   JITPROF_CHROOT_CACHE  a zstd tarball of a provisioned chroot: unpacked
#                         when the chroot does not exist yet, written after
#                         a chroot is made (optional; none by default, so a
#                         fresh machine makes its own)
#   JITPROF_MIRROR        the Debian archive to bootstrap from
#   JITPROF_SECURITY_MIRROR  bookworm's security archive (default: the
#                         host's)
# and tools/test.sh's own JITPROF_* settings, passed in.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

usage() {
	echo "usage: tools/platform.sh bookworm|trixie|forky [tools/test.sh arguments | --run COMMAND...]" >&2
	exit 2
}

[ $# -ge 1 ] || usage
release=$1
shift
case $release in
	bookworm | trixie) script= ;;
	# bookworm's debootstrap has no script for forky: testing is sid's
	forky) script=/usr/share/debootstrap/scripts/sid ;;
	*) usage ;;
esac
if [ "$(id -u)" != 0 ]; then
	echo "jitprof: tools/platform.sh must run as root (debootstrap, chroot, mount)" >&2
	exit 1
fi

dir=${JITPROF_CHROOT_DIR:-/var/tmp/jitprof-chroot-$release}
dir=$(realpath -m "$dir")
cache=${JITPROF_CHROOT_CACHE:-}
marker="$dir/etc/jitprof-platform"

# The archive this host installs from: the first URIs of a deb822 source
# that is not the security archive, else the first "deb" line.
mirror_of_host() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk '
			/^[ \t]*$/ { if (uri != "" && !security) { print uri; exit } uri = ""; security = 0; next }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { if ($0 ~ /-security/) security = 1 }
			END { if (uri != "" && !security) print uri }' "$f" | head -n 1)
		if [ -n "$uri" ]; then
			echo "$uri"
			return
		fi
	done
	if [ -f /etc/apt/sources.list ]; then
		uri=$(awk '$1 == "deb" && $3 !~ /-security/ { print $2; exit }' /etc/apt/sources.list)
		if [ -n "$uri" ]; then
			echo "$uri"
			return
		fi
	fi
	echo http://deb.debian.org/debian
}

# The host's security archive (a deb822 source whose Suites end in
# -security), for bookworm: the host's PostgreSQL 15 minor release comes
# from bookworm-security, and a package built in the chroot must be built
# against the same one.
security_of_host() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk '
			/^[ \t]*$/ { if (uri != "" && security) { print uri; exit } uri = ""; security = 0; next }
			/^URIs:/ { uri = $2 }
			/^Suites:/ { if ($0 ~ /-security/) security = 1 }
			END { if (uri != "" && security) print uri }' "$f" | head -n 1)
		if [ -n "$uri" ]; then
			echo "$uri"
			return
		fi
	done
	echo http://deb.debian.org/debian-security
}

# Anything mounted at or below the chroot, deepest first.
mounts_below() {
	awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

unmount_all() {
	local m
	for m in $(mounts_below); do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done
}

provision() {
	local mirror
	mirror=${JITPROF_MIRROR:-$(mirror_of_host)}
	if [ -e "$dir" ]; then
		if [ -n "$(mounts_below)" ]; then
			echo "jitprof: $dir is not provisioned and has file systems mounted below it; unmount them first" >&2
			exit 1
		fi
		echo "jitprof: removing the unfinished chroot $dir"
		rm -rf "$dir"
	fi
	# two chroots made at once (tools/test.sh prepares them in the
	# background) must not run apt on the host side by side
	(
		flock 8
		if ! command -v debootstrap >/dev/null; then
			echo "jitprof: installing debootstrap"
			apt-get update -qq
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap zstd >/dev/null
		fi
	) 8>/var/lock/jitprof-host-apt.lock
	echo "jitprof: debootstrap $release from $mirror into $dir"
	mkdir -p "$(dirname "$dir")"
	debootstrap --variant=minbase "$release" "$dir" "$mirror" $script >"$dir.debootstrap.log" 2>&1 || {
		tail -20 "$dir.debootstrap.log" >&2
		echo "jitprof: debootstrap failed; the whole log is $dir.debootstrap.log" >&2
		exit 1
	}
	rm -f "$dir.debootstrap.log"

	printf 'deb %s %s main\n' "$mirror" "$release" >"$dir/etc/apt/sources.list"
	if [ "$release" = bookworm ]; then
		printf 'deb %s %s-updates main\ndeb %s %s-security main\n' "$mirror" "$release" \
			"${JITPROF_SECURITY_MIRROR:-$(security_of_host)}" "$release" >>"$dir/etc/apt/sources.list"
	fi
	if [ "$release" = forky ]; then
		# the archive copy reachable here is past its Valid-Until date
		echo 'Acquire::Check-Valid-Until "false";' >"$dir/etc/apt/apt.conf.d/99jitprof-valid-until"
	fi
	# start no service, and make no cluster on port 5432, when PostgreSQL
	# is installed
	printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
	chmod 755 "$dir/usr/sbin/policy-rc.d"
	mkdir -p "$dir/etc/postgresql-common/createcluster.d"
	echo 'create_main_cluster = false' >"$dir/etc/postgresql-common/createcluster.d/jitprof.conf"
	# the host's postgres user, same uid and gid: files of the chrooted
	# clusters in the shared /tmp then have the same owner as the host's
	if uid=$(id -u postgres 2>/dev/null) && gid=$(id -g postgres 2>/dev/null); then
		chroot "$dir" groupadd -r -g "$gid" postgres
		chroot "$dir" useradd -r -u "$uid" -g postgres -d /var/lib/postgresql -s /bin/bash postgres
	fi
	echo "$release" >"$marker"
}

exec 9>"$dir.lock"
if ! flock -n 9; then
	echo "jitprof: waiting for another tools/platform.sh using $dir"
	flock 9
fi

trap unmount_all EXIT

if [ ! -f "$marker" ] && [ -n "$cache" ] && [ -f "$cache" ] && [ ! -e "$dir" ]; then
	echo "jitprof: unpacking $cache into $dir"
	mkdir -p "$dir"
	tar -C "$dir" --zstd -xf "$cache"
fi
made=
if [ ! -f "$marker" ]; then
	provision
	made=1
fi

cp -L /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$dir/proc"
mount -t sysfs sysfs "$dir/sys"
for d in /dev /dev/pts /dev/shm /tmp; do
	mkdir -p "$dir$d"
	mount --bind "$d" "$dir$d"
	# what the tests mount inside (a noexec tmpfs) stays inside
	mount --make-private "$dir$d"
done

# A copy, not a bind mount: the build inside writes objects for another
# PostgreSQL and LLVM, which must not land in the host's tree.  The objects
# an earlier run left there are deleted too (--delete-excluded): they may
# come from another tree, built after this tree's sources were last changed,
# and make would then keep them.
mkdir -p "$dir/build/jitprof"
rsync -a --delete --delete-excluded --exclude .git --exclude /dist --exclude '*.o' --exclude '*.so' \
	--exclude src/names/eeop_names.h "$top"/ "$dir/build/jitprof/"

# tools/test.sh's settings; the others stay outside
envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	HOME=/root LANG=C.UTF-8 JITPROF_PLATFORM="$release")
while IFS='=' read -r name _; do
	case $name in
		JITPROF_PGTREE | JITPROF_PLATFORMS | JITPROF_PACKAGE_LEGS | JITPROF_CHROOT_* | JITPROF_MIRROR | JITPROF_SECURITY_MIRROR) ;;
		JITPROF_*) envs+=("$name=${!name}") ;;
	esac
done < <(env)
[ -n "${CI:-}" ] && envs+=("CI=$CI")

status=0
if [ "${1:-}" = --run ]; then
	shift
	[ $# -ge 1 ] || usage
	chroot "$dir" /usr/bin/env -i "${envs[@]}" TERM="${TERM:-dumb}" \
		/bin/bash -c 'cd /build/jitprof && exec "$@"' run "$@" || status=$?
else
	chroot "$dir" /usr/bin/env -i "${envs[@]}" \
		/bin/bash -c 'cd /build/jitprof && exec tools/test.sh "$@"' test.sh "$@" || status=$?
fi

if [ -n "$made" ] && [ -n "$cache" ] && [ ! -f "$cache" ]; then
	unmount_all
	echo "jitprof: caching the chroot in $cache"
	mkdir -p "$(dirname "$cache")"
	tar -C "$dir" --zstd --exclude ./build --exclude './var/cache/apt/archives/*.deb' \
		-cf "$cache.tmp" . && mv "$cache.tmp" "$cache"
fi
exit $status
