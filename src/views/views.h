/*-------------------------------------------------------------------------
 *
 * views.h
 *	  The views layer (doc/architecture.md): the SQL-callable functions,
 *	  which read the store and the lower layers' counters through functions.
 *
 *	  hotspots.c       jitprof_hotspots, jitprof_queries, the health view and
 *	                   the reset; who may see other roles' rows; the
 *	                   store summed per query
 *	  hotspot_steps.c  jitprof_steps
 *	  plan_nodes.c     jitprof_plan_nodes, and the plan-node rows with their
 *	                   totals (plan_rows.h) that the next two use
 *	  plan_explain.c   jitprof_explain
 *	  plan_folded.c    jitprof_folded, each of its versions: 1.0 (plan node
 *	                   and role) and 1.1 (each function's plan path)
 *	  status.c         jitprof_status, jitprof_functions
 *	  jit_payoff.c     jitprof_jit_payoff, jitprof_jit_levels, jitprof_advisor
 *
 * Within the layer, the plan files and status.c use hotspots.c and
 * hotspot_steps.c, which use neither; plan_explain.c and plan_folded.c use
 * plan_nodes.c through plan_rows.h, the folder's inner header.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/views.h
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
 * hotspots.c: may the caller see other roles' rows and code addresses?  A
 * row of a one-text-column view.  The store summed per query: a hash table
 * of JpQueryTotals in CurrentMemoryContext.
 */
typedef struct JpQueryKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
} JpQueryKey;

typedef struct JpQueryTotals
{
	JpQueryKey	key;			/* hash key: must be first */
	bool		has_summary;
	int64		executions;
	int64		query_samples;
	int64		jit_self_samples;
	int64		jit_total_samples;
	int64		functions;
	int64		code_bytes;
	int64		max_function_query_samples;
	/* tiered JIT, from the summary row */
	int64		tiered_executions;
	int64		tiering_switches;
	int64		tiering_functions;
	int64		tiering_expressions_compiled;
	int64		tiering_expressions_never_compiled;
} JpQueryTotals;

extern bool jp_reader_sees_all(void);
extern void jp_put_text_row(ReturnSetInfo *rsinfo, const char *text);
extern HTAB *jp_query_totals(void);

/* plan_folded.c: the parts of a folded line */
extern void jp_append_role(StringInfo line, const char *role, int32 ordinal);
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

#endif							/* JITPROF_VIEWS_H */
