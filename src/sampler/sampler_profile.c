/*-------------------------------------------------------------------------
 *
 * sampler_profile.c
 *	  The hotspot sampler's bookkeeping: executions, per-function slots, and
 *	  the flush of an execution's counts to the shared store.
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
 * protocol of sampler_shared.h; nothing here blocks signals.  When flushes
 * happen: doc/sampler.md.
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
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "sampler/sampler_shared.h"

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
	jp_store_flush(exec->userid, exec->dbid, exec->queryid, count_execution,
				   qsamples, exec->nodes_tracked || nodes.ndeltas > 0,
				   all, ndeltas, &health,
				   nodes.ndeltas > 0 ? &nodes : NULL,
				   steps.ndeltas > 0 ? &steps : NULL);

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
