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
 *	  tiering.c       tiered JIT: expressions run interpreted first and are
 *	                  compiled by provider.c's compile, handed in
 *	  tiering_rule.c  tiering's decision rule (tiering_rule.h, for
 *	                  tiering's files only)
 *	  tiering_plan.c  which plans are tiered, decided at ExecutorStart
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

#include "executor/execdesc.h"

#include "advisor/advisor.h"
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

/*
 * tiering.c.  What it needs of provider.c is handed to it: "compile" is the
 * eager compile of one expression (llvmjit's, named); it sets *llvmjit_entry
 * to the evalfunc llvmjit installed, which emits the module on its first call.
 */
typedef struct JpTieringCompiler
{
	bool		(*compile) (ExprState *state, ExprStateEvalFunc *llvmjit_entry);
	void		(*reset_after_error) (void);
} JpTieringCompiler;

/* jitprof.debug_tiering_wait: where a round waits */
typedef enum JpTieringWait
{
	JP_TIERING_WAIT_OFF,
	JP_TIERING_WAIT_GENERATE,	/* while llvmjit generates the round's code */
	JP_TIERING_WAIT_EMIT		/* before the round's module is emitted */
} JpTieringWait;

/* this backend's tiering, since it started (jitprof_status) */
typedef struct JpTieringCounters
{
	uint64		queries;		/* queries that deferred an expression */
	uint64		switches;		/* rounds whose code was emitted */
	uint64		expressions_compiled;	/* in those rounds */
	uint64		functions_compiled; /* in those rounds (EXPLAIN's count) */
	uint64		expressions_never_compiled; /* at the queries' ends */
	uint64		failures;		/* failed compiles (one WARNING each) */
	uint64		rests;			/* times a query's hottest expressions ran
								 * unwrapped until the sampler's next sample */
} JpTieringCounters;

extern bool jitprof_tiering;
extern bool jitprof_tiering_rest;
extern bool jitprof_debug_fail_tiering;
extern int	jitprof_debug_tiering_wait;
extern void jp_tiering_define_gucs(void);
extern const JpTieringCounters *jp_tiering_counters(void);
extern bool jp_tiering_defer(ExprState *state,
							 const JpTieringCompiler *compiler);

/* tiering_plan.c: which plans are tiered, at ExecutorStart (hooks layer) */
typedef struct JpTieringPlanCounters
{
	uint64		promoted;		/* under jit_above_cost, tiered */
	uint64		below_floor;	/* JIT by PostgreSQL, run interpreted */
	uint64		remembered;		/* under the floor, ran long: remembered */
	uint64		by_history;		/* under the floor, tiered as remembered */
	uint64		replaced;		/* remembered query IDs replaced */
} JpTieringPlanCounters;

extern void jp_tiering_plan(QueryDesc *queryDesc, int eflags, bool toplevel);
extern void jp_tiering_plan_end(QueryDesc *queryDesc);
extern void jp_tiering_offer(QueryDesc *queryDesc, JpTieringOffer *offer);
extern const JpTieringPlanCounters *jp_tiering_plan_counters(void);

/* got_patch.c */
extern bool jp_got_patch(const void *code, const char *library,
						 const JitprofInterposer *interposers,
						 int ninterposers);

#endif							/* JITPROF_PROVIDER_H */
