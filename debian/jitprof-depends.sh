#!/bin/sh
# debian/jitprof-depends.sh MAJOR PACKAGE_DIR prints the jitprof:Depends
# substvar of postgresql-MAJOR-jitprof, from what was installed into
# PACKAGE_DIR:
#  - the package holding that server's llvmjit.so (postgresql-MAJOR up to
#    17, postgresql-18-jit on 18), at least the version built against: the
#    module calls into llvmjit and reads its structures, whose layout can
#    change between minor releases;
#  - postgresql-MAJOR-jit-llvm (= LLVM major), which that package provides:
#    the llvmjit built with the LLVM this module was built with;
#  - the package of the very libLLVM jitprof_llvm.so links (readelf's
#    NEEDED entry, found where the loader finds it), which must be the
#    llvmjit's own.
# It stops the build when any of them cannot be found, or when the two
# libLLVMs differ.
set -eu
v=$1
dir=$2
llvmjit=/usr/lib/postgresql/$v/lib/llvmjit.so
module=$dir/usr/lib/postgresql/$v/lib/jitprof_llvm.so

die() {
	echo "debian/jitprof-depends.sh: $*" >&2
	exit 1
}
needed_libllvm() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(libLLVM[^]]*\)\]$/\1/p'
}

[ -f "$module" ] || die "$module was not installed"
lib=$(needed_libllvm "$module")
[ -n "$lib" ] || die "$module links no libLLVM"
jitlib=$(needed_libllvm "$llvmjit")
[ "$lib" = "$jitlib" ] || die "$module links $lib, but $llvmjit links $jitlib"
# where the loader finds it: the module's RUNPATH if it has one, else the
# default path (ldconfig's cache)
runpath=$(readelf -d "$module" | sed -n 's/.*(RUNPATH).*\[\([^]]*\)\]$/\1/p')
if [ -n "$runpath" ]; then
	path=$runpath/$lib
else
	path=$(/sbin/ldconfig -p | awk -v lib="$lib" '$1 == lib && /x86-64/ { print $NF; exit }')
fi
[ -n "$path" ] && [ -e "$path" ] || die "the loader finds no $lib for $module"
libpkg=$(dpkg-query -S "$(realpath "$path")" | sed -n '1s/: .*//p')
libpkg=${libpkg%:*}
[ -n "$libpkg" ] || die "no package holds $path"

jitpkg=$(dpkg-query -S "$llvmjit" | sed -n '1s/: .*//p')
jitpkg=${jitpkg%:*}
[ -n "$jitpkg" ] || die "no package holds $llvmjit"
jitversion=$(dpkg-query -W -f '${Version}' "$jitpkg")
provides=$(dpkg-query -W -f '${Provides}' "$jitpkg" |
	grep -o "postgresql-$v-jit-llvm (= [0-9.]*)" || true)
[ -n "$provides" ] || die "$jitpkg provides no postgresql-$v-jit-llvm"

echo "jitprof:Depends=$jitpkg (>= $jitversion), $provides, $libpkg"
