/*-------------------------------------------------------------------------
 *
 * views.h
 *	  The views layer (doc/architecture.md): the SQL-callable functions,
 *	  which read the store and the lower layers' counters through functions.
 *
 *	  hotspots.c       jitprof_hotspots, jitprof_queries, the health view and
 *	                   the reset; who may see other roles' rows
 *	  hotspot_steps.c  jitprof_steps
 *	  plan_nodes.c     jitprof_plan_nodes, jitprof_explain, jitprof_folded
 *	  status.c         jitprof_status, jitprof_functions
 *	  jit_payoff.c     jitprof_jit_payoff, jitprof_jit_levels, jitprof_advisor
 *
 * Within the layer, plan_nodes.c and status.c use hotspots.c and
 * hotspot_steps.c, which use neither.
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_VIEWS_H
#define JITPROF_VIEWS_H

#include "lib/stringinfo.h"

#include "advisor/advisor.h"
#include "core/core.h"
#include "link/link.h"
#include "names/names.h"
#include "provider/provider.h"
#include "sampler/sampler.h"
#include "sinks/sinks.h"
#include "store/store.h"

/*
 * hotspots.c: may the caller see other roles' rows and code addresses?  And
 * a row of a one-text-column view.
 */
extern bool jp_reader_sees_all(void);
extern void jp_put_text_row(ReturnSetInfo *rsinfo, const char *text);
extern void jp_put_folded_samples(ReturnSetInfo *rsinfo, StringInfo line,
								  int64 self_samples, int64 total_samples);

/* hotspot_steps.c: copies of the step rows, each with its function's row */
typedef struct JpStepRow
{
	const JpStoreStepEntry *step;
	const JpStoreEntry *function;
} JpStepRow;

extern JpStepRow *jp_step_rows(int64 *nrows);
extern const char *jp_step_deform_detail(const JpStoreStepEntry *s);

/*
 * plan_nodes.c: plan paths ("Agg#0;Sort#1;SeqScan#2") of the plan-node
 * profile, for jitprof_folded (1.1), which is in plan_nodes.c too: no other
 * file uses them.
 */

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

#endif							/* JITPROF_VIEWS_H */
