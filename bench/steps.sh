#!/bin/bash
# Cost of jitprof.steps (issue 12): bench/emission.sh's workload (the
# TPC-H-style queries of test/corpus, JIT forced, optimized and inlined)
# under jitprof with JITLink, jitprof.steps off and on, rounds interleaved
# on one throwaway cluster.  Prints the medians of EXPLAIN ANALYZE's JIT
# emission time, total JIT time, execution time and execution minus JIT
# (run time: code quality), and the backend CPU time of a pass, which also
# counts the step listing and debug information built in compile_expr
# (outside llvmjit's own timers); ratios are on against off.
#
#   bench/steps.sh [ROUNDS] [--noopt]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here"/emission.sh "$@" --steps
