/*-------------------------------------------------------------------------
 *
 * sampler.h
 *	  The sampler layer (doc/architecture.md): the SIGPROF hotspot sampler,
 *	  which charges CPU time to JIT functions, plan nodes and expression
 *	  steps and flushes it to the store.
 *
 * The sampler registers itself with the registry as a sink (link layer),
 * names plan nodes through the names layer and writes the store.  The
 * provider, above it, tells it which plan node is being compiled and asks
 * it which query ID an execution's code is named after.  The files of the
 * layer share sampler_shared.h, which no other layer includes.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_SAMPLER_H
#define JITPROF_SAMPLER_H

#include "core/core.h"

/* sampler_hooks.c: GUCs, hooks and the compile-time questions */
extern void jp_sampler_init(void);
extern int	jp_sampler_rate(void);
extern int64 jp_execution_queryid(EState *estate);

/* sampler_nodes.c: the plan node whose expressions are being compiled */
extern int32 jp_sampler_compile_begin(PlanState *ps);
extern void jp_sampler_compile_end(int32 old);

#endif							/* JITPROF_SAMPLER_H */
