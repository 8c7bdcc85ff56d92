/*-------------------------------------------------------------------------
 *
 * jitprof.c
 *	  Module entry point: GUCs and start-up.
 *
 * jitprof.so is loaded in one of two ways.  Through shared_preload_libraries
 * it is in the postmaster and every backend inherits it; through
 * jit_provider = 'jitprof' alone it is loaded by the first JIT compilation of
 * each backend.  Either way _PG_init runs once per process and defines the
 * GUCs.  Features that need shared memory check jitprof_preloaded.
 *
 * The settings of the LLVM side (jitprof.linker, jitprof.debug_fail_link,
 * jitprof.gdb) are defined here too, so that they exist before
 * jitprof_llvm.so is loaded; it reads them through JitprofCoreTable.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/queryjumble.h"
#include "utils/guc.h"

#include "jitprof.h"

PG_MODULE_MAGIC;

/* GUC variables */
int			jitprof_linker = JP_LINKER_JITLINK;
char	   *jitprof_llvmjit_library = NULL;
bool		jitprof_debug_fail_link = false;
bool		jitprof_gdb = false;
int			jitprof_code_arena_max_size = 1024 * 1024;	/* kB */

/* true when loaded by shared_preload_libraries */
bool		jitprof_preloaded = false;

static const struct config_enum_entry linker_options[] = {
	{"jitlink", JP_LINKER_JITLINK, false},
	{"rtdyld", JP_LINKER_RTDYLD, false},
	{NULL, 0, false}
};

/*
 * jitprof.llvmjit_library must lead to PostgreSQL's provider, not back into
 * jitprof: jitprof would load itself as the library it wraps.
 */
static bool
check_llvmjit_library(char **newval, void **extra, GucSource source)
{
	char	   *path = jp_llvmjit_path(*newval);

	if (jp_library_is_jitprof(path))
	{
		GUC_check_errdetail("Library \"%s\" is part of jitprof, not PostgreSQL's JIT provider.",
							path);
		GUC_check_errhint("Set jitprof.llvmjit_library to PostgreSQL's llvmjit, for example '$libdir/llvmjit'.");
		pfree(path);
		return false;
	}
	pfree(path);
	return true;
}

void
_PG_init(void)
{
	jitprof_preloaded = process_shared_preload_libraries_in_progress;

	DefineCustomEnumVariable("jitprof.linker",
							 "Linker for JIT-compiled code: jitlink or rtdyld.",
							 "Read when a backend first compiles JIT code; "
							 "jitprof_status shows the linker actually in use.",
							 &jitprof_linker,
							 JP_LINKER_JITLINK,
							 linker_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("jitprof.llvmjit_library",
							   "PostgreSQL JIT provider library that generates the code jitprof links.",
							   NULL,
							   &jitprof_llvmjit_library,
							   "$libdir/llvmjit",
							   PGC_SUSET,
							   0,
							   check_llvmjit_library, NULL, NULL);

	DefineCustomIntVariable("jitprof.code_arena_max_size",
							"Sets the address space a backend may reserve for JITLink's code.",
							"Reserved in steps of 64 MB as needed; beyond it, RuntimeDyld links the code.",
							&jitprof_code_arena_max_size,
							1024 * 1024,
							1024,
							INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("jitprof.debug_fail_link",
							 "Makes JITLink refuse every object, so that RuntimeDyld links it (for testing).",
							 NULL,
							 &jitprof_debug_fail_link,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("jitprof.gdb",
							 "Registers JIT-compiled functions with gdb under their jitprof names.",
							 "Uses gdb's JIT interface; also on when jit_debugging_support is on.",
							 &jitprof_gdb,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("jitprof.steps",
							 "Gives JIT-compiled functions debug information whose source lines are the expression's steps.",
							 "Off by default: it adds about 10% to emission time (doc/steps.md).",
							 &jitprof_steps,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	jp_perf_map_init();
	jp_jitdump_init();
	jp_store_init();
	jp_sampler_init();

	MarkGUCPrefixReserved("jitprof");

	/* names carry query IDs, so make sure they are computed */
	jp_naming_note_load();
	EnableQueryId();
}
