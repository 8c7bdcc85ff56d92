/*-------------------------------------------------------------------------
 *
 * hooks.c
 *	  jitprof's executor and ProcessUtility hooks: installed and chained
 *	  here, with the nesting level as pg_stat_statements counts it; the
 *	  sampler and the JIT advisor do their work through their headers.
 *
 * Contract: every hook calls the next one (or the standard function) once,
 * whatever wrapper sits above or below; the sampler's notice of a hook is
 * put back when the next hook returns or throws.  A statement that does not
 * JIT and that the advisor does not follow opens no PG_TRY at ExecutorStart
 * and ExecutorEnd.  Nesting and what each hook charges: doc/sampler.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/hooks/hooks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "jit/jit.h"
#include "miscadmin.h"
#include "tcop/utility.h"

#include "hooks/hooks.h"

/* the nesting level, as pg_stat_statements counts it */
static int	nesting_level = 0;

/* the top-level statement whose ExecutorRun or ExecutorFinish is running */
static QueryDesc *running_toplevel = NULL;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static void
next_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* ExecutorStart of a JIT statement the sampler follows */
static pg_noinline void
start_followed(QueryDesc *queryDesc, int eflags, JpSamplerFrame *frame)
{
	PG_TRY();
	{
		next_ExecutorStart(queryDesc, eflags);
	}
	PG_CATCH();
	{
		jp_sampler_frame_failed(frame);
		PG_RE_THROW();
	}
	PG_END_TRY();
	jp_sampler_start_end(frame);
}

/*
 * The order: the sampler notes a utility's own query (nesting level 1, where
 * the advisor, which acts on top-level statements, changes nothing).  The
 * advisor, then tiering, come before the sampler's decision, because they
 * may hand the executor a plan with other jitFlags, and the sampler must see
 * the flags the executor will run with; tiering leaves the plans the
 * advisor follows alone, so that the advisor measures the level it chose
 * (tiered among them: tiering tells it what it would do with the plan).
 * The advisor's clocks count the opening of the sampler's execution as the
 * statement's time, as they always have.
 */
static void
hooks_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	JpSamplerFrame frame;

	/* the utility's own query starts first, at the utility's level */
	if (nesting_level == 1)
		jp_sampler_inner_query(queryDesc);

	/*
	 * The JIT advisor may give the executor a plan with other jitFlags, or
	 * run it tiered: tiering tells it whether it could.
	 */
	if (unlikely(queryDesc->plannedstmt->planTree->total_cost >=
				 jp_advisor_cutoff))
	{
		JpTieringOffer offer;

		jp_tiering_offer(queryDesc, &offer);
		jp_advisor_start(queryDesc, eflags, nesting_level == 0, &offer);
	}

	/* and so may tiering, for a plan the advisor does not follow */
	jp_tiering_plan(queryDesc, eflags, nesting_level == 0);

	/*
	 * A statement that does not JIT opens no execution, so it needs no PG_TRY
	 * either: it costs statements that never JIT a few tests only.
	 */
	if ((queryDesc->plannedstmt->jitFlags & PGJIT_PERFORM) != 0 &&
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 &&
		jp_sampler_start_begin(queryDesc, nesting_level, running_toplevel,
							   &frame))
		start_followed(queryDesc, eflags, &frame);
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

static void
hooks_ExecutorRun(JP_EXECUTOR_RUN_PARAMS)
{
	QueryDesc  *saved_running = running_toplevel;
	JpSamplerFrame frame;

	if (nesting_level == 0)
		running_toplevel = queryDesc;
	jp_sampler_run_begin(queryDesc, &frame);

	nesting_level++;
	PG_TRY();
	{
		next_ExecutorRun(JP_EXECUTOR_RUN_ARGS);
	}
	PG_CATCH();
	{
		nesting_level--;
		jp_sampler_run_failed(queryDesc, &frame);
		running_toplevel = saved_running;
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	jp_sampler_run_end(&frame);
	running_toplevel = saved_running;
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
finish_at_own_level(QueryDesc *queryDesc)
{
	QueryDesc  *saved_running = running_toplevel;
	JpSamplerFrame frame;

	jp_sampler_enter(queryDesc, &frame);
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
		jp_sampler_finish_failed(queryDesc, &frame);
		running_toplevel = saved_running;
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	jp_sampler_leave(&frame);
	running_toplevel = saved_running;
}

static void
hooks_ExecutorFinish(QueryDesc *queryDesc)
{
	if (finish_runs_no_statement(queryDesc) && !jp_sampler_follows(queryDesc))
		standard_ExecutorFinish(queryDesc);
	else
		finish_at_own_level(queryDesc);
}

static void
next_ExecutorEnd(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * ExecutorEnd of a query that an execution or the advisor follows.  The
 * order: the advisor reads the query's JIT instrumentation before the
 * executor releases the JIT context; it stops its clocks after the next
 * hooks and before the sampler's last flush of the execution, so that the
 * flush, jitprof's own work, is not charged to the JIT level the advisor
 * measures; and the flush comes last because the query's code is released
 * only by the next hooks (the flush then recycles its slots).  On an error
 * the advisor is not called: its transaction callbacks forget the query.
 */
static pg_noinline void
end_followed_query(QueryDesc *queryDesc, JpSamplerFrame *frame)
{
	bool		advised = (queryDesc == jp_advisor_open_query);

	if (unlikely(advised))
		jp_advisor_end_before(queryDesc);

	PG_TRY();
	{
		next_ExecutorEnd(queryDesc);
	}
	PG_CATCH();
	{
		jp_sampler_frame_failed(frame);
		PG_RE_THROW();
	}
	PG_END_TRY();
	jp_sampler_leave(frame);
	if (unlikely(advised))
		jp_advisor_end_after(queryDesc);

	jp_sampler_end_done(frame);
}

static void
hooks_ExecutorEnd(QueryDesc *queryDesc)
{
	JpSamplerFrame frame;

	/* did a plan under tiering's floor run long? */
	jp_tiering_plan_end(queryDesc);

	/* releasing the query's JIT code is the query's time too */
	if (jp_sampler_enter(queryDesc, &frame) ||
		queryDesc == jp_advisor_open_query)
	{
		end_followed_query(queryDesc, &frame);
		return;
	}

	/* nothing of ours to undo on error, so no PG_TRY */
	next_ExecutorEnd(queryDesc);
	jp_sampler_end_done(&frame);
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
hooks_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					 bool readOnlyTree, ProcessUtilityContext context,
					 ParamListInfo params, QueryEnvironment *queryEnv,
					 DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	JpSamplerFrame frame;

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

	jp_sampler_utility_begin(pstmt, queryString, nesting_level == 0, &frame);

	nesting_level++;
	PG_TRY();
	{
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	}
	PG_CATCH();
	{
		nesting_level--;
		jp_sampler_utility_failed(&frame);
		PG_RE_THROW();
	}
	PG_END_TRY();
	nesting_level--;
	jp_sampler_utility_end(&frame);
}

/* The hooks, installed only when preloaded (the store exists only then). */
void
jp_hooks_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = hooks_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = hooks_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = hooks_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = hooks_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = hooks_ProcessUtility;
}
