#!/bin/bash
# jitprof's perf and gdb sinks against LLVM's own ORC plugins
# (PerfSupportPlugin, DebugObjectManagerPlugin; jitprof.llvm_plugins, LLVM
# 19 and later), on bench/emission.sh's workload (the TPC-H-style queries
# of test/corpus, JIT forced, optimized and inlined) and the same LLVM:
# jitprof with JITLink and its perf map off, and one sink each (none,
# jitprof's jitdump, LLVM's perf plugin, jitprof's gdb sink, LLVM's debugger
# plugin), rounds interleaved on one throwaway cluster.  Prints the medians
# of EXPLAIN ANALYZE's JIT emission time and the others of emission.sh,
# ratios against no sink, and each jitprof sink against LLVM's plugin.
#
#   bench/llvm_plugins.sh [ROUNDS] [--noopt]
#
# On Debian 13 (LLVM 19), from the host:
#   JITPROF_CHROOT_DIR=... tools/platform.sh trixie --run bench/llvm_plugins.sh 9
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here"/emission.sh "$@" --plugins
