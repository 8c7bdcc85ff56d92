#!/bin/bash
# Where compiling spends its instructions, stock llvmjit (RuntimeDyld)
# against jitprof (JITLink and its plugin), phase by phase (issue 35,
# item 3).  A count, not a time: callgrind counts the same on a busy
# machine, where emission times per query move by ±25% between rounds
# (bench/emission.sh).  What callgrind cannot see is the kernel's share
# (mmap, mprotect, page faults): bench/syscalls.sh counts those.
#
# One single-user backend (postgres --single) per provider runs the 20
# TPC-H-style queries of test/corpus once each, JIT forced with
# optimisation and inlining, under valgrind --tool=callgrind counting
# inside PostgresMain.  Each query compiles its own module, so the phases
# below are per query once divided by 20:
#
#   total         PostgresMain: everything, execution included
#   IR            generating the IR: llvm_compile_expr, or jitprof's
#                 jp_compile_expr around it (naming included)
#   inline        llvm_inline
#   optimise      LLVM's pass managers (LLVMRunPassManager, LLVMRunPasses)
#   emit          LLVMOrcLLJITLookup: what EXPLAIN reports as Emission,
#                 code generation and linking together
#     codegen     SimpleCompiler: machine code generation
#     link        the object layer's emit: RuntimeDyld, or JITLink with
#                 jitprof's plugin, sinks, registry and arena
#   load          jp_llvm_load: loading jitprof's LLVM library (once per
#                 backend, not per query)
#
# and, for jitprof, its own code's instructions (exclusive): in all, and
# its largest functions.  Then the kernel's side, which callgrind does not
# see: the same run of each configuration, without valgrind, under strace -c
# (system calls per query) and perf stat (page faults per query).
# A third configuration, "steps", is jitprof with jitprof.steps = on (line
# tables for every function, doc/steps.md); its extra phases:
#
#   annotate      the step list and the IR's locations (steps.c), with
#   debuginfo     attaching the step locations to the IR (llvm_steps.c)
#   dwarfend      LLVM writing the DWARF sections at the end of code
#                 generation (DwarfDebug::endModule; its per-instruction
#                 work is in codegen)
#   readback      reading the line table back at link time (linker.cpp)
#
#   [FIRST=N] bench/emission_phases.sh
#
# FIRST=N runs each of the first N queries in a single-user backend of its
# own instead, so that each is its backend's first JIT compilation (what a
# new connection's first query pays: LLVM's and the linker's set-up,
# jitprof's first map write); stock and jitprof only, and without the
# kernel's side.  Each run starts a backend under valgrind: about 1 minute
# per query and provider on a quiet machine.
#
# Run as root (builds and installs like tools/test.sh); JITPROF_PGTREE and
# JITPROF_PORT select a private tree and port.  In a chroot:
# tools/platform.sh trixie --run bench/emission_phases.sh.  About 5 minutes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here"/../tools/common.sh
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null
command -v strace >/dev/null || apt-get install -y -qq strace >/dev/null
command -v perf >/dev/null || apt-get install -y -qq linux-perf >/dev/null
build_and_install >/dev/null

start_bench_cluster bench-emission-phases "shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
jitprof.tiering = off
compute_query_id = on
max_parallel_workers_per_gather = 0
autovacuum = off
jitprof.save = off"
psql_q -c "SET jit = off" -f "$TOP/test/corpus/schema.sql" >/dev/null
psql_q -c "CREATE EXTENSION jitprof" -c "VACUUM ANALYZE" >/dev/null
as_pg_user "$PG_BINDIR"/pg_ctl -D "$work/data" -w stop >/dev/null

# one statement per line, as the single-user backend reads them
corpus_statements | cut -f2 | sed 's/$/;/' >"$work/queries.sql"
nq=$(wc -l <"$work/queries.sql")

declare -A options=(
	[llvmjit]="-c jit_provider=llvmjit"
	[jitprof]="-c jit_provider=jitprof"
	[steps]="-c jit_provider=jitprof -c jitprof.steps=on"
)
# what each single-user backend reads: JIT forced, then the queries
forced() {
	echo "SET jit_above_cost = 0; SET jit_optimize_above_cost = 0; SET jit_inline_above_cost = 0;"
}
workload() {
	forced
	cat "$work/queries.sql"
}
# callgrind_run CONFIG NAME: the workload on stdin in one single-user
# backend, counted; its inclusive and exclusive listings in incl.NAME and
# excl.NAME
callgrind_run() {
	# shellcheck disable=SC2086
	callgrind_single "$work/cg.$2" "$work/single.$2.log" ${options[$1]}
	callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$work/cg.$2" >"$work/incl.$2" 2>/dev/null
	callgrind_annotate --inclusive=no --auto=no --threshold=100 "$work/cg.$2" >"$work/excl.$2" 2>/dev/null
}
first=${FIRST:-0}
if [ "$first" -gt 0 ]; then
	[ "$first" -lt "$nq" ] && nq=$first
	configs=(llvmjit jitprof)
	for config in "${configs[@]}"; do
		for ((i = 1; i <= nq; i++)); do
			{ forced; sed -n "${i}p" "$work/queries.sql"; } | callgrind_run "$config" "$config.$i"
		done
	done
else
	configs=(llvmjit jitprof steps)
	for config in "${configs[@]}"; do
		workload | callgrind_run "$config" "$config"
	done
fi

