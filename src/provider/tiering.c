/*-------------------------------------------------------------------------
 *
 * tiering.c
 *	  Tiered JIT: run a query's expressions interpreted first, and compile
 *	  the ones that have run when the query has done enough work.
 *
 * Contract: jp_tiering_defer() takes an expression from the provider's
 * compile_expr callback, makes it ready for the interpreter and installs
 * tiered_eval(), which counts work (against per-expression budgets that
 * keep the rule's checks exact) and, when tiering_rule.c says it pays,
 * compiles the expressions that have run in one round.  An expression is
 * switched only between two of its calls, and never changes its result.
 * Only a failed emission is caught (the query goes on interpreted, after
 * one WARNING); cancels, timeouts and errors while generating code are
 * re-thrown.  State lives in the query's es_query_cxt.  What the rounds
 * did is counted for this backend (jitprof_status) and handed to the
 * sampler's execution the query is charged to (per query and plan node,
 * in the store).  The long story, errors and counters: doc/tiering.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/tiering.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/execExpr.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "portability/instr_time.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "provider/provider.h"
#include "provider/tiering_rule.h"

/* GUCs */
bool		jitprof_tiering = true;
bool		jitprof_tiering_rest = true;
bool		jitprof_debug_fail_tiering = false;
int			jitprof_debug_tiering_wait = JP_TIERING_WAIT_OFF;

static const struct config_enum_entry tiering_wait_options[] = {
	{"off", JP_TIERING_WAIT_OFF, false},
	{"generate", JP_TIERING_WAIT_GENERATE, false},
	{"emit", JP_TIERING_WAIT_EMIT, false},
	{NULL, 0, false}
};

/* the longest a round waits for jitprof.debug_tiering_wait */
#define DEBUG_WAIT_MS	60000

/*
 * Resting: the CPU time a query counts its expressions' evaluations before
 * it may rest (its hottest expressions run without the wrapper until the
 * sampler's next sample), and the most samples' worth of CPU time a rest
 * is credited with.
 */
#define REST_WINDOW_NS	500000.0
#define REST_MAX_PERIODS	2

static JpTieringCounters counters;

typedef enum TierMode
{
	TIER_INTERPRETED,			/* counting, interpreted */
	TIER_PENDING,				/* compiled in a round, not yet called */
	TIER_COMPILED,				/* tiered_eval is out of the way */
	TIER_NEVER					/* llvmjit declined it: interpreted for good */
} TierMode;

typedef struct TieringQuery TieringQuery;

typedef struct TieredExpr
{
	TieringQuery *query;
	ExprState  *state;
	TierMode	mode;
	bool		checked;		/* CheckExprStillValid done */
	bool		rested;			/* runs without tiered_eval, until woken */
	int64		budget;			/* calls tiered_eval may still count alone */
	int64		granted;		/* the budget as last accounted */
	uint64		evaluations;	/* interpreted, since the last round */
	uint64		seen;			/* interpreted, since it was set up */
	uint64		window_mark;	/* seen, when the counting window began */
	double		rate;			/* evaluations per ns of CPU time, in the last
								 * counting window */
	JpTierWeight weight;		/* one evaluation's work (tiering_rule.c) */
	int			round;			/* the round that compiled it */
	uint64		round_evaluations;	/* the query's, at that round */
	bool		first_of_node;	/* its node's first in that round */
	int64		compile_ns;		/* generating its code in that round */
	ExprStateEvalFunc interp_func;	/* the interpreter's function */
	void	   *interp_private;
	ExprStateEvalFunc compiled_func;	/* the provider's entry */
	void	   *compiled_private;
	ExprStateEvalFunc llvmjit_entry;	/* llvmjit's entry, which emits */
	struct TieredExpr *next;
} TieredExpr;

