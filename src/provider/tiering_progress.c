/*-------------------------------------------------------------------------
 *
 * tiering_progress.c
 *	  Scan progress for tiering's rule: when one sequential heap scan drives
 *	  a query and nothing above it can stop it early, the rest of the query
 *	  is predicted from the share of the scan's blocks still to read,
 *	  instead of "as much again as since the last round".
 *
 * Contract: the driving scan is found once per query, from the plan's top
 * (es_plannedstmt->planTree), through nodes that read all of their input.
 * Any other node, a parallel-aware one, a leaf other than a SeqScan, or a
 * path with no node that reads all of its input before its first row (a
 * plain or hashed Agg, a Sort, a ModifyTable) between its lowest LIMIT and
 * the scan leaves the query to the rule's own prediction.  The scan's
 * executor node is found below the node of an expression tiering deferred
 * (PlanState has no parent pointer, and the EState no root), at the rule's
 * first check.  Only the scan descriptor's position is read; nothing is
 * written.  A prediction is made only from a mark taken when the scan had
 * passed its first block (or at the query's start, when nothing runs
 * before the scan), and at least 1% of its blocks since: the work done
 * before the scan began (a hash join's build, an initPlan) is not the
 * scan's.  doc/tiering.md, "Scan progress".
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/tiering_progress.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "nodes/nodeFuncs.h"
#include "utils/rel.h"

#include "provider/tiering_progress.h"

/* the least progress, as a share of the scan's blocks, to predict from */
#define MIN_PROGRESS	0.01

/*
 * Find the scan that drives PLAN: follow, from the top, the input that each
 * node reads to its end, and record the path.  False if the query has no
 * such scan.
 */
static bool
find_driving_scan(JpTierProgress *p, Plan *plan)
{
	bool		reads_all = false;	/* a node above reads all before a row */
	bool		scan_first = true;	/* nothing runs before the scan */

	p->npath = 0;
	while (plan != NULL && p->npath < JP_TIER_PATH_MAX)
	{
		Plan	   *next = outerPlan(plan);

		if (plan->parallel_aware)
			return false;
		if (plan->initPlan != NIL)
			scan_first = false;
		p->path[p->npath++] = plan->plan_node_id;

		switch (nodeTag(plan))
		{
			case T_SeqScan:
				if (!reads_all)
					return false;
				p->scan_node = plan->plan_node_id;
				p->scan_first = scan_first;
				p->mark_valid = scan_first;
				return true;
			case T_Agg:
				if (((Agg *) plan)->aggstrategy == AGG_PLAIN ||
					((Agg *) plan)->aggstrategy == AGG_HASHED)
					reads_all = true;
				break;
			case T_Sort:
			case T_ModifyTable:
				reads_all = true;
				break;
			case T_HashJoin:
				/* the outer side; the inner is hashed first */
				scan_first = false;
				break;
			case T_NestLoop:
			case T_Material:
			case T_Unique:
			case T_Result:
				break;
			case T_Limit:

				/*
				 * It may stop its input early: only a node below it that
				 * reads all of its own input first makes the scan's progress
				 * a prediction again (a Sort under a LIMIT).
				 */
				reads_all = false;
				break;
			case T_WindowAgg:
				/* a run condition may stop it before its input's end */
				if (((WindowAgg *) plan)->runCondition != NIL)
					return false;
				break;
			case T_SubqueryScan:
				next = ((SubqueryScan *) plan)->subplan;
				break;
			default:
				/* Merge Join, Append, Gather, and all the rest */
				return false;
		}
		plan = next;
	}
	return false;
}

/* Set up P for a query whose plan is PSTMT's. */
void
jp_tier_progress_init(JpTierProgress *p, PlannedStmt *pstmt)
{
	memset(p, 0, sizeof(*p));
	p->has_scan = find_driving_scan(p, pstmt->planTree);
}

/*
 * A deferred expression: if its node is on the driving scan's path, the
 * scan's executor node is below it (found at the first check, when the
 * plan's executor nodes are all set up).
 */
void
jp_tier_progress_note(JpTierProgress *p, ExprState *state)
{
	PlanState  *parent = state->parent;

	if (!p->has_scan || p->from != NULL || parent == NULL ||
		parent->plan == NULL)
		return;
	for (int i = 0; i < p->npath; i++)
		if (p->path[i] == parent->plan->plan_node_id)
		{
			p->from = parent;
			return;
		}
}

