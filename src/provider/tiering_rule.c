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
 * otherwise as long as the work done since the last round (rent-or-buy:
 * plan estimates are not used).  The work done is the steps counted,
 * bounded by the CPU time spent.  The level is the one with the largest
 * predicted net saving that the plan's jitFlags allow (tiering_plan.c
 * allows every level whose threshold is not -1).  Constants are measured by
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
#include "provider/tiering_rule.h"

/* GUCs */
int			jitprof_tiering_threshold = -1;
double		jitprof_tiering_min_cost = 1000.0;

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
 * The means over PostgreSQL 15, 17 and 18 (LLVM 14, 19, 21), measured on a
 * quiet machine; the platforms differ by less than 1.5 times in compile
 * costs, and a loaded machine's wall-clock compile times by 4 times more.
 */
#define INTERPRETED_NS_PER_STEP		2.4

static const TierLevelCost level_costs[] = {
	{"jit", 0, 1060000.0, 154000.0, 28000.0, 1.53},
	{"jit+opt", PGJIT_OPT3, 1960000.0, 1380000.0, 253000.0, 1.2},
	{"all", PGJIT_OPT3 | PGJIT_INLINE, 6280000.0, 1690000.0, 454000.0, 0.69},
};

#define NLEVELS lengthof(level_costs)

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

/* the steps after which the cheapest level pays for PENDING */
static uint64
break_even(const JpTierPending *p)
{
	double		best = -1;

	for (int l = 0; l < NLEVELS; l++)
	{
		double		s = saving_ns_per_step(&level_costs[l]);
		double		steps;

		if (s <= 0)
			continue;
		steps = compile_ns(&level_costs[l], p) / s;
		if (best < 0 || steps < best)
			best = steps;
	}
	if (best < 0 || best >= (double) PG_UINT64_MAX / 2)
		return PG_UINT64_MAX / 2;
	return (uint64) ceil(best);
}

/* the first check: no round can pay before one function of one step would */
static uint64
first_check(void)
{
	JpTierPending one = {1, 1, 1};

	return break_even(&one);
}

/*
 * This thread's CPU time in ns, or -1 when the clock cannot be read.  A
 * system call, so the rule reads it only when a query starts and at its
 * checks, a handful of times per query.
 */
static int64
thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return -1;
	return (int64) ts.tv_sec * INT64CONST(1000000000) + ts.tv_nsec;
}

/*
 * The work since the last round that a round can save on: the steps
 * counted, but no more than the CPU time spent since then would hold at
 * the interpreter's measured speed.  Steps are weighted alike, and a column
 * fetch costs a fraction of the int4pl call the speed was measured on, so
 * a short query of cheap steps would otherwise look many times longer
 * than it ran; its expressions cannot have taken more than its CPU time.
 */
static double
effective_work(const JpTierRule *rule)
{
	int64		now = thread_cpu_ns();
	double		cpu_steps;

	if (now < 0 || rule->cpu_mark_ns < 0)
		return (double) rule->work;
	cpu_steps = (double) (now - rule->cpu_mark_ns) / INTERPRETED_NS_PER_STEP;
	return Min((double) rule->work, Max(cpu_steps, 0.0));
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
	rule->next_check = first_check();
	rule->cpu_mark_ns = thread_cpu_ns();
	jp_tier_progress_init(&rule->progress, estate->es_plannedstmt);
}

/* what one interpreted evaluation of STATE adds to the query's work */
uint64
jp_tier_rule_weight(const JpTierRule *rule, ExprState *state)
{
	return rule->forced ? 1 : (uint64) Max(state->steps_len, 1);
}

/* Add STATE, an expression that has run, to what a round would compile. */
void
jp_tier_rule_add(JpTierPending *pending, ExprState *state)
{
	pending->expressions++;
	pending->functions++;
	pending->steps += state->steps_len;
	for (int i = 0; i < state->steps_len; i++)
	{
		ExprEvalOp	op = ExecEvalStepOp(state, &state->steps[i]);

		/* llvmjit compiles a deform function for each of these it can */
		if (op == EEOP_INNER_FETCHSOME || op == EEOP_OUTER_FETCHSOME ||
			op == EEOP_SCAN_FETCHSOME)
			pending->functions++;
	}
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
	double		done;
	double		remaining;
	int			best = -1;
	double		best_net = 0;
	int			allowed = estate->es_jit_flags & (PGJIT_OPT3 | PGJIT_INLINE);

	if (rule->forced)
	{
		rule->work = 0;
		rule->rounds++;
		return true;
	}
	if (pending->expressions == 0)
	{
		rule->next_check = rule->work + break_even(pending);
		return false;
	}
	done = effective_work(rule);
	/* the rest of the query: from scan progress, else as much again */
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
		net = remaining * saving_ns_per_step(c) - compile_ns(c, pending);
		if (net >= 0 && (best < 0 || net > best_net))
		{
			best = l;
			best_net = net;
		}
	}

	if (best < 0)
	{
		/* steps counted per step of CPU time, assumed to stay as measured */
		double		overcount = done >= 1 ?
		Max((double) rule->work / done, 1.0) : 2.0;
		double		next = (double) break_even(pending) * overcount;

		/*
		 * A scan's progress may predict less than the work done, and then the
		 * break-even can lie behind us: look again only after as much work as
		 * the first check, not at every evaluation.
		 */
		if (rule->progress.predicted)
			next = Max(next, (double) (rule->work + first_check()));

		rule->next_check = next >= (double) (PG_UINT64_MAX / 2) ?
			PG_UINT64_MAX / 2 : Max((uint64) next, rule->work + 1);
		return false;
	}

	if (estate->es_jit == NULL)
		estate->es_jit_flags = (estate->es_jit_flags & ~(PGJIT_OPT3 | PGJIT_INLINE)) |
			level_costs[best].flags;
	ereport(DEBUG1,
			(errmsg_internal("jitprof tiering rule: %llu steps interpreted (%.0f by CPU time), %.0f predicted to remain (%s), compiling %d functions of %d steps pays at level %s",
							 (unsigned long long) rule->work, done, remaining,
							 jp_tier_progress_describe(&rule->progress),
							 pending->functions, pending->steps,
							 level_costs[best].name)));
	jp_tier_progress_round(&rule->progress);
	rule->work = 0;
	rule->rounds++;
	rule->next_check = first_check();
	rule->cpu_mark_ns = thread_cpu_ns();
	return true;
}
