/*-------------------------------------------------------------------------
 *
 * tiering_plan.c
 *	  Which plans tiered JIT takes, decided at ExecutorStart: with
 *	  jitprof.tiering on, a plan above tiering's floor cost is tiered even
 *	  when jit_above_cost kept PostgreSQL from compiling it, and a plan below
 *	  the floor runs as with jit = off, unless its query ran long before
 *	  (then it is tiered too).  A tiered plan may be compiled at every level
 *	  whose threshold is not -1, whatever its cost: the rule chooses the
 *	  level from the work the query does.
 *
 * Contract: the executor gets a copy of the PlannedStmt with other jitFlags
 * (core/plan_copy.c); the plan itself (a cached plan's
 * too) is never written.  A session's jit = off, jit_above_cost = -1, a
 * provider other than jitprof, parallel workers (their flags are their
 * leader's) and queries the JIT advisor follows are left as they are: the
 * advisor runs those at its own levels, tiered among them, from what
 * jp_tiering_offer tells it.  A top-level statement under the floor that
 * ran long, by the sampler's count of its CPU time, is remembered by query
 * ID in a table of JP_TIER_REMEMBER_SLOTS, one slot per ID (a newer ID
 * replaces an older one in its slot, counted): its plans are tiered from
 * then on in this backend.  The long story: doc/tiering.md, "Which plans
 * are tiered".
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/tiering_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "jit/jit.h"

#include "advisor/advisor.h"
#include "provider/provider.h"
#include "provider/tiering_rule.h"

static JpTieringPlanCounters plan_counters;
static bool warned = false;

/* CPU time after which a statement under the floor is remembered */
#define REMEMBER_AFTER_MS	20

/* the top-level statement under the floor being timed, and its start */
static QueryDesc *timed_query = NULL;
static uint32 timed_from;

/* Will this backend's JIT go through jitprof, once it is loaded? */
static bool
jitprof_is_provider(void)
{
	return jp_provider_active() ||
		(jit_provider != NULL && strcmp(jit_provider, "jitprof") == 0);
}

/*
 * The optimisation levels tiering's rule may choose among: with the rule
 * deciding, every level whose threshold is not disabled (-1), whatever the
 * plan's cost, as the rule chooses from the work the query does; with a
 * forced switch point (tests), those the planner gives a plan of COST.
 */
static int
level_flags(Cost cost)
{
	int			flags = 0;
	bool		by_work = jitprof_tiering_threshold < 0;

	if (jit_optimize_above_cost >= 0 &&
		(by_work || cost > jit_optimize_above_cost))
		flags |= PGJIT_OPT3;
	if (jit_inline_above_cost >= 0 &&
		(by_work || cost > jit_inline_above_cost))
		flags |= PGJIT_INLINE;
	return flags;
}

/* the jitFlags a plan of this cost gets when tiering promotes it */
static int
flags_for_tiering(Cost cost)
{
	int			flags = PGJIT_PERFORM | level_flags(cost);

	if (jit_expressions)
		flags |= PGJIT_EXPR;
	if (jit_tuple_deforming)
		flags |= PGJIT_DEFORM;
	return flags;
}

/* hand the executor a copy of its plan with FLAGS; false if out of memory */
static bool
run_with_flags(QueryDesc *queryDesc, int flags)
{
	if (jp_plan_with_jit_flags(queryDesc, flags))
		return true;
	if (!warned)
	{
		warned = true;
		ereport(WARNING,
				(errmsg("jitprof tiering could not copy a plan to change its JIT flags"),
				 errdetail("The query ran with the JIT decision PostgreSQL made.  This backend reports no further failure of this kind.")));
	}
	return false;
}

/*
 * ExecutorStart, before the next hook.  With jitprof.tiering on, the plan
 * PostgreSQL did not JIT that is above the floor is tiered; the plan it did
 * JIT that is below the floor runs interpreted, at jit = off's cost.
 */
