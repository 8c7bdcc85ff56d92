/*-------------------------------------------------------------------------
 *
 * provider.h
 *	  The provider layer (doc/architecture.md): jitprof as a JIT provider,
 *	  PostgreSQL's llvmjit wrapped.
 *
 *	  provider.c      _PG_jit_provider_init and llvmjit's callbacks,
 *	                  wrapped: names (names layer), step listings, the
 *	                  plan node being compiled (sampler layer)
 *	  llvm_library.c  loads jitprof_llvm.so and hands it the registry
 *	                  (link layer) and the settings
 *	  got_patch.c     rebinds llvmjit.so's object-layer calls
 *
 * The provider is the top of the compile path: it calls down into the
 * sampler, the link and the names layers, and nothing below calls it.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/provider.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_PROVIDER_H
#define JITPROF_PROVIDER_H

#include "core/core.h"
#include "link/link.h"
#include "names/names.h"
#include "sampler/sampler.h"
#include "sinks/sinks.h"

/* provider.c */
extern char *jitprof_llvmjit_library;
extern void jp_provider_init(void);
extern bool jp_provider_active(void);
extern PGDLLEXPORT void _PG_jit_provider_init(JitProviderCallbacks *cb);

/* llvm_library.c: jitprof_llvm.so, once loaded in this backend (or NULL) */
extern const JitprofLlvmTable *jp_llvm_load(void);
extern const JitprofLlvmTable *jp_llvm_loaded(void);

/* got_patch.c */
extern bool jp_got_patch(const void *code, const char *library,
						 const JitprofInterposer *interposers,
						 int ninterposers);

#endif							/* JITPROF_PROVIDER_H */
