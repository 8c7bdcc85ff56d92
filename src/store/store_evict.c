/*-------------------------------------------------------------------------
 *
 * store_evict.c
 *	  Making room in the hotspot store: eviction, and the plan-node and
 *	  step rows that go with the rows evicted.
 *
 * Capacity is jitprof.max_hotspots entries.  When a new entry does not fit,
 * the 5% of entries with the fewest samples (inclusive samples for a
 * function, the query's samples for a query's summary row) are evicted, the
 * least recently seen first among equals, and the evictions counter says how
 * many went.  A plan-node row goes with its query's summary row, a step row
 * with its function's row.  Loading a saved file that holds more than the
 * cap keeps what eviction would keep (jp_store_keep_cmp, store_file.c).
 *
 * The callers hold the store's lock exclusively (store_shared.h).
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/store/store_evict.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "store/store.h"
#include "store/store_shared.h"

/* the share of entries evicted when the table is full */
#define EVICT_FRACTION	0.05

/* how much an entry is worth keeping: its samples */
static inline int64
entry_usage(const JpStoreEntry *entry)
{
	return entry->key.discriminator == 0 ? entry->query_samples :
		entry->total_samples;
}

/* qsort comparator: fewest samples first, then least recently seen */
static int
evict_cmp(const void *a, const void *b)
{
	const JpStoreEntry *ea = *(JpStoreEntry *const *) a;
	const JpStoreEntry *eb = *(JpStoreEntry *const *) b;
	int64		ua = entry_usage(ea);
	int64		ub = entry_usage(eb);

	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (ea->last_seen != eb->last_seen)
		return ea->last_seen < eb->last_seen ? -1 : 1;
	return 0;
}

/*
 * qsort comparator: the entries eviction would take last come first, and
 * among equals a query's summary row before its functions' rows.
 */
int
jp_store_keep_cmp(const void *a, const void *b)
{
	const JpStoreEntry *ea = *(JpStoreEntry *const *) a;
	const JpStoreEntry *eb = *(JpStoreEntry *const *) b;
	int			cmp = evict_cmp(b, a);

	if (cmp != 0)
		return cmp;
	if ((ea->key.discriminator == 0) != (eb->key.discriminator == 0))
		return ea->key.discriminator == 0 ? -1 : 1;
	return 0;
}

/*
 * Plan-node rows go with their query's summary row.  Caller holds the lock
 * exclusively.
 */
static void
remove_orphan_nodes(void)
{
	HASH_SEQ_STATUS status;
	JpStoreNodeEntry *n;

	hash_seq_init(&status, jp_node_hash);
	while ((n = hash_seq_search(&status)) != NULL)
		if (jp_store_node_query(&n->key) == NULL)
			hash_search(jp_node_hash, &n->key, HASH_REMOVE, NULL);
}

/*
 * Step rows go with their function's row.  Caller holds the lock
 * exclusively.
 */
static void
remove_orphan_steps(void)
{
	HASH_SEQ_STATUS status;
	JpStoreStepEntry *e;

	if (hash_get_num_entries(jp_step_hash) == 0)
		return;
	hash_seq_init(&status, jp_step_hash);
	while ((e = hash_seq_search(&status)) != NULL)
		if (jp_store_step_function(&e->key) == NULL)
			hash_search(jp_step_hash, &e->key, HASH_REMOVE, NULL);
}

/* Make room for new entries.  Caller holds the lock exclusively. */
void
jp_store_evict(void)
{
	HASH_SEQ_STATUS status;
	JpStoreEntry **all;
	JpStoreEntry *entry;
	long		n = 0;
	long		nvictims;

	all = palloc_extended(hash_get_num_entries(jp_hotspot_hash) * sizeof(JpStoreEntry *),
						  MCXT_ALLOC_NO_OOM);
	if (all == NULL)
		return;
	hash_seq_init(&status, jp_hotspot_hash);
	while ((entry = hash_seq_search(&status)) != NULL)
		all[n++] = entry;
	qsort(all, n, sizeof(JpStoreEntry *), evict_cmp);
	nvictims = Max(1, (long) (n * EVICT_FRACTION));
	nvictims = Min(nvictims, n);
	for (long i = 0; i < nvictims; i++)
		hash_search(jp_hotspot_hash, &all[i]->key, HASH_REMOVE, NULL);
	jp_store_header->evictions += nvictims;
	pfree(all);
	jp_store_remove_orphans();
}

/*
 * Remove the plan-node and step rows whose owner is gone.  Caller holds the
 * lock exclusively.
 */
void
jp_store_remove_orphans(void)
{
	remove_orphan_nodes();
	remove_orphan_steps();
}
