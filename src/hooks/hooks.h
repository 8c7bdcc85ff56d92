/*-------------------------------------------------------------------------
 *
 * hooks.h
 *	  The executor hooks layer (doc/architecture.md): installs and chains
 *	  jitprof's executor and ProcessUtility hooks, keeps the nesting level
 *	  as pg_stat_statements counts it, and calls the layers that act on a
 *	  statement, each through its own header: the sampler (sampler.h), the
 *	  JIT advisor (advisor.h) and tiered JIT (provider.h).  Nothing below
 *	  calls it.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/hooks/hooks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_HOOKS_H
#define JITPROF_HOOKS_H

#include "advisor/advisor.h"
#include "core/core.h"
#include "provider/provider.h"
#include "sampler/sampler.h"

extern void jp_hooks_init(void);

#endif							/* JITPROF_HOOKS_H */
