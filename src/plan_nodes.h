/*-------------------------------------------------------------------------
 *
 * plan_nodes.h
 *	  Plan paths ("Agg#0;Sort#1;SeqScan#2") of the plan-node profile's SQL
 *	  side (plan_nodes.c), for jitprof_folded (1.1), which is in
 *	  plan_nodes.c too: no other file uses them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_PLAN_NODES_H
#define JITPROF_PLAN_NODES_H

#include "lib/stringinfo.h"

#include "store.h"

/* plan-node rows copied out of the store (no lock held) */
typedef struct JpPlanPaths
{
	void	   *rows;
	int			nrows;
	HTAB	   *index;			/* a row's place in rows, by its key */
} JpPlanPaths;

extern JpPlanPaths *jp_plan_paths_copy(const JpStoreEntry *entries,
									   int64 nentries);
extern bool jp_plan_path(const JpPlanPaths *paths, Oid userid, Oid dbid,
						 int64 queryid, int32 id, StringInfo out);

#endif							/* JITPROF_PLAN_NODES_H */
