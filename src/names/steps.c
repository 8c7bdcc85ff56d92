/*-------------------------------------------------------------------------
 *
 * steps.c
 *	  Expression step listings: the "source file" of JIT code.
 *
 * With jitprof.steps on, compile_expr (provider.c) calls jp_steps_annotate()
 * for the functions it just generated: each gets a listing of its steps in
 * this backend's step file, and (through llvm_steps.c) DWARF line numbers
 * that point into that listing, so perf and gdb show a step as the source
 * line of the code.
 *
 * Contract: runs on the backend's only thread at compile_expr time (a
 * transaction is open, so catalog look-ups are allowed).  Nothing here fails
 * or slows a query: one write() per expression, capped at
 * jitprof.jitdump_max_size; problems are counted, never an ERROR.  The file,
 * its directory checks and its line format: doc/steps.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/names/steps.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "executor/execExpr.h"
#include "executor/nodeAgg.h"
#include "executor/tuptable.h"
#include "jit/jit.h"
#include "jit/llvmjit.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "names/names.h"

static JitprofStepCounters step_counters;

static const char *const eeop_names[] = {
#include "names/eeop_names.h"
};

StaticAssertDecl(lengthof(eeop_names) == EEOP_LAST,
				 "eeop_names.h does not match executor/execExpr.h");

/* the step file of this backend */
static pid_t steps_pid = 0;
static int	steps_fd = -1;
static char steps_dir[MAXPGPATH];
static char steps_name[64];
static char steps_path[MAXPGPATH];	/* steps_dir/steps_name */
static int	steps_lines = 0;	/* lines listed so far, written or not */

/* full path of this backend's step file, or NULL if it has none */
const char *
jp_steps_file_path(void)
{
	if (steps_pid != getpid() || steps_fd < 0)
		return NULL;
	return steps_path;
}

/*
 * Open this backend's step file; false if there is none.  Silent: the
 * jitdump sink, which uses the same directories, reports their problems.
 */
static bool
steps_open(void)
{
	char		date[16];
	time_t		now = time(NULL);
	struct tm	tm;

	if (steps_pid == getpid())
		return steps_fd >= 0;

	/* first use in this process */
	steps_pid = getpid();
	steps_fd = -1;
	steps_lines = 0;

	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y%m%d", &tm);
	snprintf(steps_name, sizeof(steps_name), "steps-%d.txt", (int) steps_pid);
	if (!jp_make_jit_dir(jitprof_jitdump_dir, "jitprof-steps", date,
						 steps_name, NULL, false, steps_dir, steps_path))
		goto fail;
	steps_fd = open(steps_path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
					O_NOFOLLOW | O_CLOEXEC,
					S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH);
	if (steps_fd < 0)
		goto fail;
	return true;

fail:
	step_counters.file_failures++;
	return false;
}

/* append s to buf with newlines and other control characters replaced */
static void
append_clean(StringInfo buf, const char *s)
{
	for (; *s; s++)
		appendStringInfoChar(buf, ((unsigned char) *s < ' ') ? '?' : *s);
}

static void
append_function(StringInfo buf, FmgrInfo *finfo)
{
	char	   *name;

	if (finfo == NULL)
		return;
	name = get_func_name(finfo->fn_oid);
	appendStringInfoChar(buf, ' ');
	if (name != NULL)
		append_clean(buf, name);
	else
		appendStringInfo(buf, "function %u", finfo->fn_oid);
}

/* column name of attribute "attnum" (0-based) of desc, if known */
static void
append_column(StringInfo buf, TupleDesc desc, int attnum)
{
	if (desc != NULL && attnum >= 0 && attnum < desc->natts &&
		NameStr(TupleDescAttr(desc, attnum)->attname)[0] != '\0')
	{
		appendStringInfoChar(buf, ' ');
		append_clean(buf, NameStr(TupleDescAttr(desc, attnum)->attname));
	}
	appendStringInfo(buf, " (attno %d)", attnum + 1);
}

