/*-------------------------------------------------------------------------
 *
 * tiering_rule.h
 *	  Tiering's decision rule (tiering_rule.c): which queries are tiered,
 *	  when a round of compiling pays, and at which optimisation level.
 *	  Used by tiering.c and tiering_plan.c only, inside the provider folder.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/tiering_rule.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_TIERING_RULE_H
#define JITPROF_TIERING_RULE_H

#include "nodes/execnodes.h"

#include "provider/tiering_progress.h"

/* one query's state of the rule, in tiering.c's per-query struct */
typedef struct JpTierRule
{
	bool		forced;			/* jitprof.tiering_threshold >= 0 */
	bool		admitted;		/* false: the query is not tiered */
	uint64		work;			/* since the last round: weighted steps (in
								 * 1/JP_TIER_WEIGHT_ONE), or evaluations when
								 * forced */
	uint64		steps;			/* since the last round: steps, unweighted */
	uint64		gain;			/* since the last round: what compiled code
								 * would have saved, weighted as work */
	uint64		next_check;		/* look at the rule when work passes it */
	int			rounds;			/* rounds the rule decided */
	bool		marked;			/* cpu_mark_ns was read (or is not needed) */
	int64		cpu_mark_ns;	/* the backend's CPU time when work was
								 * work_at_mark; -1 before */
	uint64		work_at_mark;
	JpTierProgress progress;	/* the driving scan (tiering_progress.c) */
} JpTierRule;

/* what a round would compile: the expressions that have run */
typedef struct JpTierPending
{
	int			expressions;
	int			functions;		/* expression and deform functions */
	int			steps;
	uint64		weighted;		/* their steps, weighted as work */
	uint64		gain;			/* and as gain */
} JpTierPending;

/*
 * Weights are fixed-point: JP_TIER_WEIGHT_ONE is the average step of an
 * int4pl expression (a column fetch and an int4pl call per term), the kind
 * of step the rule's constants were measured on: for work, its interpreted
 * cost; for gain, what compiled code saves on it.
 */
#define JP_TIER_WEIGHT_ONE	64

/* one interpreted evaluation of an expression, weighed once at set-up */
typedef struct JpTierWeight
{
	uint64		work;			/* interpreted cost of its steps */
	uint64		gain;			/* what compiled code saves on them */
	int			steps;			/* unweighted */
	int			functions;		/* a round compiles: 1 + its deform steps */
} JpTierWeight;

extern int	jitprof_tiering_threshold;
extern double jitprof_tiering_min_cost;
extern void jp_tier_rule_define_gucs(void);

/*
 * Query IDs of statements under the floor that ran long (tiering_plan.c
 * times them): JP_TIER_REMEMBER_SLOTS, one slot per ID, a newer ID
 * replacing an older one in its slot.
 */
#define JP_TIER_REMEMBER_SLOTS	64

typedef enum JpTierRemembered
{
	JP_TIER_ALREADY_REMEMBERED,
	JP_TIER_REMEMBERED,
	JP_TIER_REMEMBERED_REPLACING
}			JpTierRemembered;

extern JpTierRemembered jp_tier_rule_remember(int64 queryid);
extern bool jp_tier_rule_remembered(int64 queryid);

/* priced under the floor, with no forced switch point (which tiers all) */
static inline bool
jp_tier_rule_priced_under_floor(const PlannedStmt *pstmt)
{
	return jitprof_tiering_threshold < 0 &&
		pstmt->planTree->total_cost < jitprof_tiering_min_cost;
}

/*
 * Is this plan cheap enough not to be tiered at all?  One comparison for a
 * plan above the floor.
 */
static inline bool
jp_tier_rule_below_floor(const PlannedStmt *pstmt)
{
	return jp_tier_rule_priced_under_floor(pstmt) &&
		!jp_tier_rule_remembered(pstmt->queryId);
}

extern int64 jp_tier_rule_cpu_ns(void);
extern uint64 jp_tier_rule_work_of_ns(double ns);
extern void jp_tier_rule_init(JpTierRule *rule, EState *estate);
extern int64 jp_tier_rule_mark(JpTierRule *rule);
extern void jp_tier_rule_weigh(const JpTierRule *rule, ExprState *state,
							   JpTierWeight *weight);
extern void jp_tier_rule_add(JpTierPending *pending,
							 const JpTierWeight *weight);
extern bool jp_tier_rule_pays(JpTierRule *rule, const JpTierPending *pending,
							  EState *estate);

/*
 * EVALUATIONS interpreted evaluations of an expression that weighs WEIGHT:
 * the query's work.  Called when budgets are accounted, never per
 * evaluation.
 */
static inline void
jp_tier_rule_count(JpTierRule *rule, uint64 evaluations,
				   const JpTierWeight *weight)
{
	rule->work += evaluations * weight->work;
	rule->gain += evaluations * weight->gain;
	rule->steps += evaluations * (uint64) weight->steps;
}

#endif							/* JITPROF_TIERING_RULE_H */
