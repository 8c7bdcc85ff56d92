/*-------------------------------------------------------------------------
 *
 * names.h
 *	  The names layer (doc/architecture.md): what a generated function is
 *	  called and what its expression steps are, decided at compile time,
 *	  before the function is linked.
 *
 *	  naming.c  the origin and symbol of each generated function, from
 *	            compile time to its link (doc/names.md)
 *	  roles.c   the plan node type and the expression's role in it, read
 *	            from the executor's state; called by naming.c only, through
 *	            names/roles.h, which is not for other folders
 *	  steps.c   expression step listings, step labels and debug info
 *	            (doc/steps.md); calls naming.c, which calls nothing here
 *
 * names sits on core only.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/names/names.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_NAMES_H
#define JITPROF_NAMES_H

#include "core/core.h"

/* naming.c */
extern void jp_naming_record_expr(ExprState *state, JitContext *context,
								  int64 queryid,
								  const char *const *llvm_names,
								  const bool *is_deform, int nfunctions);
extern void jp_naming_take_object(JitprofFunction *functions,
								  int nfunctions);
extern void jp_naming_attach_labels(const char *llvm_name,
									JitprofStepLabels *labels);
extern bool jp_naming_peek(const char *llvm_name, char *symbol, size_t len);
extern void jp_naming_forget_context(JitContext *context);
extern void jp_naming_note_load(void);

/* roles.c */
extern const char *jp_plan_node_name(Plan *plan);

/* steps.c: expression step listings and debug info (issue 12) */
typedef struct JitprofStepCounters
{
	uint64		functions_annotated;	/* given debug info */
	uint64		functions_skipped;	/* debug info failed: left without */
	uint64		file_bytes;		/* size of the step file */
	uint64		file_failures;	/* step file could not be made or written */
	uint64		listings_dropped;	/* not written: no file, or at its cap */
	uint64		tables;			/* live functions with a step table */
	uint64		table_bytes;	/* their memory */
	uint64		tables_dropped; /* not kept: out of memory */
	uint64		labels_dropped; /* step labels not kept: out of memory */
	uint64		profiles;		/* sampler's per-step counters, live */
	uint64		profile_bytes;	/* their memory */
	uint64		profiles_dropped;	/* not made: out of memory */
} JitprofStepCounters;

extern const char *jp_steps_file_path(void);
struct LLVMJitContext;
extern void jp_steps_annotate(ExprState *state, struct LLVMJitContext *context,
							  const JitprofLlvmTable *llvm,
							  char *const *names, const bool *is_deform,
							  int nfunctions);
extern const JitprofStepLabel *jp_steps_find_label(const JitprofStepLabels *labels,
												   int32 step);

/*
 * The step counters, kept here and reported by jitprof_status.  The
 * registry counts the step tables it keeps, the sampler its per-step
 * profiles: "delta" is +1 for one made, -1 for one freed, of "bytes" bytes.
 */
extern const JitprofStepCounters *jp_steps_counters(void);
extern void jp_steps_count_table(int delta, Size bytes);
extern void jp_steps_count_table_dropped(void);
extern void jp_steps_count_profile(int delta, Size bytes);
extern void jp_steps_count_profile_dropped(void);

#endif							/* JITPROF_NAMES_H */
