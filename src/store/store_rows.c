/*-------------------------------------------------------------------------
 *
 * store_rows.c
 *	  The rows of the hotspot store: adding one flush to them, copying them
 *	  out for the SQL functions, reading the counters, resetting.
 *
 * Backends add to the store once per JIT execution (and every
 * jitprof.flush_interval of a long one): jp_store_flush, from
 * sampler_profile.c, takes the lock exclusively once for the query's row,
 * its functions' rows, its plan-node rows and its step rows.  Readers copy a
 * whole table under the lock held shared and build their result after
 * releasing it (copy_table).  store_shared.h has the locking contract.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/store/store_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

#include "store/store.h"
#include "store/store_shared.h"

/*
 * Add one flush's step counts to the step rows.  A row is made only for a
 * function whose row exists (it was just added to), so that a step's
 * samples are always part of its function's.  Caller holds the lock
 * exclusively.
 */
static void
flush_steps(Oid userid, Oid dbid, int64 queryid, const JpStoreSteps *steps)
{
	for (int i = 0; i < steps->ndeltas; i++)
	{
		const JpStoreStepDelta *d = &steps->deltas[i];
		JpStoreStepKey key;
		JpStoreStepEntry *e;
		bool		found;

		memset(&key, 0, sizeof(key));
		key.userid = userid;
		key.dbid = dbid;
		key.queryid = queryid;
		key.plan_node_id = d->origin->plan_node_id;
		key.discriminator = jp_store_discriminator(d->origin->symbol);
		key.step = d->step;

		e = hash_search(jp_step_hash, &key, HASH_FIND, NULL);
		if (e == NULL)
		{
			if (jp_store_step_function(&key) == NULL ||
				hash_get_num_entries(jp_step_hash) >= jitprof_max_steps ||
				(e = hash_search(jp_step_hash, &key, HASH_ENTER_NULL,
								 &found)) == NULL)
			{
				jp_store_header->steps_dropped++;
				continue;
			}
			memset((char *) e + sizeof(JpStoreStepKey), 0,
				   sizeof(JpStoreStepEntry) - sizeof(JpStoreStepKey));
			if (d->label != NULL)
			{
				strlcpy(e->opcode, d->label->opcode, JP_OPCODE_LEN);
				strlcpy(e->detail, d->label->detail, JP_DETAIL_LEN);
			}
		}
		e->self_samples += d->self_samples;
		e->total_samples += d->total_samples;
	}
}

