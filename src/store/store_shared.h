/*-------------------------------------------------------------------------
 *
 * store_shared.h
 *	  Inside the store folder: the store's shared memory as its files see
 *	  it.  Other folders include store/store.h only.
 *
 * store.c finds the shared memory at start-up (store_shmem_startup) and
 * sets the four addresses below, once, in every process; after that they
 * only are read.  jp_store_header is NULL until then, and stays NULL where
 * jitprof was not preloaded (jp_store_available says which).
 *
 * Locking: one LWLock (jp_store_header->lock) protects the three tables,
 * the health counters and stats_reset.  Flushing and resetting take it
 * exclusively, readers take it shared, only long enough to copy the
 * entries out (jp_store_copy).  Flushes happen once per JIT execution (and
 * every jitprof.flush_interval of a long one), so a single lock is cheap
 * enough; the sampler's signal handler never comes here.  The postmaster
 * loads and saves the statistics file with no lock, when no backend runs.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/store/store_shared.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_STORE_SHARED_H
#define JITPROF_STORE_SHARED_H

#include "storage/lwlock.h"

#include "store/store.h"

typedef struct StoreShared
{
	LWLock	   *lock;
	JpSamplerHealth health;
	int64		evictions;
	TimestampTz stats_reset;
	int64		steps_dropped;	/* step rows that found no room */
} StoreShared;

/* store.c: its settings (jp_store_limits shows them to other folders) */
extern int	jitprof_max_hotspots;
extern int	jitprof_max_plan_nodes;
extern int	jitprof_max_steps;

/* store.c: the shared memory, set at start-up */
extern StoreShared *jp_store_header;
extern HTAB *jp_hotspot_hash;	/* JpStoreEntry rows */
extern HTAB *jp_node_hash;		/* plan-node rows, under the same lock */
extern HTAB *jp_step_hash;		/* step rows, under the same lock */
extern void jp_store_touch_table(const HTAB *hash);

/* store_evict.c */
extern int	jp_store_keep_cmp(const void *a, const void *b);
extern void jp_store_evict(void);
extern void jp_store_remove_orphans(void);

/* store_file.c */
extern void jp_store_load(void);
extern void jp_store_save(int code, Datum arg);

/* a hotspot row, by the fields of its key; NULL if there is none */
static inline JpStoreEntry *
jp_store_find_hotspot(Oid userid, Oid dbid, int64 queryid,
					  int32 plan_node_id, uint32 discriminator)
{
	JpStoreKey	key;

	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;
	key.plan_node_id = plan_node_id;
	key.discriminator = discriminator;
	return hash_search(jp_hotspot_hash, &key, HASH_FIND, NULL);
}

/* the summary row of a plan-node row's query */
static inline JpStoreEntry *
jp_store_node_query(const JpStoreNodeKey *nkey)
{
	return jp_store_find_hotspot(nkey->userid, nkey->dbid, nkey->queryid,
								 -1, 0);
}

/* the function row a step row belongs to */
static inline JpStoreEntry *
jp_store_step_function(const JpStoreStepKey *skey)
{
	return jp_store_find_hotspot(skey->userid, skey->dbid, skey->queryid,
								 skey->plan_node_id, skey->discriminator);
}

#endif							/* JITPROF_STORE_SHARED_H */
