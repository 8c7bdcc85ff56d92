/*-------------------------------------------------------------------------
 *
 * sampler_hooks.c
 *	  The hotspot sampler's executor and ProcessUtility hooks: which
 *	  execution a sample belongs to, nesting as pg_stat_statements counts
 *	  it, cursor query IDs, and the mid-query flush trampoline.
 *
 * Contract: the hooks set jp_sig.current on entry and restore it on exit,
 * also on error, so that each sample goes to the execution that runs.  The
 * trampoline runs inside an execution's ExecutorRun, leaves jp_sig.current
 * and the watched nodes as it found them, and never raises an ERROR or
 * changes a result, whatever wrapper sits above or below it.  What a JIT
 * execution is, nesting, and how the trampoline composes: doc/sampler.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler_hooks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "jit/jit.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "tcop/utility.h"
#include "utils/guc.h"
#include "utils/portal.h"

#include "advisor/advisor.h"
#include "sampler/sampler_shared.h"

int			jitprof_sample_rate = 99;

/* the nesting level, as pg_stat_statements counts it */
static int	nesting_level = 0;

/* the top-level statement whose ExecutorRun or ExecutorFinish is running */
static QueryDesc *running_toplevel = NULL;

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

/* watched plan nodes: an open-addressing table keyed by node address */
#define WATCH_TABLE_SIZE	1024	/* a power of 2, > 2 * JP_MAX_WATCHED */

static JpWatchEntry watch_table[WATCH_TABLE_SIZE];
static int	watch_used[WATCH_TABLE_SIZE];
static int	nwatch_used = 0;
static bool watch_active = false;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static void sampler_xact_callback(XactEvent event, void *arg);

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
 * belongs to (see the file header).  Returns an execution owned by
 * queryDesc, if one was opened; *restore says whether jp_sig.current goes back
 * to its old value after ExecutorStart.
 */
static JpExec *
start_execution(QueryDesc *queryDesc, bool *restore)
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

static void
next_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* ExecutorStart of a JIT statement: it may open an execution */
static pg_noinline void
start_jit_statement(QueryDesc *queryDesc, int eflags)
{
	static bool xact_callback_registered = false;
	JpExec	   *saved = jp_sig.current;
	JpExec	   *exec;
	bool		restore;

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

	exec = start_execution(queryDesc, &restore);

	PG_TRY();
	{
		next_ExecutorStart(queryDesc, eflags);
	}
	PG_CATCH();
	{
		jp_exec_fail(exec);
		jp_sig.current = saved;
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (restore)
		jp_sig.current = saved;
}

static void
sampler_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	/* the utility's own query starts first, at the utility's level */
	if (utility.active && utility.wraps_query && utility.inner == NULL &&
		nesting_level == 1)
		utility.inner = queryDesc->plannedstmt;

	/* the JIT advisor may give the executor a plan with other jitFlags */
	if (unlikely(queryDesc->plannedstmt->planTree->total_cost >=
				 jp_advisor_cutoff))
		jp_advisor_start(queryDesc, eflags, nesting_level == 0);

	/*
	 * A statement that does not JIT opens no execution, so it needs no PG_TRY
	 * either: it costs statements that never JIT a few tests only.
	 */
	if ((queryDesc->plannedstmt->jitFlags & PGJIT_PERFORM) != 0 &&
		jp_sig.current == NULL &&
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 && jp_store_available())
		start_jit_statement(queryDesc, eflags);
	else
		next_ExecutorStart(queryDesc, eflags);
}

static void
next_ExecutorRun(JP_EXECUTOR_RUN_PARAMS)
{
	if (prev_ExecutorRun)
		prev_ExecutorRun(JP_EXECUTOR_RUN_ARGS);
	else
		standard_ExecutorRun(JP_EXECUTOR_RUN_ARGS);
}

/*
 * ExecutorRun while this backend has no execution open, as for all work
 * that does not JIT: only the nesting level and the running top-level
 * statement to keep, for a JIT statement that it may run.
 */