struct TieringQuery
{
	EState	   *estate;
	ResourceOwner owner;		/* current when the query was set up */
	const JpTieringCompiler *compiler;
	JpTierRule	rule;			/* when to compile (tiering_rule.c) */
	uint64		evaluations;	/* interpreted, since the last round */
	uint64		all_evaluations;	/* interpreted, since it started */
	uint32		exec_id;		/* the sampler's execution it is charged to */
	int			nexprs;			/* tiered expressions */
	int			rounds;			/* rounds started */
	int			code_round;		/* the last round that generated code */
	int			emitted_round;	/* the last round known emitted */
	/* generated since the last emission, counted when it is emitted */
	uint64		pending_switches;
	uint64		pending_exprs;
	uint64		pending_functions;
	bool		failed;			/* a compile failed: interpreted for good */
	bool		resting;		/* its hottest expressions run unwrapped */
	bool		looked;			/* the rule has looked at the work once */
	int64		window_start_ns;	/* CPU time the counting window began */
	int64		rest_start_ns;	/* CPU time the rest began */
	double		rest_max_ns;	/* the most CPU time a rest is credited with */
	TieredExpr *exprs;			/* in the order they were initialized */
	TieredExpr **exprs_tail;
	MemoryContextCallback callback;
	TieringQuery *next;
};

/* the queries of this backend with tiered expressions, innermost first */
static TieringQuery *live_queries = NULL;

/* the one query of this backend that rests, if any */
static TieringQuery *resting_query = NULL;

static Datum tiered_eval(ExprState *state, ExprContext *econtext,
						 bool *isNull);

void
jp_tiering_define_gucs(void)
{
	DefineCustomBoolVariable("jitprof.tiering",
							 "Runs JIT queries interpreted first and compiles the expressions that have run once the query has done enough work.",
							 "Takes effect for queries started after it is set (doc/tiering.md).",
							 &jitprof_tiering,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("jitprof.tiering_rest",
							 "Lets a tiered query run its hottest expressions without counting them between two of the sampler's samples.",
							 "Their work is estimated from the CPU time, at the rate counted just before (doc/tiering.md).",
							 &jitprof_tiering_rest,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	jp_tier_rule_define_gucs();

	DefineCustomBoolVariable("jitprof.debug_fail_tiering",
							 "Makes the first compiled call of each tiering round fail, so that the query goes on interpreted (for testing).",
							 NULL,
							 &jitprof_debug_fail_tiering,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("jitprof.debug_tiering_wait",
							 "Makes each tiering round wait while it generates or emits its code, until interrupted or for a minute (for testing).",
							 NULL,
							 &jitprof_debug_tiering_wait,
							 JP_TIERING_WAIT_OFF,
							 tiering_wait_options,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
}

/* this backend's tiering counters, for jitprof_status */
const JpTieringCounters *
jp_tiering_counters(void)
{
	return &counters;
}

/*
 * jitprof.debug_tiering_wait: a compile that takes long and meets an
 * interrupt check on the way, as one that waits for a catalog lock does.
 * Waits in PgSleep, so that a test can find the backend there.
 */
static void
debug_wait(int stage)
{
	TimestampTz end;

	if (jitprof_debug_tiering_wait != stage)
		return;
	end = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), DEBUG_WAIT_MS);
	for (;;)
	{
		long		left;

		CHECK_FOR_INTERRUPTS();
		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), end);
		if (left <= 0)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Min(left, 1000), WAIT_EVENT_PG_SLEEP);
		ResetLatch(MyLatch);
	}
}

/* instr_time in ns (PostgreSQL 15 has no INSTR_TIME_GET_NANOSEC) */
static inline int64
elapsed_ns(instr_time t)
{
	return (int64) INSTR_TIME_GET_MICROSEC(t) * 1000;
}

/*
 * The time llvmjit has spent on QUERY's modules (inlining, optimising,
 * emitting), from the JIT instrumentation EXPLAIN ANALYZE prints.
 */