static bool
find_scan_state(PlanState *ps, void *arg)
{
	JpTierProgress *p = (JpTierProgress *) arg;

	if (ps->plan->plan_node_id == p->scan_node)
	{
		if (IsA(ps, SeqScanState))
			p->scan = (SeqScanState *) ps;
		return true;
	}
	return planstate_tree_walker(ps, find_scan_state, arg);
}

/*
 * The blocks the scan has read (before the one it is on) of TOTAL, in the
 * order it reads them: a synchronized scan starts mid-relation and wraps
 * around.  False if its position cannot be told: not a heap, a parallel
 * scan or one limited to some blocks.  A scan not begun, or ended, is at 0.
 */
static bool
scan_position(SeqScanState *ss, BlockNumber *read, BlockNumber *total)
{
	TableScanDesc sd = ss->ss.ss_currentScanDesc;
	HeapScanDesc hs;

	*read = 0;
	*total = 0;
	if (sd == NULL)
		return true;
	if (sd->rs_rd->rd_tableam != GetHeapamTableAmRoutine() ||
		sd->rs_parallel != NULL)
		return false;
	hs = (HeapScanDesc) sd;
	if (hs->rs_numblocks != InvalidBlockNumber || hs->rs_nblocks == 0)
		return false;
	*total = hs->rs_nblocks;
	if (hs->rs_inited && hs->rs_cblock != InvalidBlockNumber &&
		hs->rs_cblock < hs->rs_nblocks && hs->rs_startblock < hs->rs_nblocks)
		*read = (hs->rs_cblock + hs->rs_nblocks - hs->rs_startblock) %
			hs->rs_nblocks;
	return true;
}

/*
 * The rest of the query, in the rule's units, given DONE since the last
 * round: DONE x (share of blocks left) / (share read since the mark), when
 * the scan has read at least MIN_PROGRESS of its blocks since the mark;
 * otherwise DONE ("as much again").  Takes the mark while the scan has not
 * passed its first block, and when the query's first mark was not valid.
 */
double
jp_tier_progress_predict(JpTierProgress *p, double done)
{
	BlockNumber read;
	BlockNumber total;
	double		f;

	p->predicted = false;
	p->fraction = -1;
	if (!p->has_scan)
		return done;
	if (!p->searched && p->from != NULL)
	{
		p->searched = true;
		(void) find_scan_state(p->from, p);
	}
	if (p->scan == NULL || !scan_position(p->scan, &read, &total))
		return done;

	f = total > 0 ? (double) read / total : 0;
	p->fraction = f;
	p->blocks = total;
	if (read <= 1 || !p->mark_valid)
	{
		/*
		 * Before the scan has passed its first block, work may still come
		 * that is not the scan's (a hash join's build goes on after the outer
		 * side's first tuple): such a mark is valid only if nothing runs
		 * before the scan.
		 */
		p->mark_valid = read > 1 || p->scan_first;
		p->mark_done = done;
		p->mark_fraction = f;
		return done;
	}
	if (f - p->mark_fraction < MIN_PROGRESS || done <= p->mark_done)
		return done;
	p->predicted = true;
	return (done - p->mark_done) * (1.0 - f) / (f - p->mark_fraction);
}

/* A round starts: the rule's work counts from 0 again, so does the mark. */
void
jp_tier_progress_round(JpTierProgress *p)
{
	p->mark_valid = p->fraction >= 0;
	p->mark_done = 0;
	p->mark_fraction = Max(p->fraction, 0);
}

/* Whether the last prediction read the driving scan's position. */
bool
jp_tier_progress_tracking(const JpTierProgress *p)
{
	return p->fraction >= 0;
}

/* For the rule's DEBUG1 line: where the last prediction came from. */
const char *
jp_tier_progress_describe(const JpTierProgress *p)
{
	static char buf[128];

	if (!p->predicted)
		return "as much again";
	snprintf(buf, sizeof(buf),
			 "scan at %.1f%% of %u blocks, from %.1f%%",
			 p->fraction * 100.0, p->blocks, p->mark_fraction * 100.0);
	return buf;
}
