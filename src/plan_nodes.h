/*-------------------------------------------------------------------------
 *
 * plan_nodes.h
 *	  The plan-node profile's SQL side (plan_nodes.c), as hotspots.c's
 *	  jitprof_folded uses it for plan paths.
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
} JpPlanPaths;

extern JpPlanPaths *jp_plan_paths_copy(void);
extern bool jp_plan_path(const JpPlanPaths *paths, Oid userid, Oid dbid,
						 int64 queryid, int32 id, StringInfo out);
extern int	jp_plan_paths_count(const JpPlanPaths *paths);
extern void jp_plan_paths_row(const JpPlanPaths *paths, int i,
							  JpStoreNodeKey *key, int64 *self_samples,
							  int64 *query_samples, bool *visible);

#endif							/* JITPROF_PLAN_NODES_H */