void
jp_tiering_plan(QueryDesc *queryDesc, int eflags, bool toplevel)
{
	PlannedStmt *pstmt;
	Cost		cost;
	bool		above_floor;
	bool		by_history;

	if (likely(!jitprof_tiering))
		return;
	if (toplevel)
		timed_query = NULL;
	pstmt = queryDesc->plannedstmt;
	cost = pstmt->planTree->total_cost;
	above_floor = !jp_tier_rule_priced_under_floor(pstmt);
	by_history = !above_floor && jp_tier_rule_remembered(pstmt->queryId);
	above_floor |= by_history;

	/* most OLTP statements: not JIT-compiled, and under the floor */
	if ((pstmt->jitFlags & PGJIT_PERFORM) == 0 && !above_floor)
	{
		/* time it, to remember it if it runs long (jp_tiering_plan_end) */
		if (toplevel && pstmt->queryId != 0 && jit_enabled)
		{
			timed_query = queryDesc;
			timed_from = jp_sampler_ticks();
		}
		return;
	}
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 || !jit_enabled ||
		IsParallelWorker() || queryDesc == jp_advisor_open_query)
		return;

	if ((pstmt->jitFlags & PGJIT_PERFORM) == 0)
	{
		if (jit_above_cost >= 0 && jit_expressions && jitprof_is_provider() &&
			run_with_flags(queryDesc, flags_for_tiering(cost)))
		{
			plan_counters.promoted++;
			if (by_history)
				plan_counters.by_history++;
		}
	}
	else if (!above_floor)
	{
		if (run_with_flags(queryDesc, PGJIT_NONE))
			plan_counters.below_floor++;
	}
	else if ((pstmt->jitFlags & PGJIT_EXPR) != 0 && jitprof_is_provider())
	{
		/* a plan PostgreSQL JITs: the rule chooses its level the same way */
		int			flags = pstmt->jitFlags | level_flags(cost);

		if (flags != pstmt->jitFlags)
			(void) run_with_flags(queryDesc, flags);
		if (by_history)
			plan_counters.by_history++;
	}
}

/*
 * ExecutorEnd, before the next hook: a top-level statement under the floor
 * that the sampler saw run for REMEMBER_AFTER_MS of CPU time or more is
 * remembered, so that its next plans are tiered.  The sampler counts only
 * once this backend has run a JIT statement (its timer starts then), and
 * not at all with jitprof.sample_rate = 0.
 */
void
jp_tiering_plan_end(QueryDesc *queryDesc)
{
	int			rate;
	uint32		ticks;

	if (likely(queryDesc != timed_query))
		return;
	timed_query = NULL;
	ticks = jp_sampler_ticks() - timed_from;
	if (ticks < 2)
		return;
	rate = jp_sampler_tick_rate();
	if (rate <= 0 || (uint64) ticks * 1000 < (uint64) rate * REMEMBER_AFTER_MS)
		return;
	switch (jp_tier_rule_remember(queryDesc->plannedstmt->queryId))
	{
		case JP_TIER_REMEMBERED_REPLACING:
			plan_counters.replaced++;
			/* FALLTHROUGH */
		case JP_TIER_REMEMBERED:
			plan_counters.remembered++;
			break;
		case JP_TIER_ALREADY_REMEMBERED:
			break;
	}
}

/*
 * For the JIT advisor, before it decides a query's level: would tiering
 * take this plan, and with which flags?  Called only for the plans in the
 * advisor's scope.  The conditions are jp_tiering_plan's, but that a plan
 * under the floor gets no tiered level (the advisor runs it at its level).
 */
void
jp_tiering_offer(QueryDesc *queryDesc, JpTieringOffer *offer)
{
	PlannedStmt *pstmt = queryDesc->plannedstmt;
	Cost		cost = pstmt->planTree->total_cost;

	memset(offer, 0, sizeof(*offer));
	if (!jitprof_tiering || !jit_enabled || !jitprof_is_provider())
		return;
	if (jitprof_tiering_threshold >= 0)
	{
		offer->forced = true;
		return;
	}
	if (cost < jitprof_tiering_min_cost)
		return;
	if ((pstmt->jitFlags & PGJIT_PERFORM) != 0)
	{
		offer->available = (pstmt->jitFlags & PGJIT_EXPR) != 0;
		offer->flags = pstmt->jitFlags | level_flags(cost);
	}
	else if (jit_above_cost >= 0 && jit_expressions)
	{
		offer->available = true;
		offer->flags = flags_for_tiering(cost);
	}
}

const JpTieringPlanCounters *
jp_tiering_plan_counters(void)
{
	return &plan_counters;
}