static instr_time
module_time(TieringQuery *query)
{
	JitContext *jit = query->estate->es_jit;
	instr_time	sum;

	INSTR_TIME_SET_ZERO(sum);
	if (jit != NULL)
	{
		INSTR_TIME_ADD(sum, jit->instr.inlining_counter);
		INSTR_TIME_ADD(sum, jit->instr.optimization_counter);
		INSTR_TIME_ADD(sum, jit->instr.emission_counter);
	}
	return sum;
}

/* the plan node an expression is of, or -1 */
static int32
node_of(const TieredExpr *te)
{
	PlanState  *parent = te->state->parent;

	return parent != NULL && parent->plan != NULL ?
		parent->plan->plan_node_id : -1;
}

/* es_query_cxt is going away: count what it never compiled, forget it */
static void
forget_query(void *arg)
{
	TieringQuery *query = (TieringQuery *) arg;
	TieringQuery **link = &live_queries;
	JpStoreTiering delta = {0};

	/* no store may reach its expressions after their memory is gone */
	if (resting_query == query)
	{
		jp_sampler_wake_disarm();
		resting_query = NULL;
	}
	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
		if (te->mode == TIER_INTERPRETED || te->mode == TIER_NEVER)
			delta.expressions_never_compiled++;
	counters.expressions_never_compiled += delta.expressions_never_compiled;
	jp_sampler_tiering_add(query->exec_id, &delta);

	while (*link != NULL)
	{
		if (*link == query)
		{
			*link = query->next;
			return;
		}
		link = &(*link)->next;
	}
}

static TieringQuery *
query_of(EState *estate, const JpTieringCompiler *compiler)
{
	TieringQuery *query;

	for (query = live_queries; query != NULL; query = query->next)
		if (query->estate == estate)
			return query;

	query = MemoryContextAllocZero(estate->es_query_cxt, sizeof(TieringQuery));
	query->estate = estate;
	query->owner = CurrentResourceOwner;
	query->compiler = compiler;
	jp_tier_rule_init(&query->rule, estate);
	query->exprs_tail = &query->exprs;
	query->callback.func = forget_query;
	query->callback.arg = query;
	MemoryContextRegisterResetCallback(estate->es_query_cxt, &query->callback);
	query->next = live_queries;
	live_queries = query;
	counters.queries++;
	query->exec_id = jp_sampler_tiering_exec();
	query->window_start_ns = -1;	/* from the rule's CPU mark on */
	return query;
}

/*
 * The provider's compile_expr with tiering on: make STATE ready for the
 * interpreter and count its evaluations.  Returns true, as ExecReadyExpr
 * then must not ready it again.
 */
bool
jp_tiering_defer(ExprState *state, const JpTieringCompiler *compiler)
{
	EState	   *estate = state->parent->state;
	TieringQuery *query;
	TieredExpr *te;
	JpTierWeight weight;

	/* a plan below the floor cost, or one the rule does not tier */
	query = jp_tier_rule_below_floor(estate->es_plannedstmt) ? NULL :
		query_of(estate, compiler);
	if (query == NULL || !query->rule.admitted)
	{
		ExecReadyInterpretedExpr(state);
		return true;
	}

	/*
	 * Weighed before the interpreter threads the steps: reading an opcode
	 * back from a threaded step is a search (ExecEvalStepOp).
	 */
	jp_tier_rule_weigh(&query->rule, state, &weight);
	ExecReadyInterpretedExpr(state);

	/*
	 * tiered_eval relies on what ExecInterpExprStillValid does; anything else
	 * installed here stays interpreted, untouched.
	 */
	if (state->evalfunc != ExecInterpExprStillValid ||
		state->evalfunc_private == NULL)
		return true;

	te = MemoryContextAllocZero(estate->es_query_cxt, sizeof(TieredExpr));
	te->query = query;
	te->state = state;
	te->mode = TIER_INTERPRETED;
	te->weight = weight;
	te->interp_func = (ExprStateEvalFunc) state->evalfunc_private;
	te->interp_private = state->evalfunc_private;
	*query->exprs_tail = te;
	query->exprs_tail = &te->next;
	query->nexprs++;

	state->evalfunc = tiered_eval;
	state->evalfunc_private = te;

	/* is its node above the scan that drives the query? */
	jp_tier_progress_note(&query->rule.progress, state);
	return true;
}

