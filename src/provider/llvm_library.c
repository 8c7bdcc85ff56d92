/*-------------------------------------------------------------------------
 *
 * llvm_library.c
 *	  jitprof.so's side of the split: loading jitprof_llvm.so on demand.
 *
 * jitprof.so links no LLVM, so that preloading it puts no libLLVM,
 * libstdc++ or libelf in the postmaster and in every process it forks.
 * What needs them lives in jitprof_llvm.so, which the provider loads here
 * the first time a backend JIT-compiles with jit_provider = 'jitprof' (just
 * before llvmjit.so, which maps LLVM anyway).  The two libraries meet only
 * in the two tables of jitprof_llvm.h, exchanged through jitprof_llvm.so's
 * one exported function.
 *
 * Until it is loaded jp_llvm_loaded() is NULL, and jitprof_status reports
 * "none" and zeroes for the LLVM side: asking for the status never loads
 * LLVM.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/llvm_library.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>

#include "fmgr.h"
#include "miscadmin.h"

#include "provider/provider.h"

static const JitprofLlvmTable *llvm_table = NULL;

/* what jitprof_llvm.so may call and read */
static const JitprofCoreTable core_table = {
	.abi_version = JP_LLVM_ABI_VERSION,
	.object_linked = jp_registry_object_linked,
	.object_freed = jp_registry_object_freed,
	.link_failed = jp_registry_link_failed,
	.link_error = jp_registry_link_error,
	.register_sink = jp_registry_register_sink,
	.stable_name = jp_registry_stable_name,
	.linker_fallback = jp_registry_linker_fallback,
	.llvm_plugin_failed = jp_registry_llvm_plugin_failed,
	.linker = &jitprof_linker,
	.debug_fail_link = &jitprof_debug_fail_link,
	.gdb = &jitprof_gdb,
	.code_arena_max_size = &jitprof_code_arena_max_size,
	.steps = &jitprof_steps,
	.llvm_plugins = &jitprof_llvm_plugins,
	.steps_file_path = jp_steps_file_path,
	.unwind_wanted = jp_jitdump_unwind_wanted,
};

/*
 * Load jitprof_llvm.so and connect it, once per backend.  Returns its table,
 * or NULL after a WARNING when it cannot be used: the provider then runs
 * llvmjit as without jitprof.  A library that exists but cannot be loaded
 * throws the loader's ERROR, as a JIT provider that cannot be loaded does.
 */
const JitprofLlvmTable *
jp_llvm_load(void)
{
	static bool tried = false;
	char	   *path;
	struct stat st;
	JitprofLlvmConnect connect;
	const JitprofLlvmTable *table;

	if (tried)
		return llvm_table;
	tried = true;

	path = psprintf("%s/%s%s", pkglib_path, JP_LLVM_LIBRARY, DLSUFFIX);
	if (stat(path, &st) != 0)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("jitprof could not find its LLVM library \"%s\": %m",
						path),
				 errdetail("JIT-compiled code is linked by PostgreSQL's llvmjit alone; jitprof names and profiles none of it."),
				 errhint("Reinstall jitprof.")));
		return NULL;
	}

	connect = (JitprofLlvmConnect)
		load_external_function(path, JP_LLVM_CONNECT, true, NULL);
	table = connect(&core_table);
	if (table == NULL || table->abi_version != JP_LLVM_ABI_VERSION)
	{
		ereport(WARNING,
				(errmsg("jitprof's LLVM library \"%s\" does not match jitprof.so",
						path),
				 errdetail("JIT-compiled code is linked by PostgreSQL's llvmjit alone; jitprof names and profiles none of it."),
				 errhint("Reinstall jitprof, then restart the server.")));
		return NULL;
	}

	llvm_table = table;
	return llvm_table;
}

/* jitprof_llvm.so's table if this backend has loaded it, or NULL */
const JitprofLlvmTable *
jp_llvm_loaded(void)
{
	return llvm_table;
}
