/*-------------------------------------------------------------------------
 *
 * tiering_rule.c
 *	  Tiering's decision rule: which queries are tiered, when compiling the
 *	  expressions that have run pays for the rest of the query, and at which
 *	  optimisation level.
 *
 * Contract: in units of interpreted expression steps, a round pays when
 * the rest of the query would save at least what compiling costs.  The rest
 * is predicted from the progress of the scan that drives the query, when
 * there is one that nothing can stop early (tiering_progress.c), and is
 * otherwise as much as the work done since the last round (rent-or-buy:
 * plan estimates are not used).  The work done is the steps counted, each
 * weighted by its kind's measured interpreted cost, and what compiled code
 * saves on it by its kind's measured saving (an expression's weights are
 * computed once, when it is set up); both are bounded by the CPU time
 * spent.  The level is the one with the largest predicted net saving that
 * the plan's jitFlags allow (tiering_plan.c).  Constants are measured by
 * bench/tiering_calibrate.sh.  The rule and its figures: doc/tiering.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/tiering_rule.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>
#include <time.h>

#include "executor/execExpr.h"
#include "jit/jit.h"
#include "utils/guc.h"

#include "advisor/advisor.h"
#include "core/core.h"
#include "provider/tiering_rule.h"

/* GUCs */
int			jitprof_tiering_threshold = -1;
double		jitprof_tiering_min_cost = 1000.0;

/* Query IDs of statements under the floor that ran long, by ID's slot */
static int64 remembered_ids[JP_TIER_REMEMBER_SLOTS];

static inline int64 *
remembered_slot(int64 queryid)
{
	return &remembered_ids[(uint64) queryid % JP_TIER_REMEMBER_SLOTS];
}

/* query ID 0 (none computed) is never remembered */
JpTierRemembered
jp_tier_rule_remember(int64 queryid)
{
	int64	   *slot = remembered_slot(queryid);
	bool		replacing = *slot != 0;

	if (queryid == 0 || *slot == queryid)
		return JP_TIER_ALREADY_REMEMBERED;
	*slot = queryid;
	return replacing ? JP_TIER_REMEMBERED_REPLACING : JP_TIER_REMEMBERED;
}

/* did this query run long under the floor before? */
bool
jp_tier_rule_remembered(int64 queryid)
{
	return queryid != 0 && *remembered_slot(queryid) == queryid;
}

/*
 * The measured costs of one optimisation level (bench/tiering_calibrate.sh,
 * doc/tiering.md): compiling, in ns, and running one step of compiled
 * code; the interpreter's ns per step is INTERPRETED_NS_PER_STEP.
 */
typedef struct TierLevelCost
{
	const char *name;
	int			flags;			/* PGJIT_OPT3 and PGJIT_INLINE bits */
	double		module_ns;		/* per round (one module emitted) */
	double		function_ns;	/* per function */
	double		step_ns;		/* per step compiled */
	double		run_ns_per_step;	/* the compiled code, per step run */
} TierLevelCost;

/*
 * Compile costs per function and per step, and run costs per step: the
 * means over PostgreSQL 15, 17 and 18 (LLVM 14, 19, 21) of
 * bench/tiering_calibrate.sh on int4pl expressions, quiet machine; the
 * platforms differ by less than 1.5 times.  The optimised levels' module
 * costs, and the `jit` level's run cost, are bench/tiering_levels.sh's on
 * the TPC-H-style queries (lineitem x 20, 2026-12-06): an optimised round
 * costs 20 to 80 ms more than int4pl's constants say (inlining numeric
 * functions, optimising wide deform functions), and unoptimised code ran no
 * faster than the interpreter there (0.90 to 1.37 of it), so the rule never
 * picks `jit`.
 */
#define INTERPRETED_NS_PER_STEP		2.4

