/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The jitprof.* settings that more than one layer acts on.
 *
 * The rule: a setting is defined next to the module that acts on it (the
 * store's, the advisor's, the sampler's, the perf map's, the provider's),
 * and another folder reads it only through a function of that module's
 * header (jp_sampler_rate, jp_store_limits).  A setting that modules of
 * several layers act on is defined here and read as an extern of
 * core/core.h, as PostgreSQL's own GUCs are: the linker settings
 * (jitprof_llvm.so, through JitprofCoreTable), jitprof.gdb and the jitdump
 * settings (the step listing and the jitdump sink), jitprof.save (the
 * store and the advisor).  tools/check_layers.pl checks the rule from the
 * objects' symbols; tools/check_settings.pl that README lists them all.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/core/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/guc.h"

#include "core/core.h"

/* GUC variables */
int			jitprof_linker = JP_LINKER_JITLINK;
bool		jitprof_debug_fail_link = false;
bool		jitprof_gdb = false;
int			jitprof_code_arena_max_size = 1024 * 1024;	/* kB */
bool		jitprof_steps = false;
int			jitprof_llvm_plugins = JP_LLVM_PLUGINS_OFF;
bool		jitprof_perf_jitdump = false;
char	   *jitprof_jitdump_dir = NULL;
bool		jitprof_jitdump_unwinding = true;
int			jitprof_jitdump_max_size = 65536;	/* kB */
bool		jitprof_save = true;

/* true when loaded by shared_preload_libraries */
bool		jitprof_preloaded = false;

static const struct config_enum_entry linker_options[] = {
	{"jitlink", JP_LINKER_JITLINK, false},
	{"rtdyld", JP_LINKER_RTDYLD, false},
	{NULL, 0, false}
};

static const struct config_enum_entry llvm_plugins_options[] = {
	{"off", JP_LLVM_PLUGINS_OFF, false},
	{"perf", JP_LLVM_PLUGINS_PERF, false},
	{"debugger", JP_LLVM_PLUGINS_DEBUGGER, false},
	{"perf_debugger", JP_LLVM_PLUGINS_BOTH, false},
	{NULL, 0, false}
};

/*
 * SET refuses a directory too long for the files jitprof creates under it,
 * whatever the backend's PID.  The default is let through (it comes from
 * JITDUMPDIR, and refusing it would stop the server from starting): the
 * sinks check the paths they build, and dump_open() reports it.
 */
static bool
check_jitdump_dir(char **newval, void **extra, GucSource source)
{
	size_t		len = *newval != NULL ? strlen(*newval) : 0;

	if (source == PGC_S_DEFAULT || len <= JP_JITDUMP_DIR_MAXLEN)
		return true;
	GUC_check_errmsg("jitprof.jitdump_dir is too long");
	GUC_check_errdetail("It is %zu bytes long, and at most %d bytes leave room for the files jitprof creates under it.",
						len, JP_JITDUMP_DIR_MAXLEN);
	GUC_check_errhint("Set jitprof.jitdump_dir to a shorter path.");
	return false;
}

/* called first by _PG_init */
void
jp_settings_init(void)
{
	const char *env_dir = getenv("JITDUMPDIR");

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

	DefineCustomEnumVariable("jitprof.llvm_plugins",
							 "Also attaches LLVM's own perf and debugger plugins to JITLink (a comparison aid).",
							 "off, perf, debugger or perf_debugger; needs LLVM 19 or later.  Read when a backend first "
							 "compiles JIT code; jitprof's own sinks work as set (doc/perf.md).",
							 &jitprof_llvm_plugins,
							 JP_LLVM_PLUGINS_OFF,
							 llvm_plugins_options,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

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

	DefineCustomBoolVariable("jitprof.perf_jitdump",
							 "Writes a perf jitdump file (code and names of JIT functions) for perf inject --jit.",
							 "jit_profiling_support = on turns it on as well.",
							 &jitprof_perf_jitdump,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("jitprof.jitdump_dir",
							   "Directory under which jitdump files are written, in .debug/jit/jitprof-<date>-<random>/.",
							   "The default is the server's JITDUMPDIR environment variable, or /tmp.",
							   &jitprof_jitdump_dir,
							   (env_dir && env_dir[0] != '\0') ? env_dir : "/tmp",
							   PGC_SUSET,
							   0,
							   check_jitdump_dir, NULL, NULL);

	DefineCustomBoolVariable("jitprof.jitdump_unwinding",
							 "Adds JIT_CODE_UNWINDING_INFO records to the jitdump file, so that perf can unwind through JIT frames.",
							 "They carry the call frame information of the code's .eh_frame, for perf record --call-graph dwarf.",
							 &jitprof_jitdump_unwinding,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("jitprof.save",
							 "Saves hotspot statistics across server shutdowns.",
							 NULL,
							 &jitprof_save,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("jitprof.jitdump_max_size",
							"Sets the size at which a backend stops adding to its jitdump file.",
							"Each record carries a function's code; the same code at the same address is written once.",
							&jitprof_jitdump_max_size,
							65536,
							64,
							INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);
}