/*
 * Is a caught error one that must end the query whatever it interrupted?
 * A cancel (statement_timeout too), a shutdown, a lock timeout: the user or
 * the server asked to stop, and a failed compile must not hide that.
 */
static bool
must_rethrow(ErrorData *edata)
{
	return ERRCODE_TO_CATEGORY(edata->sqlerrcode) == ERRCODE_OPERATOR_INTERVENTION ||
		edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE;
}

/*
 * Put the expressions of QUERY's rounds after AFTER back to interpreted,
 * and forget what those rounds generated: they never switched.
 */
static void
revert_rounds(TieringQuery *query, int after)
{
	query->pending_switches = 0;
	query->pending_exprs = 0;
	query->pending_functions = 0;
	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
	{
		if (te->round <= after)
			continue;
		te->mode = TIER_INTERPRETED;
		te->budget = te->granted = 0;
		te->state->evalfunc = tiered_eval;
		te->state->evalfunc_private = te;
	}
}

/*
 * Mark, among the expressions ROUND compiled, each node's first: its node
 * counts that round once (charge_switch).  Quadratic in the round's
 * expressions, whose compile costs far more.
 */
static void
mark_first_of_node(TieringQuery *query, int round)
{
	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
	{
		if (te->round != round || te->mode != TIER_PENDING)
			continue;
		te->first_of_node = true;
		for (TieredExpr *before = query->exprs; before != te;
			 before = before->next)
			if (before->round == round && before->mode == TIER_PENDING &&
				node_of(before) == node_of(te))
			{
				te->first_of_node = false;
				break;
			}
	}
}

/*
 * Compile the expressions of QUERY that have run since the last round,
 * into llvmjit's current module.  Their code is emitted at the first
 * compiled call of one of them (first_compiled_call).
 */
static void
compile_round(TieringQuery *query)
{
	MemoryContext oldcxt;
	ResourceOwner oldowner = CurrentResourceOwner;
	int			round = ++query->rounds;
	int32		compiling = jp_sampler_compile_begin(NULL);
	int			compiled = 0;
	int			never_ran = 0;
	uint64		evaluations = query->evaluations;
	JitContext *jit;
	size_t		functions_before;
	instr_time	start;
	instr_time	duration;

	query->evaluations = 0;
	query->all_evaluations += evaluations;
	jit = query->estate->es_jit;
	functions_before = jit != NULL ? jit->instr.created_functions : 0;

	/*
	 * llvmjit allocates its per-expression state in the current memory
	 * context, and registers the JIT context with the current resource owner:
	 * those of the query, as when it compiles eagerly.
	 */
	oldcxt = MemoryContextSwitchTo(query->estate->es_query_cxt);
	CurrentResourceOwner = query->owner;

	PG_TRY();
	{
		debug_wait(JP_TIERING_WAIT_GENERATE);
		for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
		{
			ExprState  *state = te->state;

			if (te->mode != TIER_INTERPRETED)
				continue;
			if (te->evaluations == 0)
			{
				never_ran++;
				continue;
			}
			te->evaluations = 0;
			te->round = round;
			te->round_evaluations = query->all_evaluations;
			INSTR_TIME_SET_CURRENT(start);
			if (query->compiler->compile(state, &te->llvmjit_entry))
			{
				INSTR_TIME_SET_CURRENT(duration);
				INSTR_TIME_SUBTRACT(duration, start);
				te->compile_ns = elapsed_ns(duration);
				te->compiled_func = state->evalfunc;
				te->compiled_private = state->evalfunc_private;
				te->mode = TIER_PENDING;
				compiled++;
			}
			else
				te->mode = TIER_NEVER;
			/* its next call takes tiered_eval_slow's path */
			te->budget = te->granted = 0;
			state->evalfunc = tiered_eval;
			state->evalfunc_private = te;
		}
	}
	PG_CATCH();
	{
		/*
		 * Not caught: see the file header.  Put every expression whose code
		 * was not emitted back to the interpreter (the one that failed too),
		 * then re-throw.
		 */
		CurrentResourceOwner = oldowner;
		MemoryContextSwitchTo(oldcxt);
		jp_sampler_compile_end(compiling);
		revert_rounds(query, query->emitted_round);
		query->failed = true;
		PG_RE_THROW();
	}
	PG_END_TRY();

	CurrentResourceOwner = oldowner;
	MemoryContextSwitchTo(oldcxt);
	jp_sampler_compile_end(compiling);

	if (compiled > 0)
	{
		mark_first_of_node(query, round);
		query->code_round = round;
		query->pending_switches++;
		query->pending_exprs += compiled;
		jit = query->estate->es_jit;
		if (jit != NULL && jit->instr.created_functions > functions_before)
			query->pending_functions +=
				jit->instr.created_functions - functions_before;
	}

	ereport(DEBUG1,
			(errmsg_internal("jitprof tiering: round %d after %llu evaluations compiled %d expressions, %d not run yet",
							 round, (unsigned long long) evaluations,
							 compiled, never_ran)));
}

