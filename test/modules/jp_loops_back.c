/*-------------------------------------------------------------------------
 *
 * jp_loops_back.c
 *	  Test module: a JIT provider whose _PG_jit_provider_init calls
 *	  jitprof's, so that jitprof.llvmjit_library set to it leads back into
 *	  jitprof without naming a jitprof file.  Built by
 *	  test/t/009_llvmjit_library_self_reference.pl.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  test/modules/jp_loops_back.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "jit/jit.h"

PG_MODULE_MAGIC;

void
_PG_jit_provider_init(JitProviderCallbacks *cb)
{
	JitProviderInit init = (JitProviderInit)
		load_external_function("$libdir/jitprof", "_PG_jit_provider_init",
							   true, NULL);

	init(cb);
}
