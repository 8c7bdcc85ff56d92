/*-------------------------------------------------------------------------
 *
 * plan_explain.c
 *	  jitprof_explain (extension version 1.1): the plan of one query as
 *	  EXPLAIN lays it out, each node annotated with its share of the query's
 *	  samples and its top expression step; from 1.4, with tiered JIT's
 *	  rounds and compile time per node (jitprof_explain_1_4).
 *
 * It works on copies of the plan-node rows (jp_plan_rows_copy, with their
 * totals) and of the step rows (jp_step_rows), taken under the store's lock
 * in shared mode, after the lock is released; its loops check for
 * interrupts.  Only the rows the reader may see are used (privacy as
 * jitprof_hotspots).
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/plan_explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

#include "views/views.h"
#include "views/plan_rows.h"

PG_FUNCTION_INFO_V1(jitprof_explain_1_1);
PG_FUNCTION_INFO_V1(jitprof_explain_1_4);

/*
 * One step row of a query that can be a node's top step: an expression
 * step or a deformed attribute, never the code of no step.
 */
typedef struct ExplainStep
{
	int32		plan_node_id;
	const char *role;
	const char *opcode;			/* "deform" for a deformed attribute */
	const char *detail;			/* as jitprof_steps shows it */
	int32		solo;			/* a step without a label: its step, so that
								 * it is summed with no other; else
								 * JP_STEP_NONE */
	uint32		discriminator;	/* the function's */
	int32		step;			/* the store's step key */
	int32		number;			/* step number, or attnum when deforming */
	int64		total;
} ExplainStep;

/*
 * A node's top step: the steps of its functions that have the same role,
 * opcode and detail, summed (see doc/plan_nodes.md).
 */
typedef struct ExplainTopStep
{
	const ExplainStep *first;	/* the lowest step (or attnum); NULL: none */
	int			nsteps;			/* distinct steps (function, step) summed */
	int64		total;
} ExplainTopStep;

/* aggregated over the (visible) users and databases of one query ID */
typedef struct ExplainNode
{
	int32		id;
	int32		parent;
	const char *label;
	int64		self;
	int64		total;
	int64		jit;
	int64		compile;
	int64		tier_rounds;	/* tiered JIT (1.4) */
	int64		tier_round_evaluations;
	int64		tier_compile_ns;
	ExplainTopStep top;			/* jitprof.steps */
	int			first_child;	/* index in the node array, or -1 */
	int			next_sibling;	/* likewise */
} ExplainNode;

/* a node's index in the node array, by plan_node_id */
typedef struct ExplainNodeRef
{
	int32		id;				/* hash key: must be first */
	int			index;
} ExplainNodeRef;

static bool
is_deform(const ExplainStep *s)
{
	return s->step < 0;
}

/* the steps summed into one entry compare equal */
static int
step_group_cmp(const ExplainStep *a, const ExplainStep *b)
{
	int			c;

	if (a->plan_node_id != b->plan_node_id)
		return a->plan_node_id < b->plan_node_id ? -1 : 1;
	if ((c = strcmp(a->role, b->role)) != 0)
		return c;
	if ((c = strcmp(a->opcode, b->opcode)) != 0)
		return c;
	if ((c = strcmp(a->detail, b->detail)) != 0)
		return c;
	if (a->solo != b->solo)
		return a->solo < b->solo ? -1 : 1;
	return 0;
}

/* groups, and in each the rows of one (function, step) side by side */
static int
step_cmp(const void *pa, const void *pb)
{
	const ExplainStep *a = pa;
	const ExplainStep *b = pb;
	int			c = step_group_cmp(a, b);

	if (c != 0)
		return c;
	if (a->discriminator != b->discriminator)
		return a->discriminator < b->discriminator ? -1 : 1;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return 0;
}

/*
 * Whether entry "a" beats entry "b" as a node's top step: more total
 * samples; among equals the lower role, then expression steps before
 * deformed attributes, the lower step number (attnum), opcode, detail.
 */
static bool
top_step_better(const ExplainTopStep *a, const ExplainTopStep *b)
{
	const ExplainStep *x = a->first;
	const ExplainStep *y = b->first;
	int			c;

	if (y == NULL)
		return true;
	if (a->total != b->total)
		return a->total > b->total;
	if ((c = strcmp(x->role, y->role)) != 0)
		return c < 0;
	if (is_deform(x) != is_deform(y))
		return !is_deform(x);
	if (x->number != y->number)
		return x->number < y->number;
	if ((c = strcmp(x->opcode, y->opcode)) != 0)
		return c < 0;
	return strcmp(x->detail, y->detail) < 0;
}

