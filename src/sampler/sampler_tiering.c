/*-------------------------------------------------------------------------
 *
 * sampler_tiering.c
 *	  Tiered JIT's counts per execution: the provider's tiering (above)
 *	  hands what its rounds did to the execution its query is charged to,
 *	  and the execution's flush takes them to the store with its samples.
 *
 * An execution's counts are kept by the index of its JpExec, under its id,
 * so that counts of an execution that has ended (its slot reused, or a
 * query whose memory outlives its execution) are dropped, never lent to
 * another.  Main code only: the signal handler never reads this.  Each
 * execution keeps at most JP_TIER_MAX_NODES plan nodes between two flushes;
 * the rest count in plan_nodes_dropped (JP_MAX_EXECS x JP_TIER_MAX_NODES
 * x 32 bytes, 64 kB of static memory, touched only by executions that
 * tier).  doc/tiering.md, "Counters".
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler_tiering.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "sampler/sampler_shared.h"

typedef struct ExecTiering
{
	uint32		exec_id;		/* JpExec.id these counts are for; 0: none */
	bool		tiered;			/* tiered, and not counted yet */
	JpStoreTiering counts;		/* nodes unused: see nodes[] */
	int			nnodes;
	JpStoreTierNode nodes[JP_TIER_MAX_NODES];
} ExecTiering;

static ExecTiering exec_tiering[JP_MAX_EXECS];

/* the counts of the live execution "exec_id", or NULL */
static ExecTiering *
tiering_of(uint32 exec_id)
{
	if (exec_id == 0)
		return NULL;
	for (int i = 0; i < JP_MAX_EXECS; i++)
		if (jp_sig.execs[i].id == exec_id &&
			jp_sig.execs[i].state != JP_EXEC_FREE &&
			exec_tiering[i].exec_id == exec_id)
			return &exec_tiering[i];
	return NULL;
}

/*
 * A query starts to tier its expressions: it is charged to the running
 * execution (the statement's own, or the top-level one a nested statement
 * runs in), as its samples are.  Returns that execution's id, for
 * jp_sampler_tiering_add, or 0 when no execution runs.
 */
uint32
jp_sampler_tiering_exec(void)
{
	JpExec	   *exec = jp_sig.current;
	ExecTiering *t;

	if (exec == NULL || exec->state != JP_EXEC_OPEN)
		return 0;
	t = &exec_tiering[exec - jp_sig.execs];
	if (t->exec_id != exec->id)
	{
		memset(t, 0, offsetof(ExecTiering, nodes));
		t->exec_id = exec->id;
	}
	t->tiered = true;
	return exec->id;
}

/*
 * Add what tiering did ("delta", its nodes merged by plan_node_id) to the
 * execution "exec_id", if it has not ended.  Allocates nothing and does not
 * throw: called while a query's memory is freed, in error recovery too.
 */
void
jp_sampler_tiering_add(uint32 exec_id, const JpStoreTiering *delta)
{
	ExecTiering *t = tiering_of(exec_id);

	if (t == NULL)
		return;
	t->counts.switches += delta->switches;
	t->counts.functions += delta->functions;
	t->counts.expressions_compiled += delta->expressions_compiled;
	t->counts.expressions_never_compiled += delta->expressions_never_compiled;
	for (int i = 0; i < delta->nnodes; i++)
	{
		const JpStoreTierNode *d = &delta->nodes[i];
		JpStoreTierNode *n = NULL;

		for (int j = 0; j < t->nnodes; j++)
			if (t->nodes[j].plan_node_id == d->plan_node_id)
				n = &t->nodes[j];
		if (n == NULL && t->nnodes < JP_TIER_MAX_NODES)
		{
			n = &t->nodes[t->nnodes++];
			memset(n, 0, sizeof(*n));
			n->plan_node_id = d->plan_node_id;
		}
		if (n == NULL)
		{
			t->counts.nodes_dropped++;
			continue;
		}
		n->rounds += d->rounds;
		n->round_evaluations += d->round_evaluations;
		n->compile_ns += d->compile_ns;
	}
}

/*
 * For a flush of "exec": move its tiering counts into *out, its nodes into
 * "nodes" (room for JP_TIER_MAX_NODES).  The execution counts as tiered in
 * the flush that counts it ("count_execution").  False when there is
 * nothing to flush.
 */
bool
jp_tiering_take(JpExec *exec, bool count_execution, JpStoreTiering *out,
				JpStoreTierNode *nodes)
{
	ExecTiering *t = &exec_tiering[exec - jp_sig.execs];

	if (t->exec_id != exec->id)
		return false;
	*out = t->counts;
	out->tiered = t->tiered && count_execution;
	memcpy(nodes, t->nodes, t->nnodes * sizeof(JpStoreTierNode));
	out->nodes = nodes;
	out->nnodes = t->nnodes;
	if (count_execution)
		t->tiered = false;
	memset(&t->counts, 0, sizeof(t->counts));
	t->nnodes = 0;
	return true;
}