# the largest inclusive count of the functions matching a pattern, summed
# over the runs of a configuration (one, or one per query with FIRST=1)
phase() {
	local f sum=0 n
	for f in "$work/incl.$1" "$work/incl.$1".*; do
		[ -f "$f" ] || continue
		n=$({ grep -E "$2" "$f" || true; } | head -n 1 | awk '{ gsub(",", "", $1); print $1 }')
		sum=$((sum + ${n:-0}))
	done
	echo "$sum"
}
declare -A pattern=(
	[total]=':PostgresMain '
	[IR]=':(jp_compile_expr|llvm_compile_expr) '
	[inline]=':llvm_inline '
	[optimise]=':(LLVMRunPassManager|LLVMRunPasses) '
	[emit]=':LLVMOrcLLJITLookup '
	[codegen]='SimpleCompiler::operator\(\)'
	[link]='(RTDyldObjectLinkingLayer::emit|JitprofObjectLayer::emit)'
	[load]=':jp_llvm_load '
	[annotate]=':jp_steps_annotate '
	[debuginfo]=':jp_add_debug_info '
	[dwarfend]='DwarfDebug::endModule\(\)'
	[readback]='stepTables\(llvm::object::ObjectFile const'
)
echo "# bench/emission_phases.sh, commit $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%F), PostgreSQL $("$PG_BINDIR"/postgres -V | awk '{ print $3 }')"
echo "# instructions per query (callgrind, inclusive), $nq TPC-H-style queries, JIT forced with optimisation and inlining$([ "$first" -gt 0 ] && echo ", each the first compilation of its own backend")"
# a ratio, where the denominator is not next to nothing
ratio() {
	if [ "$2" -ge 1000000 ] && [ "$1" != 0 ]; then
		printf '%9.4f' "$(echo "$1 / $2" | bc -l)"
	else
		printf '%9s' -
	fi
}
printf '%-9s %13s %13s %9s %13s %9s\n' phase stock jitprof /stock steps /jitprof
for p in total IR inline optimise emit codegen link load annotate debuginfo dwarfend readback; do
	s=$(phase llvmjit "${pattern[$p]}")
	j=$(phase jitprof "${pattern[$p]}")
	d=$(phase steps "${pattern[$p]}")
	printf '%-9s %13.0f %13.0f %s %13.0f %s\n' "$p" "$(echo "${s:-0} / $nq" | bc -l)" \
		"$(echo "${j:-0} / $nq" | bc -l)" "$(ratio "${j:-0}" "${s:-0}")" \
		"$(echo "${d:-0} / $nq" | bc -l)" "$(ratio "${d:-0}" "${j:-0}")"
done
echo
echo "# jitprof's own code (jitprof.so, jitprof_llvm.so), exclusive instructions per query: in all, and its 15 largest functions"
perl -ne 'next unless /^\s*([\d,]+) .*?:(.*) \[\S*\/(jitprof(?:_llvm)?\.so)\]\s*$/;
	my ($n, $fn, $obj) = ($1, $2, $3);
	$n =~ s/,//g; $fn =~ s/\(.*//; $total{$obj} += $n; $f{"$obj $fn"} += $n;
	END {
		printf "%-60s %12.0f\n", "$_ (all)", $total{$_} / '"$nq"' for sort keys %total;
		my @top = (sort { $f{$b} <=> $f{$a} } keys %f)[0 .. 14];
		printf "%-60s %12.0f\n", substr($_, 0, 60), $f{$_} / '"$nq"' for grep { defined } @top;
	}' "$work"/excl.jitprof "$work"/excl.jitprof.* 2>/dev/null
[ "$first" -gt 0 ] && exit 0

echo
echo "# the kernel's side, per query: system calls (strace -c) and page faults (perf stat), same runs without valgrind"
printf '%-14s %13s %13s %13s\n' "" stock jitprof steps
declare -A calls faults
for config in llvmjit jitprof steps; do
	# shellcheck disable=SC2086
	workload | as_pg_user strace -c -o "$work/strace.$config" "$PG_BINDIR"/postgres --single \
		-D "$work/data" ${options[$config]} postgres >/dev/null 2>&1
	# shellcheck disable=SC2086
	workload | as_pg_user_perfmon perf stat -x, -e page-faults -o "$work/perf.$config" "$PG_BINDIR"/postgres \
		--single -D "$work/data" ${options[$config]} postgres >/dev/null 2>&1
	faults[$config]=$(awk -F, '/page-faults/ { print $1 }' "$work/perf.$config")
	for sc in mmap munmap mprotect madvise; do
		calls[$config.$sc]=$(awk -v sc="$sc" '$NF == sc { print $4 }' "$work/strace.$config")
	done
	calls[$config.total]=$(awk '$NF == "total" { print $4 }' "$work/strace.$config")
done
for sc in mmap munmap mprotect madvise total; do
	printf '%-14s %13.1f %13.1f %13.1f\n' "$sc" "$(echo "${calls[llvmjit.$sc]:-0} / $nq" | bc -l)" \
		"$(echo "${calls[jitprof.$sc]:-0} / $nq" | bc -l)" "$(echo "${calls[steps.$sc]:-0} / $nq" | bc -l)"
done
printf '%-14s %13.1f %13.1f %13.1f\n' "page faults" "$(echo "${faults[llvmjit]:-0} / $nq" | bc -l)" \
	"$(echo "${faults[jitprof]:-0} / $nq" | bc -l)" "$(echo "${faults[steps]:-0} / $nq" | bc -l)"
