/*-------------------------------------------------------------------------
 *
 * tiering_progress.h
 *	  Scan progress for tiering's rule (tiering_progress.c): the rest of a
 *	  query predicted from the blocks its driving sequential scan has read.
 *	  Used by tiering_rule.c and tiering.c only, inside the provider folder.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/tiering_progress.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_TIERING_PROGRESS_H
#define JITPROF_TIERING_PROGRESS_H

#include "nodes/execnodes.h"
#include "nodes/plannodes.h"

/* the deepest driving scan followed, counted in plan nodes from the top */
#define JP_TIER_PATH_MAX	16

/* one query's driving scan and the mark its progress is measured from */
typedef struct JpTierProgress
{
	bool		has_scan;		/* the plan has a driving SeqScan */
	bool		scan_first;		/* nothing on its path runs before it */
	int			scan_node;		/* its plan_node_id */
	int			npath;
	int			path[JP_TIER_PATH_MAX]; /* plan_node_ids, top to scan */
	PlanState  *from;			/* a node of the path with an expression */
	SeqScanState *scan;			/* found below FROM at the first check */
	bool		searched;
	bool		mark_valid;		/* mark_done and mark_fraction hold */
	double		mark_done;		/* the rule's work since its round, then */
	double		mark_fraction;	/* of the scan's blocks read, then */
	double		fraction;		/* at the last prediction, or -1 */
	BlockNumber blocks;			/* the scan's, then */
	bool		predicted;		/* the last prediction used the scan */
} JpTierProgress;

extern void jp_tier_progress_init(JpTierProgress *p, PlannedStmt *pstmt);
extern void jp_tier_progress_note(JpTierProgress *p, ExprState *state);
extern double jp_tier_progress_predict(JpTierProgress *p, double done);
extern void jp_tier_progress_round(JpTierProgress *p);
extern bool jp_tier_progress_tracking(const JpTierProgress *p);
extern const char *jp_tier_progress_describe(const JpTierProgress *p);

#endif							/* JITPROF_TIERING_PROGRESS_H */