/* what step op works on, after its opcode */
static void
append_detail(StringInfo buf, ExprEvalStep *op, ExprEvalOp opcode,
			  TupleDesc inner, TupleDesc outer, TupleDesc scan)
{
	switch (opcode)
	{
		case EEOP_INNER_FETCHSOME:
		case EEOP_OUTER_FETCHSOME:
		case EEOP_SCAN_FETCHSOME:
			appendStringInfo(buf, " last_var %d", op->d.fetch.last_var);
			break;
		case EEOP_INNER_VAR:
			append_column(buf, inner, op->d.var.attnum);
			break;
		case EEOP_OUTER_VAR:
			append_column(buf, outer, op->d.var.attnum);
			break;
		case EEOP_SCAN_VAR:
			append_column(buf, scan, op->d.var.attnum);
			break;
		case EEOP_INNER_SYSVAR:
		case EEOP_OUTER_SYSVAR:
		case EEOP_SCAN_SYSVAR:
			appendStringInfo(buf, " (attno %d)", op->d.var.attnum);
			break;
		case EEOP_ASSIGN_INNER_VAR:
			append_column(buf, inner, op->d.assign_var.attnum);
			appendStringInfo(buf, " -> result %d", op->d.assign_var.resultnum);
			break;
		case EEOP_ASSIGN_OUTER_VAR:
			append_column(buf, outer, op->d.assign_var.attnum);
			appendStringInfo(buf, " -> result %d", op->d.assign_var.resultnum);
			break;
		case EEOP_ASSIGN_SCAN_VAR:
			append_column(buf, scan, op->d.assign_var.attnum);
			appendStringInfo(buf, " -> result %d", op->d.assign_var.resultnum);
			break;
		case EEOP_ASSIGN_TMP:
		case EEOP_ASSIGN_TMP_MAKE_RO:
			appendStringInfo(buf, " -> result %d", op->d.assign_tmp.resultnum);
			break;
		case EEOP_CONST:
			if (op->d.constval.isnull)
				appendStringInfoString(buf, " null");
			break;
		case EEOP_FUNCEXPR:
		case EEOP_FUNCEXPR_STRICT:
		case EEOP_FUNCEXPR_FUSAGE:
		case EEOP_FUNCEXPR_STRICT_FUSAGE:
		case EEOP_DISTINCT:
		case EEOP_NOT_DISTINCT:
		case EEOP_NULLIF:
			append_function(buf, op->d.func.finfo);
			break;
		case EEOP_BOOL_AND_STEP_FIRST:
		case EEOP_BOOL_AND_STEP:
		case EEOP_BOOL_AND_STEP_LAST:
		case EEOP_BOOL_OR_STEP_FIRST:
		case EEOP_BOOL_OR_STEP:
		case EEOP_BOOL_OR_STEP_LAST:
			appendStringInfo(buf, " -> step %d", op->d.boolexpr.jumpdone);
			break;
		case EEOP_QUAL:
			appendStringInfo(buf, " -> step %d", op->d.qualexpr.jumpdone);
			break;
		case EEOP_JUMP:
		case EEOP_JUMP_IF_NULL:
		case EEOP_JUMP_IF_NOT_NULL:
		case EEOP_JUMP_IF_NOT_TRUE:
			appendStringInfo(buf, " -> step %d", op->d.jump.jumpdone);
			break;
		case EEOP_PARAM_EXEC:
		case EEOP_PARAM_EXTERN:
			appendStringInfo(buf, " $%d", op->d.param.paramid);
			break;
		case EEOP_IOCOERCE:
			append_function(buf, op->d.iocoerce.finfo_out);
			append_function(buf, op->d.iocoerce.finfo_in);
			break;
		case EEOP_ROWCOMPARE_STEP:
			append_function(buf, op->d.rowcompare_step.finfo);
			break;
		case EEOP_SCALARARRAYOP:
			append_function(buf, op->d.scalararrayop.finfo);
			break;
		case EEOP_AGGREF:
			appendStringInfo(buf, " aggno %d", op->d.aggref.aggno);
			break;
		case EEOP_AGG_PLAIN_TRANS_INIT_STRICT_BYVAL:
		case EEOP_AGG_PLAIN_TRANS_STRICT_BYVAL:
		case EEOP_AGG_PLAIN_TRANS_BYVAL:
		case EEOP_AGG_PLAIN_TRANS_INIT_STRICT_BYREF:
		case EEOP_AGG_PLAIN_TRANS_STRICT_BYREF:
		case EEOP_AGG_PLAIN_TRANS_BYREF:
		case EEOP_AGG_ORDERED_TRANS_DATUM:
		case EEOP_AGG_ORDERED_TRANS_TUPLE:
			{
				AggStatePerTrans pertrans = op->d.agg_trans.pertrans;
				char	   *name = pertrans ? get_func_name(pertrans->transfn_oid) : NULL;

				if (name != NULL)
				{
					appendStringInfoChar(buf, ' ');
					append_clean(buf, name);
				}
				appendStringInfo(buf, " (transno %d)", op->d.agg_trans.transno);
			}
			break;
		default:
			if (JP_EEOP_IS_STRICT_CALL_N(opcode))
				append_function(buf, op->d.func.finfo);
			break;
	}
}