/*
 * Hand the sampler what the rounds after emitted_round did, per plan node:
 * each round that compiled some of a node's expressions counts once for it
 * (at its first such expression), with the query's evaluations at that
 * round, and the node is charged the time its expressions' code took to
 * generate.  EMITTER's node is charged the emission (EMIT_NS), as the
 * sampler charges its samples.  Allocates nothing: it also runs while an
 * error is handled.
 */
static void
charge_switch(TieringQuery *query, TieredExpr *emitter, int64 emit_ns)
{
	JpStoreTiering delta = {0};
	JpStoreTierNode node;

	delta.switches = query->pending_switches;
	delta.expressions_compiled = query->pending_exprs;
	delta.functions = query->pending_functions;
	jp_sampler_tiering_add(query->exec_id, &delta);

	memset(&delta, 0, sizeof(delta));
	delta.nodes = &node;
	delta.nnodes = 1;
	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
	{
		bool		compiled = (te->round > query->emitted_round &&
								te->round <= query->code_round &&
								(te->mode == TIER_PENDING ||
								 te->mode == TIER_COMPILED));

		memset(&node, 0, sizeof(node));
		node.plan_node_id = node_of(te);
		if (compiled)
		{
			node.rounds = te->first_of_node ? 1 : 0;
			node.round_evaluations = te->first_of_node ? te->round_evaluations : 0;
			node.compile_ns = te->compile_ns;
		}
		if (te == emitter)
			node.compile_ns += emit_ns;
		if (node.plan_node_id >= 0 && (compiled || te == emitter))
			jp_sampler_tiering_add(query->exec_id, &delta);
	}
}

/*
 * QUERY's pending rounds were emitted, by EMITTER's first call in EMIT_NS:
 * the switch took effect.
 */
static void
switched(TieringQuery *query, TieredExpr *emitter, int64 emit_ns)
{
	charge_switch(query, emitter, emit_ns);
	query->emitted_round = query->code_round;
	counters.switches += query->pending_switches;
	counters.expressions_compiled += query->pending_exprs;
	counters.functions_compiled += query->pending_functions;
	query->pending_switches = 0;
	query->pending_exprs = 0;
	query->pending_functions = 0;
}

/* The rule: does a round that compiles what has run pay now? */
static bool
round_pays(TieringQuery *query)
{
	JpTierPending pending = {0};

	if (!query->rule.forced)
		for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
			if (te->mode == TIER_INTERPRETED && te->evaluations > 0)
				jp_tier_rule_add(&pending, &te->weight);
	return jp_tier_rule_pays(&query->rule, &pending, query->estate);
}

