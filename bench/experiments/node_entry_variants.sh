#!/bin/bash
# An experiment, not a benchmark (doc/plan_nodes.md, "Cost"): what a plan
# node's entry costs the cheapest-tuple nested loop in CPU time, for five
# shorter entries than the one kept, none of them exact.  With
# node-entry-variants.patch applied to 02fea50, the Makefile's
# ENTRY_VARIANT picks the entry's body:
#   0  the entry kept: the node test, the id stored, the node called, what
#      was running stored back (nine instructions)
#   1  a bare jump to the node (one instruction: what any entry costs)
#   2  the id stored, then the jump (no restore: not exact)
#   3  the node test, the call's frame (CFA, return address) and the id
#      stored, then the jump (what a handler reading frames would need)
#   4  variant 3 without the node test
#   5  return address and id in one store, at a slot found from the CFA
# Each runs QUERIES=0 bench/plan_nodes.sh ROUNDS (on ÷ off, paired, JIT
# forced, 99 Hz), every variant once per pass, PASSES passes.
#
#   git apply bench/experiments/node-entry-variants.patch
#   bench/experiments/node_entry_variants.sh [ROUNDS [PASSES]]
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-30}
passes=${2:-2}
echo "# node entry variants, $rounds rounds, $passes passes, commit $(git rev-parse --short HEAD), $(date -u +%F)"
echo "# pass variant | statement | jit | rounds | off ms | on/off median | q1 | q3 | on/off summed"
for ((p = 1; p <= passes; p++)); do
	for v in 0 1 2 3 4 5; do
		touch src/sampler/sampler_nodes.c
		ENTRY_VARIANT=$v QUERIES=0 bench/plan_nodes.sh "$rounds" |
			sed -n "s/^ *99 | nested loop | on /$p $v | nested loop | on /p"
	done
done
