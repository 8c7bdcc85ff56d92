/*-------------------------------------------------------------------------
 *
 * jp_nodewrap.c
 *	  Test module: another extension that wraps every plan node's
 *	  ExecProcNode, as tracing extensions do, built and loaded by the tests
 *	  (test/t/039_flush_composes_with_node_wrappers.pl).
 *
 * At each ExecutorRun it points every node's ExecProcNode at its wrapper,
 * remembering the previous pointer.  The wrapper keeps a stack of the
 * running nodes (the mechanism a plan-node profiler would use, so the test
 * can also measure what it costs) and, after each call, re-wraps the node
 * whenever it sees that someone changed the pointer, capturing whatever is
 * there now as its next function.  That is what catches jitprof's flush
 * trampoline when it is armed during a call.
 *
 * jp_nodewrap.enabled turns the wrapping off for new ExecutorRun calls.
 * jp_nodewrap_changes() returns the largest number of pointer changes seen
 * on one node.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  test/modules/jp_nodewrap.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "utils/guc.h"

/* the hook's signature on this server (built with -I src) */
#include "core/compat.h"

PG_MODULE_MAGIC;

#define NWRAPS		65536		/* a power of 2; entries are never removed */
#define MAX_DEPTH	1024

typedef struct Wrap
{
	PlanState  *node;
	ExecProcNodeMtd next;
	int			changes;
} Wrap;

static Wrap wraps[NWRAPS];
static PlanState *node_stack[MAX_DEPTH];
static int	depth = 0;
static int	nesting = 0;
static int	max_changes = 0;
static bool enabled = true;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;

void		_PG_init(void);

PG_FUNCTION_INFO_V1(jp_nodewrap_changes);

static Wrap *
find_wrap(PlanState *node, bool add)
{
	uint32		i = (uint32) (((uintptr_t) node >> 4) * 2654435761u) & (NWRAPS - 1);

	for (int probe = 0; probe < NWRAPS; probe++)
	{
		Wrap	   *w = &wraps[i];

		if (w->node == node)
			return w;
		if (w->node == NULL)
		{
			if (!add)
				return NULL;
			w->node = node;
			w->changes = 0;
			return w;
		}
		i = (i + 1) & (NWRAPS - 1);
	}
	return NULL;
}

static TupleTableSlot *
wrapper(PlanState *node)
{
	Wrap	   *w = find_wrap(node, false);
	TupleTableSlot *result;

	if (w == NULL)
		elog(ERROR, "jp_nodewrap: node is not wrapped");
	if (depth < MAX_DEPTH)
		node_stack[depth] = node;
	depth++;
	result = w->next(node);
	depth--;

	/* someone changed the pointer during the call: wrap again */
	if (node->ExecProcNode != wrapper)
	{
		w->next = node->ExecProcNode;
		node->ExecProcNode = wrapper;
		w->changes++;
		if (w->changes > max_changes)
			max_changes = w->changes;
	}
	return result;
}

static bool
wrap_node(PlanState *node, void *context)
{
	Wrap	   *w;

	if (node == NULL)
		return false;
	if (node->ExecProcNode != wrapper)
	{
		w = find_wrap(node, true);
		if (w != NULL)
		{
			w->next = node->ExecProcNode;
			node->ExecProcNode = wrapper;
		}
	}
	return planstate_tree_walker(node, wrap_node, context);
}

static void
nodewrap_ExecutorRun(JP_EXECUTOR_RUN_PARAMS)
{
	if (nesting == 0)
		depth = 0;
	if (enabled && queryDesc->planstate != NULL)
		wrap_node(queryDesc->planstate, NULL);
	nesting++;
	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(JP_EXECUTOR_RUN_ARGS);
		else
			standard_ExecutorRun(JP_EXECUTOR_RUN_ARGS);
	}
	PG_FINALLY();
	{
		nesting--;
	}
	PG_END_TRY();
}

Datum
jp_nodewrap_changes(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(max_changes);
}

void
_PG_init(void)
{
	DefineCustomBoolVariable("jp_nodewrap.enabled",
							 "Wraps plan nodes' ExecProcNode.",
							 NULL, &enabled, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = nodewrap_ExecutorRun;
}