/* "l_quantity numeric" for attribute a (0-based) of desc, if known */
static void
append_attribute(StringInfo buf, TupleDesc desc, int a)
{
	Form_pg_attribute att;

	if (desc == NULL || a >= desc->natts)
		return;
	att = TupleDescAttr(desc, a);
	if (NameStr(att->attname)[0] != '\0')
	{
		append_clean(buf, NameStr(att->attname));
		appendStringInfoChar(buf, ' ');
	}
	append_clean(buf, format_type_extended(att->atttypid, -1,
										   FORMAT_TYPE_ALLOW_INVALID));
}

/* Add one label to "labels" (which may be NULL: out of memory). */
static void
add_label(JitprofStepLabels *labels, int maxlabels, int32 step,
		  const char *opcode, const char *detail)
{
	JitprofStepLabel *label;

	if (labels == NULL || labels->nlabels >= maxlabels)
		return;
	label = &labels->labels[labels->nlabels++];
	label->step = step;
	strlcpy(label->opcode, opcode, JP_OPCODE_LEN);
	/* append_detail() starts with a space */
	strlcpy(label->detail, detail[0] == ' ' ? detail + 1 : detail,
			JP_DETAIL_LEN);
}

/* labels "deform" / "<name> <type> (attno n)" for attributes 1..natts */
static void
add_attribute_labels(JitprofStepLabels *labels, int maxlabels,
					 TupleDesc desc, int natts, StringInfo detail)
{
	for (int a = 0; a < natts; a++)
	{
		resetStringInfo(detail);
		append_attribute(detail, desc, a);
		appendStringInfo(detail, "%s(attno %d)", detail->len > 0 ? " " : "",
						 a + 1);
		add_label(labels, maxlabels, JP_STEP_ATTRIBUTE(a), "deform",
				  detail->data);
	}
}

static int
label_cmp(const void *a, const void *b)
{
	int32		sa = ((const JitprofStepLabel *) a)->step;
	int32		sb = ((const JitprofStepLabel *) b)->step;

	return sa < sb ? -1 : (sa > sb ? 1 : 0);
}

/* The label of "step" in "labels", or NULL; never throws. */
const JitprofStepLabel *
jp_steps_find_label(const JitprofStepLabels *labels, int32 step)
{
	JitprofStepLabel key;

	if (labels == NULL)
		return NULL;
	key.step = step;
	return bsearch(&key, labels->labels, labels->nlabels,
				   sizeof(JitprofStepLabel), label_cmp);
}

