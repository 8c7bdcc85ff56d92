/*-------------------------------------------------------------------------
 *
 * sampler_profile.c
 *	  The hotspot sampler's bookkeeping: executions, per-function slots, the
 *	  flush of an execution's counts to the shared store, the mid-query
 *	  flush trampoline, and which execution runs at each executor hook.
 *
 * An execution (JpExec) is what samples are charged to; each JIT function
 * linked while it runs gets a slot it owns, recycled into a backend-local
 * pending table when the code is freed before the execution ends.  A flush
 * hands one execution's counts to the store under its query ID.
 *
 * Contract: an execution's counts are its own (a failed, cancelled or
 * interleaved execution never lends samples to another), and the handler
 * charges a slot only while its owner runs, so a function's samples are a
 * subset of its execution's.  Counters are read under the jp_sig.flushing
 * protocol of sampler_shared.h; nothing here blocks signals.  The hooks
 * layer's calls set jp_sig.current when a hook starts and put it back when
 * it ends, also on error.  The trampoline leaves jp_sig.current and the
 * watched nodes as it found them, and never raises an ERROR or changes a
 * result, whatever wrapper sits above or below it.  When flushes happen,
 * nesting, and how the trampoline composes: doc/sampler.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler_profile.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/portal.h"

#include "sampler/sampler_shared.h"

int			jitprof_sample_rate = 99;
double		jitprof_flush_interval = 10;	/* seconds */


static int	nfailed = 0;		/* executions in state FAILED */
static uint32 next_exec_id = 1;
static int	slots_hwm = 0;		/* jp_sig.slots[slots_hwm ..] are all free */
static int	ndead_slots = 0;
static uint32 functions_untracked = 0;
static uint32 executions_untracked = 0;

/* counts of freed functions, waiting for their execution's flush */
typedef struct PendingKey
{
	uint32		owner;
	int32		plan_node_id;
	uint32		discriminator;
	int64		queryid;
} PendingKey;

typedef struct PendingFunction
{
	PendingKey	key;			/* hash key: must be first */
	JitprofOrigin origin;
	int64		self_samples;
	int64		total_samples;
	int64		compilations;
	int64		code_bytes;
	JpStepProfile *steps;		/* its freed copies' step counts, a list */
} PendingFunction;

static HTAB *pending = NULL;

/* the lowest free slot, so that the slots in use stay compact */
static int
take_slot(void)
{
	for (int i = 0; i < slots_hwm; i++)
		if (!jp_sig.slots[i].in_use)
			return i;
	if (slots_hwm < JP_MAX_SLOTS)
		return slots_hwm++;
	return -1;
}

/* sink callback: runs inside LLVM's call stack, must never throw */
static void
sampler_object_linked(const JitprofObject *object)
{
	const JpRangeTable *old = jp_sig_current_table();
	JpExec	   *exec = jp_sig.current;
	JpRangeTable *table;

	/* code of no execution (nothing to charge it to) is not tracked */
	if (exec == NULL)
		return;

	table = jp_sig_new_table(jp_sig_table_size(old) + object->nfunctions);
	if (table == NULL)
	{
		functions_untracked += object->nfunctions;
		return;
	}
	jp_sig_table_copy_except(table, old, 0);

	for (int i = 0; i < object->nfunctions; i++)
	{
		const JitprofFunction *fn = &object->functions[i];
		int			slot;
		JpSlot	   *sf;

		if (fn->size == 0)
			continue;
		slot = take_slot();
		if (slot < 0)
		{
			functions_untracked++;
			continue;
		}
		sf = &jp_sig.slots[slot];
		sf->self_samples = 0;
		sf->total_samples = 0;
		sf->owner = exec->id;
		sf->in_use = true;
		sf->live = true;
		sf->compiled = true;
		sf->object_key = object->key;
		sf->size = fn->size;
		sf->origin = fn->origin;
		/* set before the range table makes the slot reachable */
		sf->steps = fn->steps != NULL ? jp_step_profile_make(fn) : NULL;

		jp_sig_table_add(table, (uintptr_t) fn->address,
						 (uintptr_t) (fn->address + fn->size), slot);
	}
	jp_sig_table_sort(table);
	jp_sig_publish_table(table);
}

/* sink callback: runs inside LLVM's call stack, must never throw */
static void
sampler_object_freed(const JitprofObject *object)
{
	const JpRangeTable *old = jp_sig_current_table();
	JpRangeTable *table;
	bool		any = false;

	if (old == NULL)
		return;

	for (int i = 0; i < slots_hwm; i++)
		if (jp_sig.slots[i].in_use && jp_sig.slots[i].live &&
			jp_sig.slots[i].object_key == object->key)
			any = true;
	if (!any)
		return;

	table = jp_sig_new_table(jp_sig_table_size(old));
	if (table == NULL)
	{
		/*
		 * The dead ranges stay in the table, and their slots stay in use.
		 * JITLink's arena never reuses addresses, so nothing is
		 * misattributed; only the slots are lost.
		 */
		return;
	}
	jp_sig_table_copy_except(table, old, object->key);
	jp_sig_publish_table(table);

	/* no handler can reach these slots any more */
	for (int i = 0; i < slots_hwm; i++)
	{
		if (jp_sig.slots[i].in_use && jp_sig.slots[i].live &&
			jp_sig.slots[i].object_key == object->key)
		{
			jp_sig.slots[i].live = false;
			ndead_slots++;
		}
	}
}

