/*-------------------------------------------------------------------------
 *
 * store.h
 *	  The store layer (doc/architecture.md): the shared-memory hotspot store,
 *	  written by the sampler and read by the SQL views.
 *
 *	  store.c        settings, shared memory, start-up
 *	  store_rows.c   adding a flush to the rows, copying them out, reset
 *	  store_evict.c  eviction, and the rows that go with the rows evicted
 *	  store_file.c   the statistics file (saved at shutdown, loaded at start)
 *	  store_shared.h inside the folder only: the shared memory's addresses
 *	                 and the locking contract
 *
 * The sampler aggregates samples per JIT function in backend-local memory
 * and hands them to the store in batches, each for one execution of one
 * query (jp_store_flush).  The SQL functions read a copy of the store taken
 * under its lock (jp_store_copy).
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/store/store.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_STORE_H
#define JITPROF_STORE_H

#include "datatype/timestamp.h"
#include "utils/hsearch.h"

#include "core/core.h"

/*
 * Key of one store entry.  A query's summary row has discriminator 0 and
 * plan_node_id -1; a JIT function's row has a discriminator made from its
 * symbol (role and ordinal included), never 0.
 */
typedef struct JpStoreKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
	int32		plan_node_id;
	uint32		discriminator;
} JpStoreKey;

typedef struct JpStoreEntry
{
	JpStoreKey	key;			/* hash key: must be first */
	int64		executions;		/* summary rows only */
	int64		node_executions;	/* summary rows: those with plan-node data */
	int64		node_samples;	/* summary rows: their query samples */
	int64		self_samples;
	int64		total_samples;
	int64		query_samples;
	int64		compilations;
	int64		code_bytes;		/* size of the latest compilation */
	/* summary rows: tiered JIT (JpStoreTiering) */
	int64		tiered_executions;
	int64		tiering_switches;
	int64		tiering_functions;
	int64		tiering_expressions_compiled;
	int64		tiering_expressions_never_compiled;
	TimestampTz first_seen;
	TimestampTz last_seen;
	int32		ordinal;		/* JitprofOrigin.ordinal; 0 in summary rows */
	int32		padding;		/* zero */
	char		node_type[JP_NODE_TYPE_LEN];
	char		role[JP_ROLE_LEN];
	char		symbol[JP_SYMBOL_LEN];
} JpStoreEntry;

/* what one backend learnt about one JIT function since its last flush */
typedef struct JpStoreDelta
{
	const JitprofOrigin *origin;
	int64		self_samples;
	int64		total_samples;
	int64		query_samples;
	int64		compilations;
	int64		code_bytes;
} JpStoreDelta;

/* longest EXPLAIN-like label of a plan node, terminator included */
#define JP_LABEL_LEN		128

/* one plan node of a query's plan, as the first sampled execution saw it */
typedef struct JpNodeShape
{
	int32		plan_node_id;
	int32		parent;			/* plan_node_id of its parent, -1 for none */
	char		node_type[JP_NODE_TYPE_LEN];	/* "SeqScan" */
	char		label[JP_LABEL_LEN];	/* "Seq Scan on lineitem" */
} JpNodeShape;

/* what one backend counted for one plan node since its last flush */
typedef struct JpStoreNodeDelta
{
	int32		plan_node_id;
	int64		self_samples;
	int64		jit_self_samples;
	int64		jit_compile_samples;
} JpStoreNodeDelta;

/* one flush's plan-node part: the counts, and the plan's shape if known */
typedef struct JpStoreNodes
{
	const JpStoreNodeDelta *deltas;
	int			ndeltas;
	const JpNodeShape *shape;	/* NULL: not known (a parallel worker) */
	int			nshape;
} JpStoreNodes;

typedef struct JpStoreNodeKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
	int32		plan_node_id;
} JpStoreNodeKey;

/* a plan node's row in the shared plan-node table */
typedef struct JpStoreNodeEntry
{
	JpStoreNodeKey key;			/* hash key: must be first */
	bool		has_shape;		/* parent, node_type and label are known */
	int32		parent;
	char		node_type[JP_NODE_TYPE_LEN];
	char		label[JP_LABEL_LEN];
	int64		self_samples;
	int64		jit_self_samples;
	int64		jit_compile_samples;
	/* tiered JIT: the rounds that compiled its expressions (JpStoreTierNode) */
	int64		tier_rounds;
	int64		tier_round_evaluations;
	int64		tier_compile_ns;
} JpStoreNodeEntry;

/*
 * What tiered JIT did for one plan node of an execution since the last
 * flush: the emitted rounds that compiled some of its expressions, the
 * query's interpreted evaluations at each of those rounds (summed), and
 * the time spent compiling for it (its expressions' code generation, and
 * the emission of a module when one of its expressions emitted it).
 */
typedef struct JpStoreTierNode
{
	int32		plan_node_id;
	int64		rounds;
	int64		round_evaluations;
	int64		compile_ns;
} JpStoreTierNode;

