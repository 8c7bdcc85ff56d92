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
 * it which query ID an execution's code is named after, and hands it what
 * tiered JIT did in an execution (sampler_tiering.c); the hooks layer
 * tells it where each statement's executor stands.  The files of the layer
 * share sampler_shared.h, which no other layer includes.
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

#include "executor/execdesc.h"

#include "core/core.h"
#include "store/store.h"

/* sampler_profile.c: GUCs and the compile-time questions */
extern void jp_sampler_init(void);
extern int	jp_sampler_rate(void);
extern int64 jp_execution_queryid(EState *estate);

/*
 * sampler_profile.c: the sampler's part of each executor hook, called by the
 * hooks layer around the next hook (hooks/hooks.c says in which order).  The
 * frame holds what is put back when the next hook returns or throws.
 */
typedef struct JpSamplerFrame
{
	struct JpExec *saved;		/* the running execution on entry */
	struct JpExec *exec;		/* the one that follows the query, or NULL */
	bool		restore;		/* ExecutorStart: put "saved" back after */
	bool		outside;		/* ExecutorRun: no execution was open */
	bool		watching;		/* ExecutorRun: its nodes are flush points */
	bool		wrapped;		/* ExecutorRun: its nodes are profiled */
	bool		top;			/* ProcessUtility: a top-level statement */
	uintptr_t	nested_floor;	/* ExecutorRun: what to put back at its end */
} JpSamplerFrame;

extern void jp_sampler_inner_query(QueryDesc *queryDesc);
extern bool jp_sampler_start_begin(QueryDesc *queryDesc, int nesting_level,
								   QueryDesc *running_toplevel,
								   JpSamplerFrame *frame);
extern void jp_sampler_frame_failed(JpSamplerFrame *frame);
extern void jp_sampler_start_end(JpSamplerFrame *frame);
extern void jp_sampler_run_begin(QueryDesc *queryDesc, JpSamplerFrame *frame);
extern void jp_sampler_run_failed(QueryDesc *queryDesc,
								  JpSamplerFrame *frame);
extern void jp_sampler_run_end(JpSamplerFrame *frame);
extern bool jp_sampler_follows(const QueryDesc *queryDesc);
extern bool jp_sampler_enter(QueryDesc *queryDesc, JpSamplerFrame *frame);
extern void jp_sampler_leave(JpSamplerFrame *frame);
extern void jp_sampler_finish_failed(QueryDesc *queryDesc,
									 JpSamplerFrame *frame);
extern void jp_sampler_end_done(JpSamplerFrame *frame);
extern void jp_sampler_utility_begin(PlannedStmt *pstmt,
									 const char *queryString, bool toplevel,
									 JpSamplerFrame *frame);
extern void jp_sampler_utility_failed(JpSamplerFrame *frame);
extern void jp_sampler_utility_end(JpSamplerFrame *frame);

/* sampler_tiering.c: what tiered JIT did, charged to an execution */
extern uint32 jp_sampler_tiering_exec(void);
extern void jp_sampler_tiering_add(uint32 exec_id,
								   const JpStoreTiering *delta);

/*
 * sampler_signal.c: pointer stores made by the signal handler at its next
 * sample (tiered JIT wakes a resting query so; doc/tiering.md)
 */
#define JP_SAMPLER_MAX_WAKES	16
extern int	jp_sampler_tick_rate(void);
extern uint32 jp_sampler_ticks(void);
extern void jp_sampler_wake_arm(void *volatile *slots[], void *values[],
								int n);
extern void jp_sampler_wake_disarm(void);

/* sampler_nodes.c: the plan node whose expressions are being compiled */
extern int32 jp_sampler_compile_begin(PlanState *ps);
extern void jp_sampler_compile_end(int32 old);

/*
 * sampler_nodes.c: how this backend's plan-node profile pointed nodes at
 * itself (jitprof_status): a node's own entry, or the general wrapper
 */
typedef struct JpNodeWrapCounters
{
	uint64		entries;
	uint64		wrappers;
	uint64		by_site;		/* run unwrapped, told by call sites */
	uint64		sites;			/* call sites known (192 at most) */
	uint64		sites_ambiguous;	/* seen for two parents or positions */
	uint64		sites_dropped;	/* not learned: the table was full */
	uint64		samples_by_scan;	/* node found above the stack pointer */
	uint64		samples_unplaced;	/* no chain of frames found */
} JpNodeWrapCounters;
extern const JpNodeWrapCounters *jp_sampler_node_counters(void);

#endif							/* JITPROF_SAMPLER_H */