/*
 * The first call of a compiled expression: unless its module was emitted
 * already, this call emits it (with every round generated into it since the
 * last emission).  If that fails before the compiled code has begun to run
 * (state->evalfunc is still an entry that emits), those rounds go back to
 * the interpreter, which evaluates this call (see the file header).
 */
static Datum
first_compiled_call(TieredExpr *te, ExprContext *econtext, bool *isNull)
{
	ExprState  *state = te->state;
	TieringQuery *query = te->query;
	MemoryContext cxt = CurrentMemoryContext;
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	int32		compiling = jp_sampler_compile_begin(NULL);
	ErrorData  *edata;
	Datum		result;
	instr_time	start;
	instr_time	duration;

	state->evalfunc = te->compiled_func;
	state->evalfunc_private = te->compiled_private;
	te->mode = TIER_COMPILED;

	if (query->emitted_round >= query->code_round)
		return state->evalfunc(state, econtext, isNull);

	/* the module's time, without this call's evaluation */
	start = module_time(query);
	PG_TRY();
	{
		debug_wait(JP_TIERING_WAIT_EMIT);
		if (jitprof_debug_fail_tiering)
			elog(ERROR, "failure of tiered compilation injected by jitprof.debug_fail_tiering");
		result = state->evalfunc(state, econtext, isNull);
	}
	PG_CATCH();
	{
		jp_sampler_compile_end(compiling);

		/* the module was emitted and the compiled code ran: its error */
		if (state->evalfunc != te->compiled_func &&
			state->evalfunc != te->llvmjit_entry)
		{
			duration = module_time(query);
			INSTR_TIME_SUBTRACT(duration, start);
			switched(query, te, elapsed_ns(duration));
			PG_RE_THROW();
		}

		/*
		 * Every expression whose code was not emitted goes back to the
		 * interpreter, and this one too: it may be of a round emitted
		 * already, calling for the first time after a later round.
		 */
		revert_rounds(query, query->emitted_round);
		te->mode = TIER_INTERPRETED;
		te->budget = te->granted = 0;
		state->evalfunc = tiered_eval;
		state->evalfunc_private = te;
		query->failed = true;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (must_rethrow(edata))
		{
			FreeErrorData(edata);
			PG_RE_THROW();
		}
		FlushErrorState();
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		query->compiler->reset_after_error();
		counters.failures++;
		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("tiered JIT compilation failed, so the query goes on interpreted"),
				 errdetail_internal("%s", edata->message),
				 errhint("Set jitprof.tiering to off to compile JIT queries before they run.")));
		FreeErrorData(edata);
		return tiered_eval(state, econtext, isNull);
	}
	PG_END_TRY();

	duration = module_time(query);
	INSTR_TIME_SUBTRACT(duration, start);
	switched(query, te, elapsed_ns(duration));
	return result;
}

/*
 * Count what QUERY's expressions did on tiered_eval's fast path since they
 * were last accounted: the query's work is then exact.
 */
static void
account(TieringQuery *query)
{
	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
	{
		uint64		used;

		if (te->mode != TIER_INTERPRETED)
			continue;
		used = te->granted - Max(te->budget, 0);
		te->granted = Max(te->budget, 0);
		te->evaluations += used;
		te->seen += used;
		query->evaluations += used;
		jp_tier_rule_count(&query->rule, used, &te->weight);
	}
}

/*
 * May QUERY count in windows and rest?  Not before the rule's first check
 * (a rest can put the next check off by up to a sampling period, and the
 * first check, which decides most switches, stays exact), when its switch
 * point is forced (the counts must be exact), when it failed to compile,
 * when the sampler's timer does not run (nothing would wake it), or while
 * another query rests.
 */
static bool
may_rest(TieringQuery *query)
{
	return jitprof_tiering_rest && query->looked && !query->rule.forced &&
		!query->failed &&
		(resting_query == NULL || resting_query == query) &&
		jp_sampler_tick_rate() > 0;
}

