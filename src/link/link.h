/*-------------------------------------------------------------------------
 *
 * link.h
 *	  The link layer (doc/architecture.md): the registry of linked JIT code
 *	  and its fan-out to the sinks (registry.c).
 *
 * Either linker (jitprof_llvm.so, through the table of core/jitprof_llvm.h)
 * reports each linked object to the registry, which names its functions
 * (names layer), keeps the object until its code is freed and tells every
 * registered sink (a JitprofSink, core.h).  Sinks and the sampler register
 * themselves here; the registry knows none of them.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/link/link.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_LINK_H
#define JITPROF_LINK_H

#include "core/core.h"
#include "names/names.h"

/*
 * registry.c.  The linker and the code arena report through the first six,
 * which jitprof_llvm.so reaches through JitprofCoreTable; they never throw.
 */
extern void jp_registry_object_linked(uint64_t key,
									  const JitprofLinkedFunction *functions,
									  int nfunctions);
extern void jp_registry_object_freed(uint64_t key);
extern void jp_registry_link_failed(void);
extern void jp_registry_link_error(const char *message);
extern bool jp_registry_stable_name(const char *llvm_name, char *buf,
									size_t len);
extern void jp_registry_linker_fallback(const char *reason);
extern void jp_registry_llvm_plugin_failed(int plugin, const char *reason);
extern void jp_registry_register_sink(const JitprofSink *sink);
extern int	jp_registry_recent_count(void);
extern const JitprofFunction *jp_registry_recent_function(int i, bool *live);
extern uint64 jp_registry_link_errors(void);
extern const char *jp_registry_last_link_error(void);

/* counters reported by jitprof_status */
typedef struct JitprofCounters
{
	uint64		objects_linked;
	uint64		objects_freed;
	uint64		functions_linked;
	uint64		functions_live;
	uint64		code_bytes_live;
	uint64		link_failures;
	uint64		objects_dropped;	/* not recorded: out of memory */
	uint64		rtdyld_fallbacks;	/* objects linked by RuntimeDyld instead */
} JitprofCounters;

extern const JitprofCounters *jp_registry_counters(void);

#endif							/* JITPROF_LINK_H */