static int
node_id_cmp(const void *a, const void *b)
{
	int32		x = (*(ExplainNode *const *) a)->id;
	int32		y = (*(ExplainNode *const *) b)->id;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * "qual step 16 EEOP_FUNCEXPR_STRICT numeric_mul", "qual
 * EEOP_FUNCEXPR_STRICT float8mul, 7 steps", "qual deform a double precision
 * (attno 1)"; the role is printed by the caller.
 */
static void
append_top_step(StringInfo line, const ExplainTopStep *top)
{
	const ExplainStep *s = top->first;

	if (is_deform(s))
		appendStringInfo(line, "deform %s", s->detail);
	else if (s->opcode[0] == '\0')
		appendStringInfo(line, "step %d", s->number);
	else if (top->nsteps == 1)
		appendStringInfo(line, "step %d %s", s->number, s->opcode);
	else
		appendStringInfoString(line, s->opcode);
	if (!is_deform(s) && s->opcode[0] != '\0' && s->detail[0] != '\0')
		appendStringInfo(line, " %s", s->detail);
	if (top->nsteps > 1)
	{
		/* a label without opcode, or an attribute, is one per function */
		if (is_deform(s) || s->opcode[0] == '\0')
			appendStringInfo(line, ", in %d functions", top->nsteps);
		else
			appendStringInfo(line, ", %d steps", top->nsteps);
	}
}

/*
 * Give each node its top step, the rule of doc/plan_nodes.md: of the
 * query's visible step rows (jp_step_rows), summed over users and
 * databases, those of one node, role, opcode and detail make one entry;
 * the entry with the most total samples wins.  Sorting keeps it
 * O(n log n) in the store's step rows.
 */
static void
find_top_steps(ExplainNode *nodes, int n, int64 queryid, bool all, Oid me)
{
	JpStepRow  *rows;
	int64		nrows;
	ExplainStep *cand;
	int64		ncand = 0;
	ExplainNode **byid;

	rows = jp_step_rows(&nrows);
	if (nrows == 0)
		return;
	cand = palloc(sizeof(ExplainStep) * nrows);
	for (int64 i = 0; i < nrows; i++)
	{
		const JpStoreStepEntry *s = rows[i].step;
		ExplainStep *c;

		CHECK_FOR_INTERRUPTS();
		if (s->key.queryid != queryid || !(all || s->key.userid == me))
			continue;
		/* the function's entry and exit code is no step */
		if (s->key.step == JP_STEP_NONE)
			continue;
		c = &cand[ncand++];
		c->plan_node_id = s->key.plan_node_id;
		c->role = rows[i].function->role;
		c->discriminator = s->key.discriminator;
		c->step = s->key.step;
		c->total = s->total_samples;
		if (s->key.step >= 0)
		{
			c->opcode = s->opcode;
			c->detail = s->opcode[0] != '\0' ? s->detail : "";
			c->solo = s->opcode[0] != '\0' ? JP_STEP_NONE : s->key.step;
			c->number = s->key.step;
		}
		else
		{
			c->opcode = "deform";
			c->detail = jp_step_deform_detail(s);
			c->solo = JP_STEP_NONE;
			c->number = jp_step_attnum(s->key.step);
		}
	}
	qsort(cand, ncand, sizeof(ExplainStep), step_cmp);

	byid = palloc(sizeof(ExplainNode *) * n);
	for (int i = 0; i < n; i++)
		byid[i] = &nodes[i];
	qsort(byid, n, sizeof(ExplainNode *), node_id_cmp);

	for (int64 i = 0; i < ncand;)
	{
		ExplainTopStep group = {&cand[i], 0, 0};
		ExplainNode key;
		ExplainNode *keyp = &key;
		ExplainNode **node;
		int64		j;

		CHECK_FOR_INTERRUPTS();
		for (j = i; j < ncand && step_group_cmp(&cand[i], &cand[j]) == 0; j++)
		{
			if (j == i || step_cmp(&cand[j - 1], &cand[j]) != 0)
				group.nsteps++;
			if (cand[j].number < group.first->number)
				group.first = &cand[j];
			group.total += cand[j].total;
		}
		key.id = cand[i].plan_node_id;
		node = bsearch(&keyp, byid, n, sizeof(ExplainNode *), node_id_cmp);
		if (node != NULL && top_step_better(&group, &(*node)->top))
			(*node)->top = group;
		i = j;
	}
}

/*
 * Tiered JIT's detail line of a node (1.4): the rounds that compiled its
 * expressions, the query's mean interpreted evaluations at those rounds,
 * and the time compiling its code took, summed over the executions.
 */
static void
append_tiering(StringInfo line, const ExplainNode *x)
{
	appendStringInfo(line, "Tiered JIT: compiled in " INT64_FORMAT " %s",
					 x->tier_rounds, x->tier_rounds == 1 ? "round" : "rounds");
	if (x->tier_rounds > 0)
		appendStringInfo(line, ", after " INT64_FORMAT " evaluations on average",
						 x->tier_round_evaluations / x->tier_rounds);
	appendStringInfo(line, ", compile time %.3f ms",
					 (double) x->tier_compile_ns / 1000000.0);
}

static void
explain_node(ReturnSetInfo *rsinfo, ExplainNode *nodes, int at,
			 int level, int64 qsamples, bool tiering, StringInfo line)
{
	ExplainNode *x = &nodes[at];

	CHECK_FOR_INTERRUPTS();
	resetStringInfo(line);
	if (level > 0)
		appendStringInfo(line, "%*s->  ", 6 * (level - 1) + 2, "");
	appendStringInfo(line, "%s  (self %.1f%%, total %.1f%%, JIT code %.1f%%, JIT compile %.1f%%)",
					 x->label ? x->label : "?",
					 jp_share_pct(x->self, qsamples), jp_share_pct(x->total, qsamples),
					 jp_share_pct(x->jit, qsamples), jp_share_pct(x->compile, qsamples));
	jp_put_text_row(rsinfo, line->data);
	if (x->top.first != NULL)
	{
		/* indented like EXPLAIN's detail lines */
		resetStringInfo(line);
		appendStringInfo(line, "%*sTop JIT step: %s ",
						 level > 0 ? 6 * level : 2, "", x->top.first->role);
		append_top_step(line, &x->top);
		appendStringInfo(line, " (%.1f%%)",
						 jp_share_pct(x->top.total, qsamples));
		jp_put_text_row(rsinfo, line->data);
	}
	if (tiering && (x->tier_rounds > 0 || x->tier_compile_ns > 0))
	{
		resetStringInfo(line);
		appendStringInfo(line, "%*s", level > 0 ? 6 * level : 2, "");
		append_tiering(line, x);
		jp_put_text_row(rsinfo, line->data);
	}
	if (level < 64)
		for (int i = x->first_child; i >= 0; i = nodes[i].next_sibling)
			explain_node(rsinfo, nodes, i, level + 1, qsamples, tiering,
						 line);
}

/*
 * The first lines of the report: the query's samples and executions that
 * had plan-node data, and those that had none.  Returns false when there
 * is nothing more to say: the query is unknown (to this reader), or none of
 * its executions had plan-node data, which a NOTICE then names the setting
 * for.
 */
static bool
explain_header(ReturnSetInfo *rsinfo, int64 queryid, const QueryRow *qs,
			   int nq, bool all, Oid me, int nnodes, bool tiering,
			   int64 *qsamples, StringInfo line)
{
	bool		known = false;
	int64		executions = 0;
	int64		tiered = 0;
	int64		switches = 0;
	int64		all_samples = 0;
	int64		all_executions = 0;
	int64		other_samples;
	int64		other_executions;

	*qsamples = 0;
	for (int i = 0; i < nq; i++)
	{
		if (!(all || qs[i].key.userid == me))
			continue;
		known = true;
		*qsamples += qs[i].node_samples;
		executions += qs[i].node_executions;
		all_samples += qs[i].query_samples;
		all_executions += qs[i].executions;
		tiered += qs[i].tiered_executions;
		switches += qs[i].tiering_switches;
	}
	other_samples = Max(all_samples - *qsamples, 0);
	other_executions = Max(all_executions - executions, 0);

	if (!known)
	{
		appendStringInfo(line, "query " INT64_FORMAT ": no JIT execution of this query is in jitprof's statistics",
						 queryid);
		jp_put_text_row(rsinfo, line->data);
		return false;
	}
	if (nnodes == 0 && *qsamples == 0 && executions == 0)
	{
		appendStringInfo(line, "query " INT64_FORMAT ": " INT64_FORMAT " samples in " INT64_FORMAT " executions, none with plan-node data",
						 queryid, all_samples, all_executions);
		jp_put_text_row(rsinfo, line->data);
		ereport(NOTICE,
				(errmsg("there is no plan-node data for this query"),
				 errdetail_plural("Its %lld execution ran without the plan-node profile.",
								  "Its %lld executions ran without the plan-node profile.",
								  (unsigned long) all_executions,
								  (long long) all_executions),
				 errhint("Set jitprof.plan_nodes to on, as a superuser, and run the query again.")));
		return false;
	}

	appendStringInfo(line, "query " INT64_FORMAT ": " INT64_FORMAT " samples in " INT64_FORMAT " executions",
					 queryid, *qsamples, executions);
	jp_put_text_row(rsinfo, line->data);
	if (other_samples > 0 || other_executions > 0)
	{
		resetStringInfo(line);
		appendStringInfo(line, "not counted below: " INT64_FORMAT " executions (" INT64_FORMAT " samples) without plan-node data",
						 other_executions, other_samples);
		jp_put_text_row(rsinfo, line->data);
	}
	if (tiering && (tiered > 0 || switches > 0))
	{
		/* of all its executions, as jitprof_queries counts them */
		resetStringInfo(line);
		appendStringInfo(line, "tiered JIT: " INT64_FORMAT " of " INT64_FORMAT " executions tiered, " INT64_FORMAT " switches",
						 tiered, all_executions, switches);
		jp_put_text_row(rsinfo, line->data);
	}
	return true;
}

/*
 * The plan of one query as EXPLAIN lays it out, each node annotated with
 * its share of the samples of the query's executions that had plan-node
 * data: self, total, JIT code, JIT compile.  The first lines say how many
 * executions had none; an unknown query, or one without plan-node data,
 * gets one line saying so (and the latter a NOTICE naming the setting).
 * "tiering" (1.4) adds tiered JIT's line to the header and to each node
 * that a round compiled.
 */
static Datum
explain_rows(FunctionCallInfo fcinfo, bool tiering)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		queryid = PG_GETARG_INT64(0);
	NodeRow    *rows;
	QueryRow   *qs;
	int			nrows;
	int			nq;
	ExplainNode *nodes;
	int			n = 0;
	int64		qsamples = 0;
	int64		self_sum = 0;
	bool		all = jp_reader_sees_all();
	Oid			me = GetUserId();
	StringInfoData line;
	HASHCTL		ctl;
	HTAB	   *byid;
	int		   *up;

	jp_store_require();
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	rows = jp_plan_rows_copy(true, queryid, &nrows, &qs, &nq);
	nodes = palloc0(sizeof(ExplainNode) * Max(nrows, 1));

	/* the nodes in the order their plan_node_id first occurs in the rows */
	ctl.keysize = sizeof(int32);
	ctl.entrysize = sizeof(ExplainNodeRef);
	ctl.hcxt = CurrentMemoryContext;
	byid = hash_create("jitprof explain nodes", Max(nrows, 16), &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int i = 0; i < nrows; i++)
	{
		NodeRow    *r = &rows[i];
		ExplainNodeRef *ref;
		bool		found;
		int			k;

		CHECK_FOR_INTERRUPTS();
		if (!r->visible)
			continue;
		ref = hash_search(byid, &r->e.key.plan_node_id, HASH_ENTER, &found);
		if (!found)
		{
			ref->index = n;
			nodes[n].id = r->e.key.plan_node_id;
			nodes[n].parent = -1;
			n++;
		}
		k = ref->index;
		if (r->e.has_shape && nodes[k].label == NULL)
		{
			nodes[k].label = r->e.label;
			nodes[k].parent = r->e.parent;
		}
		nodes[k].self += r->e.self_samples;
		nodes[k].total += r->total_samples;
		nodes[k].jit += r->e.jit_self_samples;
		nodes[k].compile += r->e.jit_compile_samples;
		nodes[k].tier_rounds += r->e.tier_rounds;
		nodes[k].tier_round_evaluations += r->e.tier_round_evaluations;
		nodes[k].tier_compile_ns += r->e.tier_compile_ns;
		self_sum += r->e.self_samples;
	}

	initStringInfo(&line);
	if (!explain_header(rsinfo, queryid, qs, nq, all, me, n, tiering,
						&qsamples, &line))
		return (Datum) 0;
	if (n > 0)
		find_top_steps(nodes, n, queryid, all, me);

	/*
	 * Each node's parent among the nodes (a node is not its own), and its
	 * children in the order of the node array.
	 */
	up = palloc(sizeof(int) * n);
	for (int i = 0; i < n; i++)
	{
		ExplainNodeRef *ref = hash_search(byid, &nodes[i].parent,
										  HASH_FIND, NULL);

		up[i] = (ref != NULL && ref->index != i) ? ref->index : -1;
		nodes[i].first_child = -1;
		nodes[i].next_sibling = -1;
	}
	for (int i = n - 1; i >= 0; i--)
	{
		if (up[i] < 0)
			continue;
		nodes[i].next_sibling = nodes[up[i]].first_child;
		nodes[up[i]].first_child = i;
	}

	/* roots: nodes whose parent is not among the nodes */
	for (int i = 0; i < n; i++)
		if (up[i] < 0)
			explain_node(rsinfo, nodes, i, 0, qsamples, tiering, &line);
	resetStringInfo(&line);
	appendStringInfo(&line, "outside any node: %.1f%%",
					 jp_share_pct(Max(qsamples - self_sum, 0), qsamples));
	jp_put_text_row(rsinfo, line.data);
	return (Datum) 0;
}

Datum
jitprof_explain_1_1(PG_FUNCTION_ARGS)
{
	return explain_rows(fcinfo, false);
}

Datum
jitprof_explain_1_4(PG_FUNCTION_ARGS)
{
	return explain_rows(fcinfo, true);
}