/*
 * Share the work left before the rule's next check among QUERY's
 * interpreted expressions, as calls tiered_eval may count alone: the sum of
 * budget x weight never passes it, so the call that would pass the check
 * comes through tiered_eval_slow, and the check happens at the exact count.
 * An eighth is shared equally and the rest by each expression's rate in the
 * last counting window, so that the hottest seldom takes the slow path;
 * while the query may rest, no more than half a window's worth (below).
 * An expression not yet called gets none: its first call must do the check
 * ExecInterpExprStillValid would.  A rested one gets none either: its
 * first call after the sampler puts tiered_eval back wakes the query.  A
 * query that failed to compile counts no more.
 */
static void
grant(TieringQuery *query)
{
	uint64		left = 0;
	double		total_rate = 0;
	bool		window = may_rest(query);

	if (query->rule.next_check > query->rule.work)
		left = query->rule.next_check - query->rule.work;
	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
		if (te->mode == TIER_INTERPRETED && te->checked && !te->rested)
			total_rate += te->rate * Max(te->weight.work, 1);

	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
	{
		/* the first call is tiered_eval_slow's: it does the check */
		if (te->mode == TIER_INTERPRETED && (!te->checked || te->rested))
			te->budget = te->granted = 0;
		else if (te->mode == TIER_NEVER ||
				 (te->mode == TIER_INTERPRETED && query->failed))
			te->budget = te->granted = PG_INT64_MAX / 2;
		else if (te->mode == TIER_INTERPRETED)
		{
			uint64		weight = Max(te->weight.work, 1);
			double		share;

			if (total_rate > 0)
				share = (double) left / 8 / query->nexprs / weight +
					(double) left * 7 / 8 * te->rate / total_rate;
			else
				share = (double) left / query->nexprs / weight;

			/*
			 * A window: as many calls as its rate makes in half of
			 * REST_WINDOW_NS, so that the window ends by CPU time, at the
			 * first slow path after REST_WINDOW_NS (a window ended by a count
			 * would end early in a burst, and overstate the rate).
			 */
			if (window)
				share = Min(share, te->rate > 0 ?
							te->rate * REST_WINDOW_NS / 2 :
							(double) jp_tier_rule_work_of_ns(REST_WINDOW_NS / 2) /
							query->nexprs / weight);
			share = Min(share, (double) (PG_INT64_MAX / 2));
			te->budget = te->granted = (int64) share;
		}
	}
}

/*
 * End the counting window of QUERY at NOW: each interpreted expression's
 * rate is its evaluations counted in the window over the CPU time it took.
 */
static void
measure(TieringQuery *query, int64 now)
{
	double		window = (double) (now - query->window_start_ns);

	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
		if (te->mode == TIER_INTERPRETED)
			te->rate = (double) (te->seen - te->window_mark) / window;
}

/* Begin a counting window of QUERY at NOW. */
static void
begin_window(TieringQuery *query, int64 now)
{
	query->window_start_ns = now;
	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
		te->window_mark = te->seen;
}

/*
 * After a check that did not compile: once QUERY has counted for a window,
 * let its hottest expressions run without tiered_eval (one pointer store
 * each) until the sampler's next sample puts it back (jp_sampler_wake_arm),
 * and have the first call after that wake the query.  What they did in
 * between is estimated from the CPU time (wake).
 */
static void
rest(TieringQuery *query)
{
	void	   *volatile *slots[JP_SAMPLER_MAX_WAKES];
	void	   *values[JP_SAMPLER_MAX_WAKES];
	int			n = 0;
	int64		now;

	if (!may_rest(query) || query->window_start_ns < 0)
		return;
	now = jp_tier_rule_cpu_ns();
	if (now < 0 || (double) (now - query->window_start_ns) < REST_WINDOW_NS)
		return;
	measure(query, now);

	while (n < JP_SAMPLER_MAX_WAKES)
	{
		TieredExpr *hottest = NULL;

		for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
			if (te->mode == TIER_INTERPRETED && te->checked && !te->rested &&
				te->rate > 0 && te->state->evalfunc == tiered_eval &&
				(hottest == NULL || te->rate > hottest->rate))
				hottest = te;
		if (hottest == NULL)
			break;
		hottest->rested = true;
		hottest->budget = hottest->granted = 0;
		hottest->state->evalfunc = hottest->interp_func;
		slots[n] = (void *volatile *) &hottest->state->evalfunc;
		values[n] = (void *) tiered_eval;
		n++;
	}
	if (n == 0)
	{
		begin_window(query, now);
		return;
	}
	jp_sampler_wake_arm(slots, values, n);
	query->resting = true;
	query->rest_start_ns = now;
	query->rest_max_ns = 1e9 * REST_MAX_PERIODS / jp_sampler_tick_rate();
	resting_query = query;
	counters.rests++;
}