/*
 * Tuple descriptor a FETCHSOME step knows, if llvmjit makes a deform
 * function for it: a known descriptor and a fixed slot kind it can deform
 * (llvmjit_expr.c and slot_compile_deform() of llvmjit_deform.c).
 */
static TupleDesc
deformed_desc(ExprEvalStep *op)
{
	const TupleTableSlotOps *kind = op->d.fetch.kind;

	if (op->d.fetch.fixed && op->d.fetch.known_desc != NULL &&
		(kind == &TTSOpsHeapTuple || kind == &TTSOpsBufferHeapTuple ||
		 kind == &TTSOpsMinimalTuple))
		return op->d.fetch.known_desc;
	return NULL;
}

/*
 * List the steps of "state" and give the nfunctions functions llvmjit just
 * generated for it (names, is_deform as from new_functions) debug
 * information whose lines are those of the listing, through "llvm", the
 * provider's jitprof_llvm.so table (NULL: not loaded, nothing to do).
 */
void
jp_steps_annotate(ExprState *state, LLVMJitContext *context,
				  const JitprofLlvmTable *llvm,
				  char *const *names, const bool *is_deform, int nfunctions)
{
	StringInfoData buf;
	TupleDesc	inner = NULL;
	TupleDesc	outer = NULL;
	TupleDesc	scan = NULL;
	TupleDesc	deform_descs[64];
	int			deform_natts[64];
	int			ndeform = 0;
	int			next_deform = 0;
	bool		have_file;
	StringInfoData detail;

	if (!jitprof_steps || nfunctions <= 0 || llvm == NULL ||
		llvm->add_debug_info == NULL)
		return;

	/* the file is for perf and gdb: written only when one of them looks */
	have_file = (jitprof_perf_jitdump || jit_profiling_support ||
				 jitprof_gdb || jit_debugging_support) && steps_open();
	initStringInfo(&buf);

	/* the descriptors of the slots, as the FETCHSOME steps know them */
	for (int i = 0; i < state->steps_len; i++)
	{
		ExprEvalStep *op = &state->steps[i];
		ExprEvalOp	opcode = ExecEvalStepOp(state, op);
		TupleDesc	desc;

		if (opcode != EEOP_INNER_FETCHSOME && opcode != EEOP_OUTER_FETCHSOME &&
			opcode != EEOP_SCAN_FETCHSOME)
			continue;
		desc = op->d.fetch.known_desc;
		if (opcode == EEOP_INNER_FETCHSOME && inner == NULL)
			inner = desc;
		else if (opcode == EEOP_OUTER_FETCHSOME && outer == NULL)
			outer = desc;
		else if (opcode == EEOP_SCAN_FETCHSOME && scan == NULL)
			scan = desc;
		if (deformed_desc(op) != NULL && ndeform < lengthof(deform_descs))
		{
			deform_descs[ndeform] = deformed_desc(op);
			deform_natts[ndeform] = op->d.fetch.last_var;
			ndeform++;
		}
	}

	initStringInfo(&detail);
	for (int f = 0; f < nfunctions; f++)
	{
		JitprofDebugInfo info;
		int			header = steps_lines + 1;
		JitprofStepLabels *labels;
		int			maxlabels;
		TupleDesc	desc = NULL;
		int			natts = 0;

		/*
		 * The llvmjit name: jitprof's name of the function is resolved only
		 * once the plan is fully initialized (naming.c), jitprof_functions
		 * shows both.
		 */
		appendStringInfo(&buf, "%s: ", names[f]);

		/* deform functions are generated in the order of their steps */
		if (is_deform[f] && next_deform < ndeform)
		{
			desc = deform_descs[next_deform];
			natts = deform_natts[next_deform];
			next_deform++;
		}

		/* the labels jitprof_steps shows; inlined deforming included */
		maxlabels = is_deform[f] ? natts : state->steps_len;
		if (!is_deform[f] && ndeform == 1)
			maxlabels += deform_natts[0];
		maxlabels = Min(maxlabels, JP_MAX_STEP_LABELS);
		labels = malloc(offsetof(JitprofStepLabels, labels) +
						Max(maxlabels, 1) * sizeof(JitprofStepLabel));
		if (labels != NULL)
			labels->nlabels = 0;
		else
			step_counters.labels_dropped++;

		if (!is_deform[f])
		{
			appendStringInfo(&buf, "%d steps\n", state->steps_len);
			for (int i = 0; i < state->steps_len; i++)
			{
				ExprEvalStep *op = &state->steps[i];
				ExprEvalOp	opcode = ExecEvalStepOp(state, op);
				const char *opname = (opcode >= 0 && opcode < EEOP_LAST) ?
				eeop_names[opcode] : "?";

				resetStringInfo(&detail);
				append_detail(&detail, op, opcode, inner, outer, scan);
				appendStringInfo(&buf, "step %d: %s%s\n", i, opname,
								 detail.data);
				add_label(labels, maxlabels, i, opname, detail.data);
			}
			/* deforming inlined here is unambiguous with one deformed slot */
			if (ndeform == 1)
				add_attribute_labels(labels, maxlabels, deform_descs[0],
									 deform_natts[0], &detail);
			info.nlines = state->steps_len;
		}
		else
		{
			appendStringInfo(&buf, "deform %d attributes\n", natts);
			for (int a = 0; a < natts; a++)
			{
				resetStringInfo(&detail);
				append_attribute(&detail, desc, a);
				appendStringInfo(&buf, "attribute %d:%s%s\n", a + 1,
								 detail.len > 0 ? " " : "", detail.data);
			}
			add_attribute_labels(labels, maxlabels, desc, natts, &detail);
			info.nlines = natts;
		}

		if (labels != NULL)
		{
			qsort(labels->labels, labels->nlabels, sizeof(JitprofStepLabel),
				  label_cmp);
			jp_naming_attach_labels(names[f], labels);
		}

		info.llvm_name = names[f];
		info.directory = have_file ? steps_dir : "";
		info.file_name = have_file ? steps_name : "jitprof-steps.txt";
		info.first_line = header;
		info.is_deform = is_deform[f];
		steps_lines = header + info.nlines;

		if (llvm->add_debug_info(context, &info))
			step_counters.functions_annotated++;
		else
			step_counters.functions_skipped++;
	}

	/* the listing, in one write; past the cap, or without a file, dropped */
	if (have_file &&
		step_counters.file_bytes + buf.len <=
		(uint64) jitprof_jitdump_max_size * 1024)
	{
		if (jp_write_all(steps_fd, buf.data, buf.len))
			step_counters.file_bytes += buf.len;
		else
		{
			/* the file's lines no longer match: write no more to it */
			close(steps_fd);
			steps_fd = -1;
			step_counters.file_failures++;
			step_counters.listings_dropped++;
		}
	}
	else
		step_counters.listings_dropped++;

	pfree(buf.data);
	pfree(detail.data);
}

const JitprofStepCounters *
jp_steps_counters(void)
{
	return &step_counters;
}

/* one more (delta 1) or one fewer (-1) live thing of "bytes" bytes */
static void
count_live(uint64 *live, uint64 *live_bytes, int delta, Size bytes)
{
	*live += delta;
	if (delta > 0)
		*live_bytes += bytes;
	else
		*live_bytes -= bytes;
}

void
jp_steps_count_table(int delta, Size bytes)
{
	count_live(&step_counters.tables, &step_counters.table_bytes, delta,
			   bytes);
}

void
jp_steps_count_table_dropped(void)
{
	step_counters.tables_dropped++;
}

void
jp_steps_count_profile(int delta, Size bytes)
{
	count_live(&step_counters.profiles, &step_counters.profile_bytes, delta,
			   bytes);
}

void
jp_steps_count_profile_dropped(void)
{
	step_counters.profiles_dropped++;
}
