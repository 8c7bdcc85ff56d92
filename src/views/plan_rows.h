/*-------------------------------------------------------------------------
 *
 * plan_rows.h
 *	  Inside the views folder: the plan-node rows, copied out of the store
 *	  with their totals (plan_nodes.c), for jitprof_plan_nodes,
 *	  jitprof_explain (plan_explain.c) and jitprof_folded (plan_folded.c).
 *	  Other folders include views/views.h only.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/plan_rows.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_VIEWS_PLAN_ROWS_H
#define JITPROF_VIEWS_PLAN_ROWS_H

#include "store/store.h"

/* one plan node's row, copied out of the store */
typedef struct NodeRow
{
	JpStoreNodeEntry e;
	int64		total_samples;
	int64		query_samples;	/* of the executions with plan-node data */
	bool		visible;
	int			up;				/* its parent's row, or -1 */
} NodeRow;

/* one query's summary, copied out of the store */
typedef struct QueryRow
{
	JpStoreKey	key;
	int64		executions;
	int64		query_samples;
	int64		node_executions;	/* those with plan-node data */
	int64		node_samples;	/* their samples */
	int64		tiered_executions;	/* tiered JIT (jitprof_explain 1.4) */
	int64		tiering_switches;
} QueryRow;

/* plan_nodes.c */
extern NodeRow *jp_plan_rows_copy_after(const JpStoreEntry *entries,
										int64 nentries, bool one_query,
										int64 queryid, int *nrows,
										QueryRow **queries, int *nqueries);
extern NodeRow *jp_plan_rows_copy(bool one_query, int64 queryid, int *nrows,
								  QueryRow **queries, int *nqueries);
extern int	jp_plan_row_find(const NodeRow *rows, int n, int32 id);

#endif							/* JITPROF_VIEWS_PLAN_ROWS_H */
