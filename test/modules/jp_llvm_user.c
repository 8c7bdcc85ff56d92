/*-------------------------------------------------------------------------
 *
 * jp_llvm_user.c
 *	  Test module: an extension module linked with libLLVM-14, standing for
 *	  any library that puts libLLVM in the global symbol scope when it is
 *	  loaded.  Built and preloaded (before jitprof) by
 *	  test/t/008_preload_order.pl.
 *
 * Its _PG_init calls one LLVM C API function, so that the link keeps
 * libLLVM in DT_NEEDED.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  test/modules/jp_llvm_user.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include <llvm-c/Core.h>

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	LLVMDisposeMessage(LLVMCreateMessage("loaded"));
}
