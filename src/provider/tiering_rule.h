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
	uint64		work;			/* since the last round: steps, or evaluations
								 * when forced */
	uint64		next_check;		/* look at the rule when work passes it */
	int			rounds;			/* rounds the rule decided */
	int64		cpu_mark_ns;	/* the backend's CPU time when work was 0 */
	JpTierProgress progress;	/* the driving scan (tiering_progress.c) */
} JpTierRule;

/* what a round would compile: the expressions that have run */
typedef struct JpTierPending
{
	int			expressions;
	int			functions;		/* expression and deform functions */
	int			steps;
} JpTierPending;

extern int	jitprof_tiering_threshold;
extern double jitprof_tiering_min_cost;
extern void jp_tier_rule_define_gucs(void);

/* one comparison: is this plan cheap enough not to be tiered at all? */
static inline bool
jp_tier_rule_below_floor(EState *estate)
{
	return jitprof_tiering_threshold < 0 &&
		estate->es_plannedstmt->planTree->total_cost < jitprof_tiering_min_cost;
}

extern void jp_tier_rule_init(JpTierRule *rule, EState *estate);
extern uint64 jp_tier_rule_weight(const JpTierRule *rule, ExprState *state);
extern void jp_tier_rule_add(JpTierPending *pending, ExprState *state);
extern bool jp_tier_rule_pays(JpTierRule *rule, const JpTierPending *pending,
							  EState *estate);

#endif							/* JITPROF_TIERING_RULE_H */