static const TierLevelCost level_costs[] = {
	{"jit", 0, 1060000.0, 154000.0, 28000.0, INTERPRETED_NS_PER_STEP},
	{"jit+opt", PGJIT_OPT3, 25000000.0, 1380000.0, 253000.0, 1.2},
	{"all", PGJIT_OPT3 | PGJIT_INLINE, 80000000.0, 1690000.0, 454000.0, 0.69},
};

/*
 * The rule's first look at a query, and the spacing of its looks while the
 * driving scan's progress is read: 3 ms of interpreted work
 */
#define CHECK_EVERY_NS	3000000.0
/* the CPU mark is taken at this fraction of the first check's work */
#define MARK_AFTER		16

#define NLEVELS lengthof(level_costs)

/*
 * One step of a kind, over the average step of an int4pl expression
 * (JP_TIER_WEIGHT_ONE): what it costs the interpreter (work), and what the
 * unoptimised compiled code saves on it (gain), from
 * bench/tiering_calibrate.sh's "per kind" table, two runs on the loaded
 * host (bench/results/2026-12-06-step-weights.md, doc/tiering.md):
 *
 * - fetch: column fetches and assignments, constants, parameters, jumps
 *   (coalesce's terms: 0.33 to 0.36 of an int4pl step interpreted); the
 *   compiled code saves about as much on one as on an int4pl step;
 * - test: NULL tests, qual, boolean and strict-input checks (the NULL
 *   tests' terms: 0.39 to 0.41); unoptimised, llvmjit's code for them ran
 *   slower than the interpreter in both runs, so they save nothing;
 * - call: a function call through fmgr, what is left of an int4pl term
 *   (a fetch and a call) after its fetch;
 * - trans: an aggregate's transition (sum's terms, a fetch and a
 *   transition: 1.58 to 1.65 a step), whose compiled code ran no faster.
 *
 * A kind not measured (deforming, SubPlans, row and array steps, the last
 * step) counts as one step, work and gain, as every step did before.
 */
typedef struct StepWeight
{
	int			work;
	int			gain;
} StepWeight;

static const StepWeight weight_fetch = {24, 64};
static const StepWeight weight_test = {28, 0};
static const StepWeight weight_call = {104, 64};
static const StepWeight weight_trans = {182, 0};
static const StepWeight weight_other = {JP_TIER_WEIGHT_ONE, JP_TIER_WEIGHT_ONE};