static bool
sampler_sink_enabled(void)
{
	return jp_store_available();
}

static const JitprofSink sampler_sink = {
	sampler_sink_enabled,
	sampler_object_linked,
	sampler_object_freed
};

void
jp_profile_register_sink(void)
{
	jp_registry_register_sink(&sampler_sink);
}

/*
 * Move the counts of functions whose code is gone into the pending table
 * and free their slots.  Freed code is no longer in the range table, so the
 * signal handler cannot touch these slots any more.
 */
void
jp_recycle_dead_slots(void)
{
	if (ndead_slots == 0)
		return;

	if (pending == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(PendingKey);
		ctl.entrysize = sizeof(PendingFunction);
		ctl.hcxt = TopMemoryContext;
		pending = hash_create("jitprof pending functions", 64, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	for (int i = 0; i < slots_hwm; i++)
	{
		JpSlot	   *sf = &jp_sig.slots[i];
		PendingKey	key;
		PendingFunction *pf;
		bool		found;

		if (!sf->in_use || sf->live)
			continue;
		sf->in_use = false;
		/* counts of a finished execution were flushed already */
		if (sf->owner == 0)
		{
			jp_step_profile_free(sf->steps);
			sf->steps = NULL;
			continue;
		}
		memset(&key, 0, sizeof(key));
		key.owner = sf->owner;
		key.queryid = sf->origin.queryid;
		key.plan_node_id = sf->origin.plan_node_id;
		key.discriminator = jp_store_discriminator(sf->origin.symbol);
		pf = hash_search(pending, &key, HASH_ENTER, &found);
		if (!found)
		{
			memset((char *) pf + sizeof(PendingKey), 0,
				   sizeof(PendingFunction) - sizeof(PendingKey));
			pf->origin = sf->origin;
		}
		pf->self_samples += sf->self_samples;
		pf->total_samples += sf->total_samples;
		if (sf->steps != NULL)
		{
			sf->steps->next = pf->steps;
			pf->steps = sf->steps;
			sf->steps = NULL;
		}
		if (sf->compiled)
		{
			pf->compilations++;
			pf->code_bytes = sf->size;
		}
		sf->owner = 0;
	}
	ndead_slots = 0;
	while (slots_hwm > 0 && !jp_sig.slots[slots_hwm - 1].in_use)
		slots_hwm--;
}

static void flush_failed(void);

/*
 * jitprof.flush_interval in samples at the current rate: the nearest whole
 * number, at least one, so that an interval shorter than a sample still
 * flushes at every sample instead of never; 0 means no mid-query flush.
 */
static uint32
flush_after_samples(void)
{
	double		samples;

	if (jitprof_flush_interval <= 0 || jitprof_sample_rate <= 0)
		return 0;
	samples = rint(jitprof_flush_interval * jitprof_sample_rate);
	return (uint32) Max(1.0, Min(samples, (double) PG_UINT32_MAX));
}

/*
 * Start a new execution following "owner" (NULL: the running utility
 * statement).  Returns NULL when JP_MAX_EXECS executions are open.
 */
JpExec	   *
jp_exec_open(const QueryDesc *owner, int64 queryid, bool count_at_end)
{
	JpExec	   *exec = NULL;

	if (nfailed > 0)
		flush_failed();

	for (int i = 0; i < JP_MAX_EXECS; i++)
	{
		if (jp_sig.execs[i].state == JP_EXEC_FREE)
		{
			exec = &jp_sig.execs[i];
			break;
		}
	}
	if (exec == NULL)
	{
		executions_untracked++;
		return NULL;
	}

	/* nothing compiles for an execution that is not running yet */
	if (jp_sig.current == NULL)
		jp_nodes_reset_after_error();

	/* no system call unless the rate changed */
	jp_sig_set_rate(jitprof_sample_rate);
	jp_sig.flush_after = flush_after_samples();

	exec->query_samples = 0;
	exec->deferred_samples = 0;
	exec->since_flush = 0;
	memset((void *) exec->node_self, 0, sizeof(exec->node_self));
	memset((void *) exec->node_jit, 0, sizeof(exec->node_jit));
	memset((void *) exec->node_compile, 0, sizeof(exec->node_compile));
	exec->node_sampled = false;
	exec->shape = NULL;
	exec->nshape = 0;
	exec->shape_sent = false;
	exec->nodes_tracked = false;
	exec->id = next_exec_id++;
	if (next_exec_id == 0)
		next_exec_id = 1;
	exec->state = JP_EXEC_OPEN;
	exec->owner = owner;
	exec->queryid = queryid;
	exec->userid = GetUserId();
	exec->dbid = MyDatabaseId;
	exec->count_at_end = count_at_end;
	jp_sig.nopen++;
	return exec;
}

static void
exec_close(JpExec *exec)
{
	Assert(jp_sig.current != exec);
	if (exec->state == JP_EXEC_OPEN)
		jp_sig.nopen--;
	else if (exec->state == JP_EXEC_FAILED)
		nfailed--;
	jp_nodes_forget_exec(exec);
	exec->state = JP_EXEC_FREE;
	exec->owner = NULL;
	exec->id = 0;
	if (jp_sig.nopen == 0)
		jp_watch_forget_all();
}

/*
 * An execution ended by an error.  Called in error recovery, so it only
 * marks it; its counts go to the store at the next flush_failed().
 */
void
jp_exec_fail(JpExec *exec)
{
	if (exec == NULL || exec->state != JP_EXEC_OPEN)
		return;
	if (jp_sig.current == exec)
		jp_sig.current = NULL;
	/* a compilation the error interrupted is over */
	jp_nodes_reset_after_error();
	exec->state = JP_EXEC_FAILED;
	exec->owner = NULL;
	jp_sig.nopen--;
	nfailed++;
}

/* The last flush of an execution, and its end. */
void
jp_exec_finish(JpExec *exec, bool count_execution)
{
	jp_exec_flush(exec, count_execution && !IsParallelWorker(), true);
	exec_close(exec);
}

static void
flush_failed(void)
{
	for (int i = 0; i < JP_MAX_EXECS; i++)
	{
		JpExec	   *exec = &jp_sig.execs[i];

		if (exec->state != JP_EXEC_FAILED)
			continue;
		jp_exec_flush(exec, false, true);
		exec_close(exec);
	}
}

/*
 * The part of a flush that reads what the signal handler writes: take and
 * zero "exec"'s counters, the plan-node counts and the counts of the slots
 * it owns, and the handler's own counters, into the caller's buffers.
 * Returns how many of "deltas" it filled.
 *
 * Contract.  While it runs, jp_sig.flushing is set, so the handler adds a
 * sample only to side_samples and exec->deferred_samples, which this does
 * not touch; it clears jp_sig.flushing before it returns.  So that it always
 * does, it must not throw: it allocates nothing, takes no lock, calls no
 * function but jp_step_profile_take (which only reads and zeroes counters),
 * and writes only the caller's buffers, exec's counters, the counters and
 * "owner" of exec's slots, and jp_sig.counts.  The caller guarantees room:
 * "deltas" for JP_MAX_SLOTS, node_deltas for JP_MAX_PLAN_NODES, and
 * step_deltas for the distinct steps of every step profile of exec's slots;
 * *nnode_deltas and *nstep_deltas start at 0 and *health at zeroes.  No
 * signal is blocked: jp_sig.flushing is the protocol (sampler_shared.h).
 */
static int
take_handler_counts(JpExec *exec, bool final, JpStoreDelta *deltas,
					JpStoreNodeDelta *node_deltas, int *nnode_deltas,
					JpStoreStepDelta *step_deltas, int *nstep_deltas,
					JpSamplerHealth *health, int64 *qsamples)
{
	int			ndeltas = 0;

	/* the handler leaves these alone while jp_sig.flushing is set */
	jp_sig.flushing = true;
	pg_compiler_barrier();

	*qsamples = exec->query_samples;
	exec->query_samples = 0;
	exec->since_flush = 0;
	health->samples_taken = jp_sig.counts.taken;
	health->samples_jit_self = jp_sig.counts.jit_self;
	health->samples_jit_total = jp_sig.counts.jit_total;
	health->samples_dropped = jp_sig.counts.dropped;
	health->samples_other_execution = jp_sig.counts.other_execution;
	jp_sig.counts.taken = jp_sig.counts.jit_self = jp_sig.counts.jit_total = 0;
	jp_sig.counts.dropped = jp_sig.counts.other_execution = 0;

	if (exec->node_sampled)
	{
		for (int i = 0; i < JP_MAX_PLAN_NODES; i++)
		{
			JpStoreNodeDelta *nd;

			if (exec->node_self[i] == 0)
				continue;
			nd = &node_deltas[(*nnode_deltas)++];
			nd->plan_node_id = i;
			nd->self_samples = exec->node_self[i];
			nd->jit_self_samples = exec->node_jit[i];
			nd->jit_compile_samples = exec->node_compile[i];
			exec->node_self[i] = exec->node_jit[i] = exec->node_compile[i] = 0;
		}
		exec->node_sampled = false;
	}

	for (int i = 0; i < slots_hwm; i++)
	{
		JpSlot	   *sf = &jp_sig.slots[i];
		JpStoreDelta *d;

		if (!sf->in_use || sf->owner != exec->id)
			continue;
		if (sf->compiled || sf->self_samples > 0 || sf->total_samples > 0)
		{
			d = &deltas[ndeltas++];
			d->origin = &sf->origin;
			d->self_samples = sf->self_samples;
			d->total_samples = sf->total_samples;
			d->compilations = sf->compiled ? 1 : 0;
			d->code_bytes = sf->size;
			sf->self_samples = 0;
			sf->total_samples = 0;
			sf->compiled = false;
			if (sf->steps != NULL)
				*nstep_deltas += jp_step_profile_take(sf->steps, &sf->origin,
													  step_deltas + *nstep_deltas);
		}
		if (final)
			sf->owner = 0;
	}

	pg_compiler_barrier();
	jp_sig.flushing = false;
	pg_compiler_barrier();
	return ndeltas;
}

/*
 * Hand everything counted for one execution since its last flush to the
 * store.  "count_execution" adds one to the query's executions; "final"
 * detaches the execution's live functions, whose later samples (if any)
 * belong to nobody.  What the handler writes is read by
 * take_handler_counts(); everything that allocates, or may throw, is done
 * before or after it.
 */
void
jp_exec_flush(JpExec *exec, bool count_execution, bool final)
{
	static JpStoreDelta deltas[JP_MAX_SLOTS];
	static JpStoreNodeDelta node_deltas[JP_MAX_PLAN_NODES];
	static JpStoreTierNode tier_nodes[JP_TIER_MAX_NODES];
	JpStoreTiering tiering;
	bool		tiered;
	JpStoreNodes nodes;
	JpStoreSteps steps;
	JpStoreStepDelta *step_deltas = NULL;
	int			max_step_deltas = 0;
	JpStoreDelta *all = deltas;
	PendingFunction **pfs = NULL;
	int			ndeltas = 0;
	int			npending = 0;
	int64		qsamples;
	uint32		side;
	JpSamplerHealth health;

	jp_recycle_dead_slots();
	if (pending != NULL && hash_get_num_entries(pending) > 0)
	{
		HASH_SEQ_STATUS status;
		PendingFunction *pf;

		pfs = palloc(hash_get_num_entries(pending) * sizeof(PendingFunction *));
		hash_seq_init(&status, pending);
		while ((pf = hash_seq_search(&status)) != NULL)
			if (pf->key.owner == exec->id)
				pfs[npending++] = pf;
		if (npending > 0)
			all = palloc((JP_MAX_SLOTS + npending) * sizeof(JpStoreDelta));
	}

	/* room for every step delta, allocated before the handler is held off */
	for (int i = 0; i < slots_hwm; i++)
		if (jp_sig.slots[i].in_use && jp_sig.slots[i].owner == exec->id &&
			jp_sig.slots[i].steps != NULL)
			max_step_deltas += jp_sig.slots[i].steps->ndistinct;
	for (int i = 0; i < npending; i++)
		for (JpStepProfile *p = pfs[i]->steps; p != NULL; p = p->next)
			max_step_deltas += p->ndistinct;
	memset(&steps, 0, sizeof(steps));
	if (max_step_deltas > 0)
		step_deltas = palloc(max_step_deltas * sizeof(JpStoreStepDelta));

	memset(&health, 0, sizeof(health));
	memset(&nodes, 0, sizeof(nodes));
	nodes.deltas = node_deltas;
	ndeltas = take_handler_counts(exec, final, all, node_deltas,
								  &nodes.ndeltas, step_deltas, &steps.ndeltas,
								  &health, &qsamples);

	/* written only while jp_sig.flushing was set, so stable now */
	qsamples += exec->deferred_samples;
	exec->deferred_samples = 0;
	side = jp_sig.side_samples;
	jp_sig.side_samples = 0;
	health.samples_taken += side;
	health.samples_in_flush = side;
	health.functions_untracked = functions_untracked;
	health.executions_untracked = executions_untracked;
	health.forward_fallbacks = jp_sig.forward_fallbacks;
	functions_untracked = 0;
	executions_untracked = 0;
	jp_sig.forward_fallbacks = 0;

	for (int i = 0; i < npending; i++)
	{
		JpStoreDelta *d = &all[ndeltas++];

		d->origin = &pfs[i]->origin;
		d->self_samples = pfs[i]->self_samples;
		d->total_samples = pfs[i]->total_samples;
		d->compilations = pfs[i]->compilations;
		d->code_bytes = pfs[i]->code_bytes;
		for (JpStepProfile *p = pfs[i]->steps; p != NULL; p = p->next)
			steps.ndeltas += jp_step_profile_take(p, &pfs[i]->origin,
												  step_deltas + steps.ndeltas);
	}
	steps.deltas = step_deltas;

	/* every function of the execution ran within its samples */
	for (int i = 0; i < ndeltas; i++)
		all[i].query_samples = qsamples;

	/* the plan's shape goes with the first flush that has node samples */
	if (nodes.ndeltas > 0 && exec->shape == NULL && !final)
		jp_nodes_capture_shape(exec);
	if (nodes.ndeltas > 0 && exec->shape != NULL && !exec->shape_sent)
	{
		nodes.shape = exec->shape;
		nodes.nshape = exec->nshape;
		exec->shape_sent = true;
	}

	/*
	 * Plan-node data: the plan was wrapped, or samples were charged to a node
	 * anyway (JIT compilation of a plan that never ran wrapped, as in a
	 * statement nested in DO), so that the nodes' samples are always within
	 * the samples counted with them.
	 */
	tiered = jp_tiering_take(exec, count_execution, &tiering, tier_nodes);
	jp_store_flush(exec->userid, exec->dbid, exec->queryid, count_execution,
				   qsamples, exec->nodes_tracked || nodes.ndeltas > 0,
				   all, ndeltas, &health,
				   nodes.ndeltas > 0 ? &nodes : NULL,
				   steps.ndeltas > 0 ? &steps : NULL,
				   tiered ? &tiering : NULL);

	/* the deltas point into the pending table, so empty it only now */
	for (int i = 0; i < npending; i++)
	{
		JpStepProfile *p = pfs[i]->steps;

		while (p != NULL)
		{
			JpStepProfile *next = p->next;

			jp_step_profile_free(p);
			p = next;
		}
		hash_search(pending, &pfs[i]->key, HASH_REMOVE, NULL);
	}
	if (step_deltas != NULL)
		pfree(step_deltas);
	if (pfs != NULL)
		pfree(pfs);
	if (all != deltas)
		pfree(all);
}

/*
 * Flush every open execution that has reached jitprof.flush_interval; run
 * by the flush trampoline.
 */
void
jp_flush_due(void)
{
	for (int i = 0; i < JP_MAX_EXECS; i++)
	{
		JpExec	   *exec = &jp_sig.execs[i];

		if (exec->state == JP_EXEC_OPEN && jp_sig.flush_after > 0 &&
			exec->since_flush >= jp_sig.flush_after)
			jp_exec_flush(exec, false, false);
	}
}

/* ------------------------------------------------------------------------
 * Flush points: the watched plan nodes and the flush trampoline
 * ------------------------------------------------------------------------
 */

/* watched plan nodes: an open-addressing table keyed by node address */
#define WATCH_TABLE_SIZE	1024	/* a power of 2, > 2 * JP_MAX_WATCHED */

static JpWatchEntry watch_table[WATCH_TABLE_SIZE];
static int	watch_used[WATCH_TABLE_SIZE];
static int	nwatch_used = 0;
static bool watch_active = false;

static inline uint32
watch_hash(const PlanState *node)
{
	uint64		h = (uint64) (uintptr_t) node;

	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	return (uint32) h & (WATCH_TABLE_SIZE - 1);
}

static JpWatchEntry *
watch_find(const PlanState *node)
{
	uint32		i = watch_hash(node);

	for (int probe = 0; probe < WATCH_TABLE_SIZE; probe++)
	{
		JpWatchEntry *e = &watch_table[i];

		if (e->node == node)
			return e;
		if (e->node == NULL)
			return NULL;
		i = (i + 1) & (WATCH_TABLE_SIZE - 1);
	}
	return NULL;
}

/* the node's entry, added if need be; NULL when the table is too full */
static JpWatchEntry *
watch_enter(PlanState *node)
{
	uint32		i = watch_hash(node);

	if (nwatch_used >= WATCH_TABLE_SIZE / 2)
		return watch_find(node);
	for (;;)
	{
		JpWatchEntry *e = &watch_table[i];

		if (e->node == node)
			return e;
		if (e->node == NULL)
		{
			e->saved = NULL;
			e->state = JP_WATCH_IDLE;
			e->in_call = false;
			e->node = node;
			watch_used[nwatch_used++] = i;
			return e;
		}
		i = (i + 1) & (WATCH_TABLE_SIZE - 1);
	}
}

/*
 * Forget every watched node; only when no execution is open, so that no
 * plan node of ours can still be running.
 */
void
jp_watch_forget_all(void)
{
	if (watch_active)
		return;
	for (int i = 0; i < nwatch_used; i++)
		watch_table[watch_used[i]].node = NULL;
	nwatch_used = 0;
}

/* planstate_tree_walker callback: collect the nodes to arm */
static bool
collect_node(PlanState *node, void *context)
{
	int		   *n = (int *) context;
	JpWatchEntry *e;

	if (node == NULL)
		return false;
	if (*n < JP_MAX_WATCHED)
	{
		e = watch_enter(node);
		if (e != NULL && e->state != JP_WATCH_LOST)
		{
			e->state = JP_WATCH_IDLE;
			e->in_call = false;
			jp_sig.arm[(*n)++] = e;
		}
	}
	return planstate_tree_walker(node, collect_node, context);
}

/* Let the handler arm the nodes of queryDesc's plan. */
static bool
watch_begin(QueryDesc *queryDesc)
{
	int			n = 0;

	if (watch_active || jp_sig.flush_after == 0 || queryDesc->planstate == NULL)
		return false;
	collect_node(queryDesc->planstate, &n);
	jp_sig.flush_armed = false;
	pg_compiler_barrier();
	jp_sig.narm = n;
	watch_active = true;
	return true;
}

/*
 * Put back the ExecProcNode pointers the handler replaced, where they are
 * still ours; a node whose pointer someone else changed meanwhile is LOST
 * (the trampoline may sit in their chain, and forwards from there).
 */
static void
disarm(int narm)
{
	jp_sig.disarming = true;
	pg_compiler_barrier();
	for (int i = 0; i < narm; i++)
	{
		JpWatchEntry *e = jp_sig.arm[i];

		if (e->state != JP_WATCH_ARMED)
			continue;
		if (e->node->ExecProcNode == jp_flush_trampoline)
		{
			e->node->ExecProcNode = e->saved;
			e->state = JP_WATCH_IDLE;
		}
		else
			e->state = JP_WATCH_LOST;
	}
	pg_compiler_barrier();
	jp_sig.flush_armed = false;
	pg_compiler_barrier();
	jp_sig.disarming = false;
}

/* Stop watching: first hide the nodes from the handler, then disarm them. */
static void
watch_end(void)
{
	int			narm = jp_sig.narm;

	jp_sig.narm = 0;
	pg_compiler_barrier();
	disarm(narm);
	watch_active = false;
}

/*
 * Run a node as the executor's own dispatch would, below every wrapper: the
 * way out when wrappers that captured each other would loop.
 */
TupleTableSlot *
jp_run_node_itself(PlanState *node)
{
	TupleTableSlot *result;

	jp_sig.forward_fallbacks++;
	if (node->instrument == NULL)
		return node->ExecProcNodeReal(node);
	InstrStartNode(node->instrument);
	result = node->ExecProcNodeReal(node);
	InstrStopNode(node->instrument, TupIsNull(result) ? 0.0 : 1.0);
	return result;
}

/*
 * Stands in for a plan node's ExecProcNode when a mid-query flush is due
 * (and for good where another wrapper captured it): flushes from this safe
 * point in the executor, then runs the node through what it replaced.
 */
TupleTableSlot *
jp_flush_trampoline(PlanState *node)
{
	JpWatchEntry *e = watch_find(node);
	TupleTableSlot *result;

	if (e == NULL || e->saved == NULL || e->in_call)
		return jp_run_node_itself(node);

	if (jp_sig.flush_armed)
	{
		disarm(jp_sig.narm);
		jp_flush_due();
	}

	e->in_call = true;
	result = e->saved(node);
	e->in_call = false;
	return result;
}

/* ------------------------------------------------------------------------
 * Which execution runs: the sampler's part of each executor hook, called by
 * the hooks layer (hooks/hooks.c) around the next hook.  Each hook's work
 * sets jp_sig.current on entry and the frame puts it back on exit, also on
 * error, so that each sample goes to the execution that runs.
 * ------------------------------------------------------------------------
 */

/* the top-level utility statement that is running */
typedef struct UtilityState
{
	bool		active;
	PlannedStmt *pstmt;
	const char *portalname;		/* DECLARE CURSOR's cursor */
	int64		queryid;		/* as pg_stat_statements keys it */
	bool		wraps_query;	/* EXPLAIN, CREATE TABLE AS, DECLARE */
	PlannedStmt *inner;			/* the plan of that query, once started */
	JpExec	   *exec;			/* its own execution, once a JIT query ran */
	JpExec	   *cursor;			/* the cursor it declared */
	uint32		cursor_id;
} UtilityState;

static UtilityState utility;

/*
 * What utility was when the running top-level utility statement began, put
 * back when it ends: one copy is enough, as none begins while one runs.
 */
static UtilityState saved_utility;

static void sampler_xact_callback(XactEvent event, void *arg);

/*
 * The running utility statement's query ID, as pg_stat_statements keys it.
 * pg_stat_statements zeroes pstmt->queryId before calling the next hook
 * (so that its executor hooks ignore the statement's inner query), so when
 * it is loaded after jitprof the ID is computed again here as the core
 * computed it at parse analysis: JumbleQuery over a utility Query (15
 * hashes the statement's text, 16 and later jumble its parse tree).  It is
 * computed when the statement starts, because the planner then scribbles on
 * the query inside EXPLAIN, CREATE TABLE AS or DECLARE; and only when
 * pg_stat_statements zeroed the ID, which costs far more itself.
 */
static int64
utility_queryid(PlannedStmt *pstmt, const char *query_string)
{
	Query	   *query;
	int64		queryid;

	if (pstmt->queryId != 0 || !IsQueryIdEnabled() || query_string == NULL)
		return (int64) pstmt->queryId;
	query = makeNode(Query);
	query->commandType = CMD_UTILITY;
	query->utilityStmt = pstmt->utilityStmt;
	query->stmt_location = pstmt->stmt_location;
	query->stmt_len = pstmt->stmt_len;
	jp_jumble_query(query, query_string);
	queryid = (int64) query->queryId;
	pfree(query);
	return queryid;
}

/* Is queryDesc the plan of the cursor "portalname" being declared? */
static bool
is_cursor_plan(const char *portalname, QueryDesc *queryDesc)
{
	Portal		portal = GetPortalByName(portalname);

	return PortalIsValid(portal) && portal->stmts != NIL &&
		linitial(portal->stmts) == queryDesc->plannedstmt;
}

/*
 * A JIT statement starts while no execution runs: open the execution it
 * belongs to (doc/sampler.md).  Returns an execution owned by queryDesc, if
 * one was opened; *restore says whether jp_sig.current goes back to its old
 * value after ExecutorStart.
 */
static JpExec *
start_execution(QueryDesc *queryDesc, int nesting_level,
				QueryDesc *running_toplevel, bool *restore)
{
	JpExec	   *exec;

	*restore = true;
	if (nesting_level == 0)
	{
		exec = jp_exec_open(queryDesc, (int64) queryDesc->plannedstmt->queryId,
							true);
		if (exec != NULL)
			jp_sig.current = exec;
		return exec;
	}
	if (utility.active)
	{
		if (utility.portalname != NULL && utility.cursor == NULL &&
			is_cursor_plan(utility.portalname, queryDesc))
		{
			exec = jp_exec_open(queryDesc, utility.queryid, false);
			if (exec != NULL)
			{
				utility.cursor = exec;
				utility.cursor_id = exec->id;
				jp_sig.current = exec;
			}
			return exec;
		}
		if (utility.exec == NULL)
		{
			utility.exec = jp_exec_open(NULL, utility.queryid, false);
			jp_sig.current = utility.exec;
			*restore = false;
		}
		return NULL;
	}
	if (running_toplevel != NULL)
	{
		jp_sig.current = jp_exec_open(running_toplevel,
									  (int64) running_toplevel->plannedstmt->queryId,
									  true);
		*restore = false;
	}
	return NULL;
}

/* ExecutorStart at nesting level 1: a utility's own query, perhaps */
void
jp_sampler_inner_query(QueryDesc *queryDesc)
{
	if (utility.active && utility.wraps_query && utility.inner == NULL)
		utility.inner = queryDesc->plannedstmt;
}

/*
 * ExecutorStart of a JIT statement, before the next hook: it may open an
 * execution.  Returns false when the sampler has nothing to undo (no
 * execution runs on its behalf); else the caller runs the next hook, then
 * jp_sampler_start_end, or jp_sampler_frame_failed on error.
 */
bool
jp_sampler_start_begin(QueryDesc *queryDesc, int nesting_level,
					   QueryDesc *running_toplevel, JpSamplerFrame *frame)
{
	static bool xact_callback_registered = false;

	if (jp_sig.current != NULL || !jp_store_available())
		return false;

	/*
	 * Only an open execution needs the transaction callback, so a backend
	 * registers it at its first JIT statement: one that never JITs pays
	 * nothing at commit.
	 */
	if (!xact_callback_registered)
	{
		RegisterXactCallback(sampler_xact_callback, NULL);
		xact_callback_registered = true;
	}

	frame->saved = jp_sig.current;
	frame->exec = start_execution(queryDesc, nesting_level, running_toplevel,
								  &frame->restore);
	return true;
}

/*
 * The next ExecutorStart or ExecutorEnd threw: fail the frame's execution
 * and put back the one that ran before it.
 */
void
jp_sampler_frame_failed(JpSamplerFrame *frame)
{
	jp_exec_fail(frame->exec);
	jp_sig.current = frame->saved;
}

void
jp_sampler_start_end(JpSamplerFrame *frame)
{
	if (frame->restore)
		jp_sig.current = frame->saved;
}

/* ExecutorRun inside an execution: it may watch or wrap the plan's nodes */
static pg_noinline void
run_begin_in_execution(QueryDesc *queryDesc, JpSamplerFrame *frame)
{
	JpExec	   *exec = jp_exec_of(queryDesc);

	frame->saved = jp_sig.current;
	frame->watching = false;
	frame->wrapped = false;
	if (exec != NULL)
		jp_sig.current = exec;
	/* the hook's frame, where the frames of this run begin */
	if (exec != NULL && jitprof_plan_nodes)
		frame->wrapped = jp_nodes_install(queryDesc, exec, (uintptr_t) frame);
	frame->nested_floor = frame->wrapped ? 0 :
		jp_nodes_nested_begin((uintptr_t) frame);
	if (jp_sig.current != NULL && !watch_active && jp_sig.flush_after > 0 &&
		!frame->wrapped)
		frame->watching = watch_begin(queryDesc);
}

/*
 * ExecutorRun, before the next hook.  While this backend has no execution
 * open, as for all work that does not JIT, there is nothing to set up: the
 * frame only notes that.
 */
void
jp_sampler_run_begin(QueryDesc *queryDesc, JpSamplerFrame *frame)
{
	frame->outside = (jp_sig.nopen == 0 && jp_sig.current == NULL);
	if (!frame->outside)
		run_begin_in_execution(queryDesc, frame);
}

void
jp_sampler_run_failed(QueryDesc *queryDesc, JpSamplerFrame *frame)
{
	if (frame->outside)
	{
		jp_nodes_reset_after_error();
		/* a JIT statement it ran may have opened an execution for it */
		jp_exec_fail(jp_exec_of(queryDesc));
		jp_sig.current = NULL;
		return;
	}
	if (frame->watching)
		watch_end();
	if (frame->wrapped)
		jp_nodes_uninstall(false);
	else
		jp_nodes_nested_end(frame->nested_floor);
	jp_nodes_reset_after_error();
	jp_exec_fail(jp_exec_of(queryDesc));
	jp_sig.current = frame->saved;
}

void
jp_sampler_run_end(JpSamplerFrame *frame)
{
	if (frame->outside)
	{
		jp_sig.current = NULL;
		return;
	}
	if (frame->watching)
		watch_end();
	if (frame->wrapped)
		jp_nodes_uninstall(true);
	else
		jp_nodes_nested_end(frame->nested_floor);
	jp_sig.current = frame->saved;
}

/* Does an execution follow queryDesc? */
bool
jp_sampler_follows(const QueryDesc *queryDesc)
{
	return jp_exec_of(queryDesc) != NULL;
}

/*
 * ExecutorFinish or ExecutorEnd, before the next hook: the execution that
 * follows queryDesc, if any, runs.  Returns whether there is one.
 */
bool
jp_sampler_enter(QueryDesc *queryDesc, JpSamplerFrame *frame)
{
	frame->saved = jp_sig.current;
	frame->exec = jp_exec_of(queryDesc);
	if (frame->exec != NULL)
		jp_sig.current = frame->exec;
	return frame->exec != NULL;
}

/* ExecutorFinish or ExecutorEnd, after the next hook */
void
jp_sampler_leave(JpSamplerFrame *frame)
{
	jp_sig.current = frame->saved;
}

void
jp_sampler_finish_failed(QueryDesc *queryDesc, JpSamplerFrame *frame)
{
	jp_exec_fail(jp_exec_of(queryDesc));
	jp_sig.current = frame->saved;
}

/*
 * After ExecutorEnd (and jp_sampler_leave, if entered): the query's JIT
 * code is released by now; flush its execution and its samples, or recycle
 * code a nested statement released inside an execution.
 */
void
jp_sampler_end_done(JpSamplerFrame *frame)
{
	if (frame->exec != NULL)
		jp_exec_finish(frame->exec, frame->exec->count_at_end);
	else if (jp_sig.current != NULL)
		jp_recycle_dead_slots();
}

/*
 * ProcessUtility of a statement that is a nesting level of its own, before
 * the next hook: a top-level one may become an execution, once a JIT query
 * runs in it.
 */
void
jp_sampler_utility_begin(PlannedStmt *pstmt, const char *queryString,
						 bool toplevel, JpSamplerFrame *frame)
{
	Node	   *parsetree = pstmt->utilityStmt;

	frame->saved = jp_sig.current;
	frame->top = (toplevel && !utility.active);
	if (!frame->top)
		return;
	saved_utility = utility;
	memset(&utility, 0, sizeof(utility));
	utility.active = true;
	utility.pstmt = pstmt;
	utility.queryid = utility_queryid(pstmt, queryString);
	utility.wraps_query = IsA(parsetree, ExplainStmt) ||
		IsA(parsetree, CreateTableAsStmt) ||
		IsA(parsetree, DeclareCursorStmt);
	if (IsA(parsetree, DeclareCursorStmt))
		utility.portalname = ((DeclareCursorStmt *) parsetree)->portalname;
}

void
jp_sampler_utility_failed(JpSamplerFrame *frame)
{
	jp_sig.current = frame->saved;
	if (frame->top)
	{
		jp_exec_fail(utility.exec);
		utility = saved_utility;
	}
}

void
jp_sampler_utility_end(JpSamplerFrame *frame)
{
	UtilityState done;

	jp_sig.current = frame->saved;
	if (!frame->top)
		return;
	done = utility;
	utility = saved_utility;
	if (done.exec != NULL)
		jp_exec_finish(done.exec, true);
	/* the cursor's execution counts now, like the DECLARE */
	if (done.cursor != NULL && done.cursor->state == JP_EXEC_OPEN &&
		done.cursor->id == done.cursor_id)
		jp_exec_flush(done.cursor, !IsParallelWorker(), false);
}

/*
 * At transaction end every portal is gone, and with it every query an
 * execution follows; one still open missed its ExecutorEnd (a portal
 * dropped after an error elsewhere) and is closed as failed.
 */
static void
sampler_xact_callback(XactEvent event, void *arg)
{
	if (jp_sig.nopen == 0)
		return;
	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_ABORT &&
		event != XACT_EVENT_PARALLEL_COMMIT &&
		event != XACT_EVENT_PARALLEL_ABORT && event != XACT_EVENT_PREPARE)
		return;
	for (int i = 0; i < JP_MAX_EXECS; i++)
		if (jp_sig.execs[i].state == JP_EXEC_OPEN && jp_sig.execs[i].owner != NULL)
			jp_exec_fail(&jp_sig.execs[i]);
}

/* jitprof.sample_rate, in samples per CPU second (0: off) */
int
jp_sampler_rate(void)
{
	return jitprof_sample_rate;
}

/*
 * The query ID that JIT code compiled for estate's plan is named after, so
 * that names carry the query ID their rows carry: the plan's own, or, for a
 * plan that has none (the query of a CREATE TABLE AS or of a DECLARE
 * CURSOR, which PostgreSQL 15 does not jumble), that of the execution the
 * code is charged to, jp_sig.current, which the sampler's sink reads when the
 * code is linked.  The query an EXPLAIN, CREATE TABLE AS or DECLARE runs is
 * charged to that statement, so it takes the statement's ID even where it
 * has one of its own (an EXPLAIN's on every version, a CTAS's or DECLARE's
 * on 18): parallel workers, which get only the top-level ID, then name the
 * code as the leader does (doc/names.md, "EXPLAIN").  Plain EXPLAIN's
 * initial pruning code, the only code it emits, is named the same way.  A
 * nested statement with an ID of its own keeps it.  provider.c asks at
 * compile_expr time and hands the ID to naming.c.
 */
int64
jp_execution_queryid(EState *estate)
{
	int64		queryid = 0;

	/* a cursor's execution follows its plan across FETCHes */
	if (jp_sig.current != NULL && jp_sig.current->owner != NULL &&
		jp_sig.current->owner->estate == estate && jp_sig.current->queryid != 0)
		return jp_sig.current->queryid;
	if (utility.active && utility.inner != NULL && utility.queryid != 0 &&
		estate->es_plannedstmt == utility.inner)
		return utility.queryid;
	if (estate->es_plannedstmt != NULL)
		queryid = (int64) estate->es_plannedstmt->queryId;
	if (queryid == 0 && jp_sig.current != NULL)
		queryid = jp_sig.current->queryid;
	return queryid;
}

void
jp_sampler_init(void)
{
	DefineCustomIntVariable("jitprof.sample_rate",
							"Samples per CPU second taken by the hotspot sampler; 0 turns it off.",
							"Takes effect at the next JIT query.  Needs jitprof in shared_preload_libraries.",
							&jitprof_sample_rate,
							99,
							0,
							10000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	/*
	 * Real, in seconds: a value without a unit keeps meaning seconds, and
	 * '100ms' is 0.1 s instead of an integer's 0, which would mean never.
	 */
	DefineCustomRealVariable("jitprof.flush_interval",
							 "CPU time after which a running query's samples are flushed to the hotspot store.",
							 "0 flushes only when the query ends.  Counted in samples: at least one.",
							 &jitprof_flush_interval,
							 10,
							 0,
							 3600,
							 PGC_SUSET,
							 GUC_UNIT_S,
							 NULL, NULL, NULL);

	jp_nodes_define_gucs();

	/* the store exists only when preloaded (the hooks layer then calls) */
	if (!process_shared_preload_libraries_in_progress)
		return;

	jp_profile_register_sink();
}