/*
 * One flush's tiered-JIT part (doc/tiering.md, "Counters"): "tiered" says
 * that the execution's expressions were tiered, counted in
 * tiered_executions together with the execution; the other counts are
 * those of rounds emitted and queries ended since the last flush.  The
 * plan nodes go to the plan-node rows only with plan-node data.
 */
typedef struct JpStoreTiering
{
	bool		tiered;
	int64		switches;
	int64		functions;
	int64		expressions_compiled;
	int64		expressions_never_compiled;
	int64		nodes_dropped;	/* plan nodes the sampler had no room for */
	const JpStoreTierNode *nodes;
	int			nnodes;
} JpStoreTiering;

/*
 * Key of one row of the step profile: one step (a JitprofStepRange.step
 * value) of one JIT function's store entry.
 */
typedef struct JpStoreStepKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
	int32		plan_node_id;
	uint32		discriminator;	/* the function's, as in JpStoreKey */
	int32		step;
	int32		padding;		/* zero: the key is hashed as bytes */
} JpStoreStepKey;

/* a step's row in the shared step table */
typedef struct JpStoreStepEntry
{
	JpStoreStepKey key;			/* hash key: must be first */
	int64		self_samples;
	int64		total_samples;
	char		opcode[JP_OPCODE_LEN];	/* "" when the step is unknown */
	char		detail[JP_DETAIL_LEN];
} JpStoreStepEntry;

/* what one backend counted for one step of one function since its flush */
typedef struct JpStoreStepDelta
{
	const JitprofOrigin *origin;
	int32		step;
	int64		self_samples;
	int64		total_samples;
	const JitprofStepLabel *label;	/* NULL: no label known */
} JpStoreStepDelta;

/* one flush's step part */
typedef struct JpStoreSteps
{
	const JpStoreStepDelta *deltas;
	int			ndeltas;
} JpStoreSteps;

/* sampler health, summed over all backends since the last reset */
typedef struct JpSamplerHealth
{
	int64		samples_taken;	/* signals handled while a query ran */
	int64		samples_jit_self;	/* PC inside JIT code */
	int64		samples_jit_total;	/* JIT code on the stack */
	int64		samples_dropped;	/* no JIT execution was running */
	int64		samples_other_execution;	/* in JIT code of another
											 * execution */
	int64		samples_in_flush;	/* charged to the query, not to a function */
	int64		functions_untracked;	/* no free slot for a linked function */
	int64		executions_untracked;	/* too many open executions */
	int64		forward_fallbacks;	/* flush trampoline ran a node itself */
	int64		flushes;
	int64		plan_nodes_dropped; /* plan-node rows that found no room */
} JpSamplerHealth;

/*
 * The store's shared memory: what it requested in all, and the bytes one
 * entry of each table takes (dynahash's element header and the entry; the
 * table's bucket array adds 8 to 16 bytes per entry).
 */
typedef struct JpStoreSizes
{
	uint64		shmem_bytes;	/* 0 without the store */
	uint64		hotspot_entry_bytes;
	uint64		plan_node_entry_bytes;
	uint64		step_entry_bytes;
} JpStoreSizes;

/* store.c: settings, shared memory */
extern void jp_store_init(void);
extern void jp_store_limits(int *max_hotspots, int *max_plan_nodes,
							int *max_steps);
extern bool jp_store_available(void);
extern void jp_store_require(void);
extern void jp_store_sizes(JpStoreSizes *sizes);
extern uint32 jp_store_discriminator(const char *symbol);

/* store_rows.c: adding a flush, reading and resetting the rows */
extern void jp_store_flush(Oid userid, Oid dbid, int64 queryid,
						   bool count_execution, int64 query_samples,
						   bool node_data,
						   const JpStoreDelta *deltas, int ndeltas,
						   const JpSamplerHealth *health,
						   const JpStoreNodes *nodes,
						   const JpStoreSteps *steps,
						   const JpStoreTiering *tiering);
extern JpStoreEntry *jp_store_copy(int64 *nentries);
extern JpStoreNodeEntry *jp_store_copy_nodes(int64 *nnodes);
extern int64 jp_store_node_count(void);
extern JpStoreStepEntry *jp_store_copy_steps(int64 *nsteps);
extern void jp_store_step_counts(int64 *entries, int64 *dropped);
extern void jp_store_health(JpSamplerHealth *health, int64 *evictions,
							int64 *entries, TimestampTz *stats_reset);
extern void jp_store_reset(void);

/* the attnum (1-based) of a step row at or below JP_STEP_ATTRIBUTE(0) */
static inline int32
jp_step_attnum(int32 step)
{
	return JP_STEP_ATTRIBUTE(0) - step + 1;
}

/* "part" as a percentage of "whole", within 0..100; 0 when whole is 0 */
static inline double
jp_share_pct(int64 part, int64 whole)
{
	double		p;

	if (whole <= 0)
		return 0.0;
	p = 100.0 * (double) part / (double) whole;
	return Min(Max(p, 0.0), 100.0);
}

#endif							/* JITPROF_STORE_H */
