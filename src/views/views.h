/*-------------------------------------------------------------------------
 *
 * views.h
 *	  The views layer (doc/architecture.md): the SQL-callable functions,
 *	  which read the store and the lower layers' counters through functions.
 *
 *	  hotspots.c       jitprof_hotspots, jitprof_queries, the health view and
 *	                   the reset; who may see other roles' rows
 *	  hotspot_steps.c  jitprof_steps
 *	  plan_nodes.c     jitprof_plan_nodes, and the plan-node rows with their
 *	                   totals (plan_rows.h) that the next two use
 *	  plan_explain.c   jitprof_explain
 *	  plan_folded.c    jitprof_folded (1.1), with each function's plan path
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
 * row of a one-text-column view, and the parts of a folded line.
 */
extern bool jp_reader_sees_all(void);
extern void jp_put_text_row(ReturnSetInfo *rsinfo, const char *text);
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