void
jp_tier_rule_define_gucs(void)
{
	DefineCustomIntVariable("jitprof.tiering_threshold",
							"Forces tiering to compile after this many interpreted expression evaluations of a query, instead of the rule.",
							"-1 lets the rule decide from measured work (doc/tiering.md); 0 compiles at the first evaluation.  For tests.",
							&jitprof_tiering_threshold,
							-1,
							-1,
							INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomRealVariable("jitprof.tiering_min_cost",
							 "Sets the plan cost below which tiering leaves a query interpreted without counting.",
							 NULL,
							 &jitprof_tiering_min_cost,
							 1000.0,
							 0.0,
							 DBL_MAX,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

static const StepWeight *
step_weight(ExprEvalOp op)
{
	switch (op)
	{
		case EEOP_INNER_VAR:
		case EEOP_OUTER_VAR:
		case EEOP_SCAN_VAR:
		case EEOP_ASSIGN_INNER_VAR:
		case EEOP_ASSIGN_OUTER_VAR:
		case EEOP_ASSIGN_SCAN_VAR:
		case EEOP_ASSIGN_TMP:
		case EEOP_CONST:
		case EEOP_PARAM_EXEC:
		case EEOP_PARAM_EXTERN:
		case EEOP_CASE_TESTVAL:
		case EEOP_JUMP:
		case EEOP_JUMP_IF_NULL:
		case EEOP_JUMP_IF_NOT_NULL:
		case EEOP_JUMP_IF_NOT_TRUE:
			return &weight_fetch;
		case EEOP_BOOL_AND_STEP_FIRST:
		case EEOP_BOOL_AND_STEP:
		case EEOP_BOOL_AND_STEP_LAST:
		case EEOP_BOOL_OR_STEP_FIRST:
		case EEOP_BOOL_OR_STEP:
		case EEOP_BOOL_OR_STEP_LAST:
		case EEOP_BOOL_NOT_STEP:
		case EEOP_QUAL:
		case EEOP_NULLTEST_ISNULL:
		case EEOP_NULLTEST_ISNOTNULL:
		case EEOP_BOOLTEST_IS_TRUE:
		case EEOP_BOOLTEST_IS_NOT_TRUE:
		case EEOP_BOOLTEST_IS_FALSE:
		case EEOP_BOOLTEST_IS_NOT_FALSE:
		case EEOP_AGG_STRICT_INPUT_CHECK_ARGS:
		case EEOP_AGG_PLAIN_PERGROUP_NULLCHECK:
			return &weight_test;
		case EEOP_FUNCEXPR:
		case EEOP_FUNCEXPR_STRICT:
		case EEOP_FUNCEXPR_FUSAGE:
		case EEOP_FUNCEXPR_STRICT_FUSAGE:
			return &weight_call;
		case EEOP_AGG_PLAIN_TRANS_INIT_STRICT_BYVAL:
		case EEOP_AGG_PLAIN_TRANS_STRICT_BYVAL:
		case EEOP_AGG_PLAIN_TRANS_BYVAL:
		case EEOP_AGG_PLAIN_TRANS_INIT_STRICT_BYREF:
		case EEOP_AGG_PLAIN_TRANS_STRICT_BYREF:
		case EEOP_AGG_PLAIN_TRANS_BYREF:
			return &weight_trans;
		default:
			/* 18's strict calls of one and two arguments */
			if (JP_EEOP_IS_STRICT_CALL_N(op))
				return &weight_call;
			return &weight_other;
	}
}

/* work, in weighted units, as steps of an int4pl expression */
static inline double
as_steps(double work)
{
	return work / JP_TIER_WEIGHT_ONE;
}

static double
compile_ns(const TierLevelCost *c, const JpTierPending *p)
{
	return c->module_ns + c->function_ns * p->functions + c->step_ns * p->steps;
}

static double
saving_ns_per_step(const TierLevelCost *c)
{
	return INTERPRETED_NS_PER_STEP - c->run_ns_per_step;
}

/*
 * The gain (weighted, in 1/JP_TIER_WEIGHT_ONE steps) after which the
 * cheapest level pays for PENDING
 */
static uint64
break_even(const JpTierPending *p)
{
	double		best = -1;

	for (int l = 0; l < NLEVELS; l++)
	{
		double		s = saving_ns_per_step(&level_costs[l]);
		double		work;

		if (s <= 0)
			continue;
		work = compile_ns(&level_costs[l], p) / s * JP_TIER_WEIGHT_ONE;
		if (best < 0 || work < best)
			best = work;
	}
	if (best < 0 || best >= (double) PG_UINT64_MAX / 2)
		return PG_UINT64_MAX / 2;
	return (uint64) ceil(best);
}

/* the work, weighted, that the interpreter does in NS of CPU time */
uint64
jp_tier_rule_work_of_ns(double ns)
{
	return (uint64) (Max(ns, 0.0) / INTERPRETED_NS_PER_STEP *
					 JP_TIER_WEIGHT_ONE);
}

/* the work, weighted, of the rule's first check and of its spacing */
static uint64
first_check(void)
{
	return (uint64) (CHECK_EVERY_NS / INTERPRETED_NS_PER_STEP *
					 JP_TIER_WEIGHT_ONE);
}

/*
 * This thread's CPU time in ns, or -1 when the clock cannot be read.  A
 * system call, so the rule reads it only when a query starts and at its
 * checks, and tiering when a query rests and wakes (tiering.c).
 */
int64
jp_tier_rule_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	return (int64) ts.tv_sec * INT64CONST(1000000000) + ts.tv_nsec;
}

/*
 * The share of the work counted since the last round that the CPU time
 * spent since then can hold, at the interpreter's measured speed: 1 or
 * less.  Weights make cheap steps count for what they cost; the bound
 * covers what they miss (a kind not measured, a slower function): a
 * query's expressions cannot have taken more than its CPU time.
 */
static double
cpu_share(const JpTierRule *rule)
{
	int64		now = jp_tier_rule_cpu_ns();
	double		cpu_work;

	if (now < 0 || rule->cpu_mark_ns < 0 || rule->work <= rule->work_at_mark)
		return 1.0;
	cpu_work = (double) (now - rule->cpu_mark_ns) / INTERPRETED_NS_PER_STEP *
		JP_TIER_WEIGHT_ONE;
	return Min(Max(cpu_work, 0.0) / (double) (rule->work - rule->work_at_mark),
			   1.0);
}

/*
 * Set up the rule for a query that passed the floor.  A query the advisor
 * has judged "jit loses" is not tiered, unless the advisor itself runs it at
 * the tiered level (to measure it); a forced switch point
 * (jitprof.tiering_threshold) overrides both.
 */
void
jp_tier_rule_init(JpTierRule *rule, EState *estate)
{
	memset(rule, 0, sizeof(*rule));
	rule->admitted = true;
	rule->cpu_mark_ns = -1;
	rule->marked = true;
	if (jitprof_tiering_threshold >= 0)
	{
		rule->forced = true;
		rule->next_check = (uint64) jitprof_tiering_threshold;
		return;
	}
	if (jp_advisor_tiering(estate) != JP_ADVISED_TIERED &&
		jp_advisor_jit_loses((int64) estate->es_plannedstmt->queryId))
	{
		rule->admitted = false;
		return;
	}
	/* the CPU clock is read once the query has done some work (the mark) */
	rule->marked = false;
	rule->next_check = first_check() / MARK_AFTER;
	jp_tier_progress_init(&rule->progress, estate->es_plannedstmt);
}

/*
 * The query's work passed next_check before the rule read the CPU clock:
 * read it now, and put the next check where the first one belongs.
 * Reading the clock is a system call (about 1.3 us on this project's
 * host), which a statement that does less than a sixteenth of the first
 * check's work is spared; the CPU bound at the check then covers the work
 * done since the mark.  Returns the time read, -1 if it could not be.
 */
int64
jp_tier_rule_mark(JpTierRule *rule)
{
	rule->marked = true;
	rule->cpu_mark_ns = jp_tier_rule_cpu_ns();
	rule->work_at_mark = rule->work;
	rule->next_check = first_check();
	return rule->cpu_mark_ns;
}

/*
 * What one interpreted evaluation of STATE adds to the query's work and
 * gain: its steps, weighted by kind (evaluations, when forced); and the
 * functions a round would compile for it.  Computed once, when the
 * expression is set up, before the interpreter replaces the opcodes with
 * addresses (direct threading), which ExecEvalStepOp would have to search
 * back; ExecEvalStepOp reads either.
 */
void
jp_tier_rule_weigh(const JpTierRule *rule, ExprState *state,
				   JpTierWeight *weight)
{
	weight->steps = state->steps_len;
	weight->functions = 1;
	weight->work = weight->gain = 0;
	for (int i = 0; i < state->steps_len; i++)
	{
		ExprEvalOp	op = ExecEvalStepOp(state, &state->steps[i]);
		const StepWeight *w = step_weight(op);

		/* llvmjit compiles a deform function for each of these it can */
		if (op == EEOP_INNER_FETCHSOME || op == EEOP_OUTER_FETCHSOME ||
			op == EEOP_SCAN_FETCHSOME)
			weight->functions++;
		if (!rule->forced)
		{
			weight->work += w->work;
			weight->gain += w->gain;
		}
	}
	weight->work = Max(weight->work, 1);
	weight->gain = Max(weight->gain, 1);
}

/*
 * Add an expression that has run and weighs WEIGHT to what a round would
 * compile.
 */
void
jp_tier_rule_add(JpTierPending *pending, const JpTierWeight *weight)
{
	pending->expressions++;
	pending->functions += weight->functions;
	pending->steps += weight->steps;
	pending->weighted += weight->work;
	pending->gain += weight->gain;
}

/*
 * The query's work has passed next_check: does a round that compiles
 * PENDING pay now?  If so, choose the level for the first round, and start
 * counting the next round's work; if not, set the next check.
 */
bool
jp_tier_rule_pays(JpTierRule *rule, const JpTierPending *pending,
				  EState *estate)
{
	double		share;
	double		done;
	double		remaining;
	int			best = -1;
	double		best_net = 0;
	int			allowed = estate->es_jit_flags & (PGJIT_OPT3 | PGJIT_INLINE);

	if (rule->forced)
	{
		rule->work = 0;
		rule->steps = 0;
		rule->gain = 0;
		rule->rounds++;
		return true;
	}
	if (pending->expressions == 0)
	{
		rule->next_check = rule->work + break_even(pending);
		return false;
	}
	/* the gain since the last round, no more than the CPU time holds */
	share = cpu_share(rule);
	done = (double) rule->gain * share;
	/* the rest of the query's: from scan progress, else as much again */
	remaining = jp_tier_progress_predict(&rule->progress, done);

	for (int l = 0; l < NLEVELS; l++)
	{
		const TierLevelCost *c = &level_costs[l];
		double		net;

		if ((c->flags & ~allowed) != 0)
			continue;
		/* a later round's module is emitted at the first round's level */
		if (estate->es_jit != NULL &&
			c->flags != (estate->es_jit->flags & (PGJIT_OPT3 | PGJIT_INLINE)))
			continue;
		net = as_steps(remaining) * saving_ns_per_step(c) -
			compile_ns(c, pending);
		if (net >= 0 && (best < 0 || net > best_net))
		{
			best = l;
			best_net = net;
		}
	}

	if (best < 0)
	{
		double		next;

		if (jp_tier_progress_tracking(&rule->progress))
		{
			/*
			 * A scan whose progress is read predicts anew as it goes (and may
			 * predict less than the work done, putting the break-even behind
			 * us): look again after as much work as the first check.
			 */
			next = (double) (rule->work + first_check());
		}
		else
		{
			/*
			 * The work at which the gain will pass the break-even, with work
			 * and gain per unit of CPU time assumed to stay as measured
			 */
			double		per_gain = rule->gain > 0 ?
			(double) rule->work / (double) rule->gain :
			(double) pending->weighted / (double) Max(pending->gain, 1);

			next = (double) break_even(pending) * per_gain / Max(share, 0.01);
		}

		rule->next_check = next >= (double) (PG_UINT64_MAX / 2) ?
			PG_UINT64_MAX / 2 : Max((uint64) next, rule->work + 1);
		return false;
	}

	if (estate->es_jit == NULL)
		estate->es_jit_flags = (estate->es_jit_flags & ~(PGJIT_OPT3 | PGJIT_INLINE)) |
			level_costs[best].flags;
	ereport(DEBUG1,
			(errmsg_internal("jitprof tiering rule: %llu steps interpreted, weighing %.0f (%.0f by CPU time), gain %.0f, %.0f predicted to remain (%s), compiling %d functions of %d steps weighing %.0f pays at level %s",
							 (unsigned long long) rule->steps,
							 as_steps((double) rule->work),
							 as_steps((double) rule->work * share),
							 as_steps(done), as_steps(remaining),
							 jp_tier_progress_describe(&rule->progress),
							 pending->functions, pending->steps,
							 as_steps((double) pending->weighted),
							 level_costs[best].name)));
	jp_tier_progress_round(&rule->progress);
	rule->work = 0;
	rule->steps = 0;
	rule->gain = 0;
	rule->rounds++;
	rule->next_check = first_check();
	rule->cpu_mark_ns = jp_tier_rule_cpu_ns();
	rule->work_at_mark = 0;
	return true;
}