static void
run_outside_executions(JP_EXECUTOR_RUN_PARAMS)
{
	QueryDesc  *saved_running = running_toplevel;

	if (nesting_level == 0)
		running_toplevel = queryDesc;
	nesting_level++;
	PG_TRY();
	{
		next_ExecutorRun(JP_EXECUTOR_RUN_ARGS);
	}
	PG_CATCH();
	{
		nesting_level--;
		jp_nodes_reset_after_error();
		/* a JIT statement it ran may have opened an execution for it */
		jp_exec_fail(jp_exec_of(queryDesc));
		jp_sig.current = NULL;
		running_toplevel = saved_running;
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	jp_sig.current = NULL;
	running_toplevel = saved_running;
}

/* ExecutorRun inside an execution: it may watch or wrap the plan's nodes */
static pg_noinline void
run_in_execution(JP_EXECUTOR_RUN_PARAMS)
{
	JpExec	   *saved = jp_sig.current;
	QueryDesc  *saved_running = running_toplevel;
	JpExec	   *exec = jp_exec_of(queryDesc);
	bool		watching = false;
	bool		wrapped = false;

	if (exec != NULL)
		jp_sig.current = exec;
	if (nesting_level == 0)
		running_toplevel = queryDesc;
	if (exec != NULL && jitprof_plan_nodes)
		wrapped = jp_nodes_install(queryDesc, exec);
	if (jp_sig.current != NULL && !watch_active && jp_sig.flush_after > 0 && !wrapped)
		watching = watch_begin(queryDesc);

	nesting_level++;
	PG_TRY();
	{
		next_ExecutorRun(JP_EXECUTOR_RUN_ARGS);
	}
	PG_CATCH();
	{
		nesting_level--;
		if (watching)
			watch_end();
		if (wrapped)
			jp_nodes_uninstall(false);
		jp_nodes_reset_after_error();
		jp_exec_fail(jp_exec_of(queryDesc));
		jp_sig.current = saved;
		running_toplevel = saved_running;
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	if (watching)
		watch_end();
	if (wrapped)
		jp_nodes_uninstall(true);
	jp_sig.current = saved;
	running_toplevel = saved_running;
}

static void
sampler_ExecutorRun(JP_EXECUTOR_RUN_PARAMS)
{
	if (jp_sig.nopen == 0 && jp_sig.current == NULL)
		run_outside_executions(JP_EXECUTOR_RUN_ARGS);
	else
		run_in_execution(JP_EXECUTOR_RUN_ARGS);
}

/*
 * Can ExecutorFinish start a statement of its own?  Not when jitprof calls
 * standard_ExecutorFinish itself and the query queued no AFTER trigger and
 * has no ModifyTable left to finish: a SELECT without data-modifying WITH,
 * which ExecutorStart marks EXEC_FLAG_SKIP_TRIGGERS.  Then that call runs
 * no user code, and the nesting level need not be raised for it.
 */
static inline bool
finish_runs_no_statement(QueryDesc *queryDesc)
{
	return prev_ExecutorFinish == NULL &&
		(queryDesc->estate->es_top_eflags & EXEC_FLAG_SKIP_TRIGGERS) != 0 &&
		queryDesc->estate->es_auxmodifytables == NIL;
}

static void
next_ExecutorFinish(QueryDesc *queryDesc)
{
	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
}

/* ExecutorFinish at a nesting level of its own, as pg_stat_statements counts */
static pg_noinline void
finish_at_own_level(QueryDesc *queryDesc, JpExec *exec)
{
	JpExec	   *saved = jp_sig.current;
	QueryDesc  *saved_running = running_toplevel;

	if (exec != NULL)
		jp_sig.current = exec;
	if (nesting_level == 0)
		running_toplevel = queryDesc;

	nesting_level++;
	PG_TRY();
	{
		next_ExecutorFinish(queryDesc);
	}
	PG_CATCH();
	{
		nesting_level--;
		jp_exec_fail(jp_exec_of(queryDesc));
		jp_sig.current = saved;
		running_toplevel = saved_running;
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	jp_sig.current = saved;
	running_toplevel = saved_running;
}

static void
sampler_ExecutorFinish(QueryDesc *queryDesc)
{
	JpExec	   *exec = jp_exec_of(queryDesc);

	if (exec == NULL && finish_runs_no_statement(queryDesc))
		standard_ExecutorFinish(queryDesc);
	else
		finish_at_own_level(queryDesc, exec);
}

static void
next_ExecutorEnd(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/* ExecutorEnd of a query that an execution or the advisor follows */
static pg_noinline void
end_followed_query(QueryDesc *queryDesc, JpExec *exec)
{
	JpExec	   *saved = jp_sig.current;
	bool		advised = (queryDesc == jp_advisor_open_query);

	/* releasing the query's JIT code is the query's time too */
	if (exec != NULL)
		jp_sig.current = exec;
	if (unlikely(advised))
		jp_advisor_end_before(queryDesc);

	PG_TRY();
	{
		next_ExecutorEnd(queryDesc);
	}
	PG_CATCH();
	{
		jp_exec_fail(exec);
		jp_sig.current = saved;
		PG_RE_THROW();
	}
	PG_END_TRY();
	jp_sig.current = saved;
	if (unlikely(advised))
		jp_advisor_end_after(queryDesc);

	/* the query's JIT code is released by now; flush it and its samples */
	if (exec != NULL)
		jp_exec_finish(exec, exec->count_at_end);
	else if (jp_sig.current != NULL)
		jp_recycle_dead_slots();
}

static void
sampler_ExecutorEnd(QueryDesc *queryDesc)
{
	JpExec	   *exec = jp_exec_of(queryDesc);

	if (exec != NULL || queryDesc == jp_advisor_open_query)
	{
		end_followed_query(queryDesc, exec);
		return;
	}

	/* nothing of ours to undo on error, so no PG_TRY */
	next_ExecutorEnd(queryDesc);
	/* code a nested statement released inside an execution */
	if (jp_sig.current != NULL)
		jp_recycle_dead_slots();
}

static void
next_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

static void
sampler_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					   bool readOnlyTree, ProcessUtilityContext context,
					   ParamListInfo params, QueryEnvironment *queryEnv,
					   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	JpExec	   *saved = jp_sig.current;
	UtilityState saved_utility;
	bool		top;

	/*
	 * As pg_stat_statements: EXECUTE is not a level of its own (the prepared
	 * statement's executor runs at this level), and neither are PREPARE and
	 * DEALLOCATE.
	 */
	if (IsA(parsetree, ExecuteStmt) || IsA(parsetree, PrepareStmt) ||
		IsA(parsetree, DeallocateStmt))
	{
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
		return;
	}

	top = (nesting_level == 0 && !utility.active);
	if (top)
	{
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

	nesting_level++;
	PG_TRY();
	{
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	}
	PG_CATCH();
	{
		nesting_level--;
		jp_sig.current = saved;
		if (top)
		{
			jp_exec_fail(utility.exec);
			utility = saved_utility;
		}
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	jp_sig.current = saved;

	if (top)
	{
		UtilityState done = utility;

		utility = saved_utility;
		if (done.exec != NULL)
			jp_exec_finish(done.exec, true);
		/* the cursor's execution counts now, like the DECLARE */
		if (done.cursor != NULL && done.cursor->state == JP_EXEC_OPEN &&
			done.cursor->id == done.cursor_id)
			jp_exec_flush(done.cursor, !IsParallelWorker(), false);
	}
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

	/* the store and the hooks exist only when preloaded */
	if (!process_shared_preload_libraries_in_progress)
		return;

	jp_profile_register_sink();

	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = sampler_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = sampler_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = sampler_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = sampler_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = sampler_ProcessUtility;
}