static JpStoreEntry *
find_or_add(const JpStoreKey *key, TimestampTz now, bool add)
{
	JpStoreEntry *entry;
	bool		found;

	entry = hash_search(jp_hotspot_hash, key, HASH_FIND, NULL);
	if (entry != NULL || !add)
		return entry;
	if (hash_get_num_entries(jp_hotspot_hash) >= jitprof_max_hotspots)
		jp_store_evict();
	entry = hash_search(jp_hotspot_hash, key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
		return NULL;
	if (!found)
	{
		memset((char *) entry + sizeof(JpStoreKey), 0,
			   sizeof(JpStoreEntry) - sizeof(JpStoreKey));
		entry->first_seen = now;
	}
	return entry;
}

/*
 * The plan-node row of "key", made if new: no counts, no shape (parent -1).
 * NULL when the table has no room.  Caller holds the lock exclusively.
 */
static JpStoreNodeEntry *
enter_node_row(const JpStoreNodeKey *key)
{
	JpStoreNodeEntry *n;
	bool		found;

	n = hash_search(jp_node_hash, key, HASH_ENTER_NULL, &found);
	if (n != NULL && !found)
	{
		memset((char *) n + sizeof(JpStoreNodeKey), 0,
			   sizeof(JpStoreNodeEntry) - sizeof(JpStoreNodeKey));
		n->parent = -1;
	}
	return n;
}

/* is there no row yet for plan node "plan_node_id" of key's query? */
static bool
node_row_missing(JpStoreNodeKey *key, int32 plan_node_id)
{
	key->plan_node_id = plan_node_id;
	return hash_search(jp_node_hash, key, HASH_FIND, NULL) == NULL;
}

/* is plan node "plan_node_id" in the flush's shape? */
static bool
in_shape(const JpStoreNodes *nodes, int32 plan_node_id)
{
	for (int i = 0; i < nodes->nshape; i++)
		if (nodes->shape[i].plan_node_id == plan_node_id)
			return true;
	return false;
}

/*
 * A flush's plan-node rows go in all together or not at all: is there room
 * for the "missing" rows it needs?  If not, they count as dropped.
 */
static bool
room_for_node_rows(int missing)
{
	if (missing > 0 &&
		hash_get_num_entries(jp_node_hash) + missing > jitprof_max_plan_nodes)
	{
		jp_store_header->health.plan_nodes_dropped += missing;
		return false;
	}
	return true;
}

/*
 * Add one flush's plan-node counts to the query's plan-node rows, and its
 * plan's shape where the rows have none.  A query gets rows for all the
 * nodes of a flush or none (plan_nodes_dropped counts the rows that found
 * no room), so that its node rows never claim more than they saw.  Caller
 * holds the lock exclusively, and the query's summary row exists.  Returns
 * whether the flush's counts were added (false: no room).
 */
static bool
flush_nodes(Oid userid, Oid dbid, int64 queryid, const JpStoreNodes *nodes)
{
	JpStoreNodeKey key;
	int			missing = 0;

	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;

	/*
	 * Room for every row this flush needs?  A node in both lists counts once;
	 * the shape is searched only for a missing row, which a query has only
	 * until its rows exist.
	 */
	for (int i = 0; i < nodes->nshape; i++)
		missing += node_row_missing(&key, nodes->shape[i].plan_node_id);
	for (int i = 0; i < nodes->ndeltas; i++)
		if (node_row_missing(&key, nodes->deltas[i].plan_node_id) &&
			!in_shape(nodes, nodes->deltas[i].plan_node_id))
			missing++;
	if (!room_for_node_rows(missing))
		return false;

	for (int i = 0; i < nodes->nshape; i++)
	{
		const JpNodeShape *sh = &nodes->shape[i];
		JpStoreNodeEntry *n;

		key.plan_node_id = sh->plan_node_id;
		n = enter_node_row(&key);
		if (n == NULL)
			continue;
		if (!n->has_shape)
		{
			n->has_shape = true;
			n->parent = sh->parent;
			strlcpy(n->node_type, sh->node_type, JP_NODE_TYPE_LEN);
			strlcpy(n->label, sh->label, JP_LABEL_LEN);
		}
	}
	for (int i = 0; i < nodes->ndeltas; i++)
	{
		const JpStoreNodeDelta *d = &nodes->deltas[i];
		JpStoreNodeEntry *n;

		key.plan_node_id = d->plan_node_id;
		n = enter_node_row(&key);
		if (n == NULL)
		{
			jp_store_header->health.plan_nodes_dropped++;
			continue;
		}
		n->self_samples += d->self_samples;
		n->jit_self_samples += d->jit_self_samples;
		n->jit_compile_samples += d->jit_compile_samples;
	}
	return true;
}

/*
 * Add one flush's tiered-JIT counts of plan nodes to the query's plan-node
 * rows, as flush_nodes adds samples: rows for all of its nodes or none
 * (plan_nodes_dropped counts those that found no room).  Caller holds the
 * lock exclusively, and the query's summary row exists.
 */
static void
flush_tier_nodes(Oid userid, Oid dbid, int64 queryid,
				 const JpStoreTiering *tiering)
{
	JpStoreNodeKey key;
	int			missing = 0;

	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;

	for (int i = 0; i < tiering->nnodes; i++)
		missing += node_row_missing(&key, tiering->nodes[i].plan_node_id);
	if (!room_for_node_rows(missing))
		return;

	for (int i = 0; i < tiering->nnodes; i++)
	{
		const JpStoreTierNode *d = &tiering->nodes[i];
		JpStoreNodeEntry *n;

		key.plan_node_id = d->plan_node_id;
		n = enter_node_row(&key);
		if (n == NULL)
		{
			jp_store_header->health.plan_nodes_dropped++;
			continue;
		}
		n->tier_rounds += d->rounds;
		n->tier_round_evaluations += d->round_evaluations;
		n->tier_compile_ns += d->compile_ns;
	}
}

/* does a flush's tiered-JIT part say anything? */
static bool
tiering_counts(const JpStoreTiering *t)
{
	return t != NULL &&
		(t->tiered || t->switches > 0 || t->functions > 0 ||
		 t->expressions_compiled > 0 || t->expressions_never_compiled > 0 ||
		 t->nnodes > 0);
}

/*
 * Add what one backend counted for one execution of query "queryid" since
 * its last flush (or a parallel worker's share of it) to the store.
 * "deltas" are the JIT functions that were compiled or sampled meanwhile:
 * the execution's own and those of statements nested in it, all stored
 * under "queryid" so that a query's functions add up within its samples.
 * "count_execution" counts one execution, creating the query's row if need
 * be, so that executions agree with pg_stat_statements' calls.  "node_data"
 * says that the execution's plan was watched for the plan-node profile: its
 * samples, and the execution, are counted apart as well (node_samples,
 * node_executions), so that the nodes' shares are taken of the executions
 * that had plan-node data only; a flush whose node counts found no room is
 * not counted there.  "tiering" (NULL: none) is what tiered JIT did in
 * the execution: its tiered flag counts in tiered_executions only with the
 * execution itself, so that tiered_executions never passes executions.
 */
void
jp_store_flush(Oid userid, Oid dbid, int64 queryid, bool count_execution,
			   int64 query_samples, bool node_data,
			   const JpStoreDelta *deltas, int ndeltas,
			   const JpSamplerHealth *health, const JpStoreNodes *nodes,
			   const JpStoreSteps *steps, const JpStoreTiering *tiering)
{
	TimestampTz now = GetCurrentTimestamp();
	JpStoreKey	key;
	JpStoreEntry *entry;

	if (!jp_store_available())
		return;

	LWLockAcquire(jp_store_header->lock, LW_EXCLUSIVE);

	jp_store_header->health.samples_taken += health->samples_taken;
	jp_store_header->health.samples_jit_self += health->samples_jit_self;
	jp_store_header->health.samples_jit_total += health->samples_jit_total;
	jp_store_header->health.samples_dropped += health->samples_dropped;
	jp_store_header->health.samples_other_execution += health->samples_other_execution;
	jp_store_header->health.samples_in_flush += health->samples_in_flush;
	jp_store_header->health.functions_untracked += health->functions_untracked;
	jp_store_header->health.executions_untracked += health->executions_untracked;
	jp_store_header->health.forward_fallbacks += health->forward_fallbacks;
	jp_store_header->health.flushes++;

	/*
	 * The query's summary row (queryid 0 means no query ID was computed).
	 * Only a flush with something to say creates it.
	 */
	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;
	key.plan_node_id = -1;
	key.discriminator = 0;
	entry = find_or_add(&key, now, count_execution || ndeltas > 0 ||
						query_samples > 0 || tiering_counts(tiering));
	if (entry != NULL)
	{
		if (count_execution)
			entry->executions++;
		if (tiering != NULL)
		{
			if (count_execution && tiering->tiered)
				entry->tiered_executions++;
			entry->tiering_switches += tiering->switches;
			entry->tiering_functions += tiering->functions;
			entry->tiering_expressions_compiled += tiering->expressions_compiled;
			entry->tiering_expressions_never_compiled +=
				tiering->expressions_never_compiled;
			jp_store_header->health.plan_nodes_dropped += tiering->nodes_dropped;
		}
		entry->query_samples += query_samples;
		entry->last_seen = now;
		/* node samples are a part of the query's, so only with its row */
		if ((nodes == NULL || flush_nodes(userid, dbid, queryid, nodes)) &&
			node_data)
		{
			if (count_execution)
				entry->node_executions++;
			entry->node_samples += query_samples;
		}
		/* after the samples' rows, which have the first claim on room */
		if (tiering != NULL && node_data && tiering->nnodes > 0)
			flush_tier_nodes(userid, dbid, queryid, tiering);
	}

	for (int i = 0; i < ndeltas; i++)
	{
		const JpStoreDelta *d = &deltas[i];

		memset(&key, 0, sizeof(key));
		key.userid = userid;
		key.dbid = dbid;
		key.queryid = queryid;
		key.plan_node_id = d->origin->plan_node_id;
		key.discriminator = jp_store_discriminator(d->origin->symbol);
		entry = find_or_add(&key, now, true);
		if (entry == NULL)
			continue;
		if (entry->symbol[0] == '\0')
		{
			strlcpy(entry->node_type, d->origin->node_type, JP_NODE_TYPE_LEN);
			strlcpy(entry->role, d->origin->role, JP_ROLE_LEN);
			strlcpy(entry->symbol, d->origin->symbol, JP_SYMBOL_LEN);
			entry->ordinal = d->origin->ordinal;
		}
		entry->self_samples += d->self_samples;
		entry->total_samples += d->total_samples;
		entry->query_samples += d->query_samples;
		entry->compilations += d->compilations;
		if (d->compilations > 0)
			entry->code_bytes = d->code_bytes;
		entry->last_seen = now;
	}

	/* after the functions' rows, which the step rows need */
	if (steps != NULL && steps->ndeltas > 0)
		flush_steps(userid, dbid, queryid, steps);

	LWLockRelease(jp_store_header->lock);
}

/*
 * Copy every entry of one of the store's hash tables into backend-local
 * memory (CurrentMemoryContext), so that the SQL functions build their
 * result sets after releasing the lock.  The lock is held, shared, only for
 * a memcpy per entry: a reader of a full store delays a flushing backend by
 * that copy (about 0.17 ms per 1,000 entries), never by the time a
 * tuplestore takes to fill.  The array is allocated and zeroed, and the
 * table's pages are mapped (jp_store_touch_table), before the lock is
 * taken, so no malloc and no page fault happens under it; if the table
 * grew in between, the array is allocated again.  Returns the array and sets
 * *nentries to its length.
 *
 * The copy loop does not check for interrupts: holding an LWLock holds them
 * off, and the copy is short.  The callers check them in their loops over
 * the copy, where a big store's time goes.
 */
static void *
copy_table(HTAB *hash, Size entrysize, long max_entries, int64 *nentries)
{
	char	   *copy = NULL;
	long		capacity = 0;

	/* page faults are taken here, not under the lock */
	jp_store_touch_table(hash);
	for (;;)
	{
		HASH_SEQ_STATUS status;
		void	   *entry;
		long		n = 0;
		long		want;

		LWLockAcquire(jp_store_header->lock, LW_SHARED);
		want = hash_get_num_entries(hash);
		if (copy != NULL && want <= capacity)
		{
			hash_seq_init(&status, hash);
			while ((entry = hash_seq_search(&status)) != NULL)
				memcpy(copy + (n++) * entrysize, entry, entrysize);
			LWLockRelease(jp_store_header->lock);
			*nentries = n;
			return copy;
		}
		LWLockRelease(jp_store_header->lock);
		CHECK_FOR_INTERRUPTS();

		/* room for some growth, but never more than the table can hold */
		if (copy != NULL)
			pfree(copy);
		capacity = Max(want, Min(want + want / 8 + 16, max_entries));
		copy = palloc_extended(Max(capacity, 1) * entrysize,
							   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	}
}

/* a copy of every hotspot entry; see copy_table() */
JpStoreEntry *
jp_store_copy(int64 *nentries)
{
	return copy_table(jp_hotspot_hash, sizeof(JpStoreEntry),
					  (long) jitprof_max_hotspots, nentries);
}

/* a copy of every step row; see copy_table() */
JpStoreStepEntry *
jp_store_copy_steps(int64 *nsteps)
{
	return copy_table(jp_step_hash, sizeof(JpStoreStepEntry),
					  (long) jitprof_max_steps, nsteps);
}

/* how many step rows there are, and how many found no room */
void
jp_store_step_counts(int64 *entries, int64 *dropped)
{
	LWLockAcquire(jp_store_header->lock, LW_SHARED);
	*entries = hash_get_num_entries(jp_step_hash);
	*dropped = jp_store_header->steps_dropped;
	LWLockRelease(jp_store_header->lock);
}

/* a copy of every plan-node row; see copy_table() */
JpStoreNodeEntry *
jp_store_copy_nodes(int64 *nnodes)
{
	return copy_table(jp_node_hash, sizeof(JpStoreNodeEntry),
					  (long) jitprof_max_plan_nodes, nnodes);
}

void
jp_store_health(JpSamplerHealth *health, int64 *evictions, int64 *entries,
				TimestampTz *stats_reset)
{
	LWLockAcquire(jp_store_header->lock, LW_SHARED);
	*health = jp_store_header->health;
	*evictions = jp_store_header->evictions;
	*entries = hash_get_num_entries(jp_hotspot_hash);
	*stats_reset = jp_store_header->stats_reset;
	LWLockRelease(jp_store_header->lock);
}

/* how many plan-node rows there are, under the lock */
int64
jp_store_node_count(void)
{
	int64		n;

	LWLockAcquire(jp_store_header->lock, LW_SHARED);
	n = hash_get_num_entries(jp_node_hash);
	LWLockRelease(jp_store_header->lock);
	return n;
}

void
jp_store_reset(void)
{
	HASH_SEQ_STATUS status;
	JpStoreEntry *entry;

	LWLockAcquire(jp_store_header->lock, LW_EXCLUSIVE);
	hash_seq_init(&status, jp_hotspot_hash);
	while ((entry = hash_seq_search(&status)) != NULL)
		hash_search(jp_hotspot_hash, &entry->key, HASH_REMOVE, NULL);
	jp_store_remove_orphans();
	memset(&jp_store_header->health, 0, sizeof(jp_store_header->health));
	jp_store_header->evictions = 0;
	jp_store_header->steps_dropped = 0;
	jp_store_header->stats_reset = GetCurrentTimestamp();
	LWLockRelease(jp_store_header->lock);
}
