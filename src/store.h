/*-------------------------------------------------------------------------
 *
 * store.h
 *	  The hotspot store's interface, shared by the sampler (sampler_*.c), the
 *	  shared-memory store (store.c) and the SQL functions (hotspots.c).
 *
 * The sampler aggregates samples per JIT function in backend-local memory
 * and hands them to the store in batches, each for one execution of one
 * query (jp_store_flush).  The SQL functions read a copy of the store taken
 * under its lock (jp_store_copy).
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_STORE_H
#define JITPROF_STORE_H

#include "datatype/timestamp.h"
#include "utils/hsearch.h"

#include "jitprof.h"

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
	int64		self_samples;
	int64		total_samples;
	int64		query_samples;
	int64		compilations;
	int64		code_bytes;		/* size of the latest compilation */
	TimestampTz first_seen;
	TimestampTz last_seen;
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
} JpSamplerHealth;

/* store.c */
extern int	jitprof_max_hotspots;
extern bool jitprof_save;
extern bool jp_store_available(void);
extern void jp_store_require(void);
extern void jp_store_flush(Oid userid, Oid dbid, int64 queryid,
						   bool count_execution, int64 query_samples,
						   const JpStoreDelta *deltas, int ndeltas,
						   const JpSamplerHealth *health);
extern void jp_store_lock_shared(void);
extern void jp_store_unlock(void);
extern void jp_store_begin_scan(HASH_SEQ_STATUS *status);
extern JpStoreEntry *jp_store_copy(int64 *nentries);
extern void jp_store_health(JpSamplerHealth *health, int64 *evictions,
							int64 *entries, TimestampTz *stats_reset);
extern void jp_store_reset(void);
extern uint32 jp_store_discriminator(const char *symbol);

/* sampler_hooks.c */
extern int	jitprof_sample_rate;

#endif							/* JITPROF_STORE_H */