/*
 * QUERY rested: put tiered_eval back in front of its rested expressions
 * (the sampler may have done so already), credit each with its rate times
 * the CPU time of the rest (no more than REST_MAX_PERIODS sampling periods,
 * at the rate the rest began with: a longer rest means the query did not
 * run, an idle cursor), and begin a counting window.
 */
static void
wake(TieringQuery *query)
{
	int64		now = jp_tier_rule_cpu_ns();
	double		rested = 0;

	jp_sampler_wake_disarm();
	if (now >= 0 && query->rest_start_ns >= 0)
		rested = Min((double) (now - query->rest_start_ns), query->rest_max_ns);
	for (TieredExpr *te = query->exprs; te != NULL; te = te->next)
	{
		uint64		estimate;

		if (!te->rested)
			continue;
		te->rested = false;
		te->state->evalfunc = tiered_eval;
		te->budget = te->granted = 0;
		estimate = (uint64) (te->rate * Max(rested, 0.0));
		te->evaluations += estimate;
		te->seen += estimate;
		query->evaluations += estimate;
		jp_tier_rule_count(&query->rule, estimate, &te->weight);
	}
	query->resting = false;
	resting_query = NULL;
	begin_window(query, now);
}

/*
 * Every call that tiered_eval does not count alone: the first (the check
 * ExecInterpExprStillValid would do), the calls at the rule's checks and
 * rounds, and the compiled code's first call.
 */
static pg_noinline Datum
tiered_eval_slow(ExprState *state, ExprContext *econtext, bool *isNull)
{
	TieredExpr *te = (TieredExpr *) state->evalfunc_private;
	TieringQuery *query = te->query;

	if (te->mode == TIER_INTERPRETED && !query->failed)
	{
		account(query);
		if (query->resting)
			wake(query);
		te->evaluations++;
		te->seen++;
		query->evaluations++;
		jp_tier_rule_count(&query->rule, 1, &te->weight);
		if (query->rule.work <= query->rule.next_check)
			rest(query);
		else if (!query->rule.marked)
			begin_window(query, jp_tier_rule_mark(&query->rule));
		else
		{
			query->looked = true;
			if (round_pays(query))
				compile_round(query);
			else
				rest(query);
		}
	}
	else if (query->resting)
		wake(query);
	grant(query);

	if (te->mode == TIER_PENDING)
		return first_compiled_call(te, econtext, isNull);

	/* what ExecInterpExprStillValid does, without replacing evalfunc */
	if (!te->checked)
	{
		CheckExprStillValid(state, econtext);
		te->checked = true;
	}
	return te->interp_func(state, econtext, isNull);
}

/*
 * An interpreted evaluation within the expression's budget: one decrement,
 * then the interpreter by a tail call; the evaluations are added to the
 * query's work when tiered_eval_slow accounts them.  Kept this small because
 * an expression that never switches pays it at every evaluation
 * (bench/tiering_wrapper.sh).
 */
static Datum
tiered_eval(ExprState *state, ExprContext *econtext, bool *isNull)
{
	TieredExpr *te = (TieredExpr *) state->evalfunc_private;

	if (likely(--te->budget >= 0))
		return te->interp_func(state, econtext, isNull);
	return tiered_eval_slow(state, econtext, isNull);
}
