/*-------------------------------------------------------------------------
 *
 * llvm_entry.c
 *	  jitprof_llvm.so's entry point, and its LLVM C API helpers.
 *
 * jitprof_llvm.so is the half of jitprof that needs LLVM, libstdc++ and
 * libelf (see jitprof_llvm.h).  It exports one function besides its magic
 * block, jitprof_llvm_connect(), which jitprof.so calls once per backend:
 * it keeps jitprof.so's table, registers the gdb sink, and returns this
 * library's table.
 *
 * The provider's compile_expr wrapper (provider.c) needs LLVM's C API to
 * find the functions llvmjit just generated and to give them frame
 * pointers; that part lives here, as new_functions().
 *
 * Everything runs in the backend's only thread.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/llvm/llvm_entry.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "jit/llvmjit.h"

#include <llvm-c/Core.h>

#include "llvm/linker.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT const JitprofLlvmTable *jitprof_llvm_connect(const JitprofCoreTable *core);

const JitprofCoreTable *jp_core = NULL;

static int	new_functions(LLVMJitContext *context, int counter_before, int max,
						  char **names, bool *is_deform);

static JitprofLlvmTable llvm_table = {
	.abi_version = JP_LLVM_ABI_VERSION,
	.linker_in_use = jp_linker_in_use,
	.arena_stats = jp_arena_stats,
	.gdb_counters = jp_gdb_counters,
	.new_functions = new_functions,
	.add_debug_info = jp_add_debug_info,
};

/*
 * The one entry point.  Returns NULL if jitprof.so was built for another
 * version of these tables.
 */
const JitprofLlvmTable *
jitprof_llvm_connect(const JitprofCoreTable *core)
{
	if (core == NULL || core->abi_version != JP_LLVM_ABI_VERSION)
		return NULL;

	if (jp_core == NULL)
	{
		jp_core = core;
		llvm_table.llvm_version = jp_llvm_version();
		llvm_table.interposers = jp_linker_interposers;
		llvm_table.ninterposers = jp_linker_ninterposers;
		jp_gdb_init();
	}
	return &llvm_table;
}

/*
 * Ask LLVM to keep a frame pointer in a JIT function, so that perf -g and
 * jitprof's sampler can walk from JIT code into the executor.
 */
static void
keep_frame_pointer(LLVMValueRef fn)
{
	LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(fn));
	LLVMAttributeRef attr = LLVMCreateStringAttribute(ctx, "frame-pointer",
													  strlen("frame-pointer"),
													  "all", strlen("all"));

	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, attr);
}

/*
 * llvm_expand_funcname() numbers every function it names with the context's
 * counter, so the functions generated since counter_before are those
 * numbered from counter_before on: one evalexpr_ or deform_ function each.
 */
static int
new_functions(LLVMJitContext *context, int counter_before, int max,
			  char **names, bool *is_deform)
{
	static const char *const prefixes[] = {"evalexpr", "deform"};
	int			nfunctions = 0;

	for (int n = counter_before; n < context->counter && nfunctions < max; n++)
	{
		for (int p = 0; p < lengthof(prefixes); p++)
		{
			char	   *name = psprintf("%s_%zu_%d", prefixes[p],
										context->module_generation, n);
			LLVMValueRef fn = LLVMGetNamedFunction(context->module, name);

			if (fn == NULL || LLVMIsDeclaration(fn))
			{
				pfree(name);
				continue;
			}
			keep_frame_pointer(fn);
			names[nfunctions] = name;
			is_deform[nfunctions] = (p == 1);
			nfunctions++;
			break;
		}
	}
	return nfunctions;
}
