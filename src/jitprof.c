/*-------------------------------------------------------------------------
 *
 * jitprof.c
 *	  Module entry point: start-up, wiring the layers together.
 *
 * jitprof.so is loaded in one of two ways.  Through shared_preload_libraries
 * it is in the postmaster and every backend inherits it; through
 * jit_provider = 'jitprof' alone it is loaded by the first JIT compilation of
 * each backend.  Either way _PG_init runs once per process and defines the
 * GUCs.  Features that need shared memory check jitprof_preloaded.
 *
 * This file is the top layer (doc/architecture.md): it calls each layer's
 * start-up function, bottom first.  The settings of the LLVM side
 * (jitprof.linker, jitprof.debug_fail_link, jitprof.gdb) are core's
 * (core/settings.c), so that they exist before jitprof_llvm.so is loaded;
 * it reads them through JitprofCoreTable.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/jitprof.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "advisor/advisor.h"
#include "core/core.h"
#include "hooks/hooks.h"
#include "names/names.h"
#include "provider/provider.h"
#include "sampler/sampler.h"
#include "sinks/sinks.h"
#include "store/store.h"

PG_MODULE_MAGIC;

extern PGDLLEXPORT void _PG_init(void);

void
_PG_init(void)
{
	jp_settings_init();
	jp_provider_init();

	jp_perf_map_init();
	jp_jitdump_init();
	jp_store_init();
	jp_advisor_init();
	jp_sampler_init();
	jp_hooks_init();

	MarkGUCPrefixReserved("jitprof");

	/* names carry query IDs, so make sure they are computed */
	jp_naming_note_load();
	EnableQueryId();
}
