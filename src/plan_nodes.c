/*-------------------------------------------------------------------------
 *
 * plan_nodes.c
 *	  SQL functions of the plan-node profile (extension version 1.1):
 *	  jitprof_plan_nodes, jitprof_explain, and the plan paths that
 *	  jitprof_folded (1.1) puts in front of each JIT function.
 *
 * The store (store.c) keeps per plan node only its self samples, JIT code
 * samples and JIT compile samples, and the plan's shape (parent, node type,
 * label).  A node's total is computed here as the sum of self over its
 * subtree, and the query-level row "outside any node" as the query's
 * samples minus its nodes' self samples, so that for every query the nodes'
 * self samples plus that row add up to query_samples exactly.
 *
 * Locking: each function takes copies of the store's entries and plan-node
 * rows (jp_store_copy, jp_store_copy_nodes: a memcpy loop under the lock in
 * shared mode) and computes and builds its result from them after the lock
 * is released.
 *
 * Privacy as jitprof_hotspots: another user's rows show no query ID unless
 * the reader is a superuser or has pg_read_all_stats; jitprof_explain and
 * the folded paths use only the rows the reader may see.
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

#include "plan_nodes.h"

PG_FUNCTION_INFO_V1(jitprof_plan_nodes_1_1);
PG_FUNCTION_INFO_V1(jitprof_explain_1_1);

#define PLAN_NODES_COLS 14

/* one plan node's row, copied out of the store */
typedef struct NodeRow
{
	JpStoreNodeEntry e;
	int64		total_samples;
	int64		query_samples;
	bool		visible;
} NodeRow;

/* one query's summary, copied out of the store */
typedef struct QueryRow
{
	JpStoreKey	key;
	int64		executions;
	int64		query_samples;
} QueryRow;


static bool
same_query(const JpStoreNodeKey *a, const JpStoreNodeKey *b)
{
	return a->userid == b->userid && a->dbid == b->dbid &&
		a->queryid == b->queryid;
}

static int
row_cmp(const void *a, const void *b)
{
	const JpStoreNodeKey *ka = &((const NodeRow *) a)->e.key;
	const JpStoreNodeKey *kb = &((const NodeRow *) b)->e.key;

	if (ka->userid != kb->userid)
		return ka->userid < kb->userid ? -1 : 1;
	if (ka->dbid != kb->dbid)
		return ka->dbid < kb->dbid ? -1 : 1;
	if (ka->queryid != kb->queryid)
		return ka->queryid < kb->queryid ? -1 : 1;
	if (ka->plan_node_id != kb->plan_node_id)
		return ka->plan_node_id < kb->plan_node_id ? -1 : 1;
	return 0;
}

/*
 * Copy the plan-node rows (all, or those of one query ID) and the summary
 * rows of their queries out of the store, then compute every row's total
 * and query samples.  Rows come sorted by query and plan_node_id.
 */
static NodeRow *
copy_rows(bool one_query, int64 queryid, int *nrows,
		  QueryRow **queries, int *nqueries)
{
	JpStoreNodeEntry *nodes;
	JpStoreEntry *entries;
	int64		nnodes;
	int64		nentries;
	NodeRow    *rows;
	QueryRow   *qs;
	int			count = 0;
	int			qcount = 0;
	bool		all = jp_reader_sees_all();
	Oid			me = GetUserId();

	/* two copies, each taken under the lock; no lock from here on */
	entries = jp_store_copy(&nentries);
	nodes = jp_store_copy_nodes(&nnodes);

	rows = palloc(sizeof(NodeRow) * Max(nnodes, 1));
	for (int64 i = 0; i < nnodes; i++)
	{
		if (one_query && nodes[i].key.queryid != queryid)
			continue;
		rows[count].e = nodes[i];
		rows[count].visible = all || nodes[i].key.userid == me;
		count++;
	}
	pfree(nodes);
	qs = palloc(sizeof(QueryRow) * Max(nentries, 1));
	for (int64 i = 0; i < nentries; i++)
	{
		JpStoreEntry *entry = &entries[i];

		if (entry->key.discriminator != 0)
			continue;
		if (one_query && entry->key.queryid != queryid)
			continue;
		qs[qcount].key = entry->key;
		qs[qcount].executions = entry->executions;
		qs[qcount].query_samples = entry->query_samples;
		qcount++;
	}
	pfree(entries);

	qsort(rows, count, sizeof(NodeRow), row_cmp);

	/* totals: self summed over the subtree, within each query */
	for (int i = 0; i < count;)
	{
		int			j = i;
		int64		qsamples = 0;

		while (j < count && same_query(&rows[i].e.key, &rows[j].e.key))
			j++;
		for (int k = 0; k < qcount; k++)
			if (qs[k].key.userid == rows[i].e.key.userid &&
				qs[k].key.dbid == rows[i].e.key.dbid &&
				qs[k].key.queryid == rows[i].e.key.queryid)
				qsamples = qs[k].query_samples;
		for (int k = i; k < j; k++)
		{
			rows[k].total_samples = 0;
			rows[k].query_samples = qsamples;
		}
		for (int k = i; k < j; k++)
		{
			int32		id = rows[k].e.key.plan_node_id;
			int			hops = 0;

			/* add k's self to itself and to each of its ancestors */
			while (id >= 0 && hops++ <= j - i)
			{
				int			m;

				for (m = i; m < j; m++)
					if (rows[m].e.key.plan_node_id == id)
						break;
				if (m == j)
					break;
				rows[m].total_samples += rows[k].e.self_samples;
				id = rows[m].e.has_shape ? rows[m].e.parent : -1;
			}
		}
		i = j;
	}

	*nrows = count;
	if (queries)
		*queries = qs;
	if (nqueries)
		*nqueries = qcount;
	return rows;
}

static void
put_node_row(ReturnSetInfo *rsinfo, const JpStoreNodeKey *key, bool visible,
			 int32 parent, const char *node_type, const char *label,
			 int64 self, int64 total, int64 jit_self, int64 jit_compile,
			 int64 qsamples)
{
	Datum		values[PLAN_NODES_COLS];
	bool		nulls[PLAN_NODES_COLS];
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	values[i++] = ObjectIdGetDatum(key->userid);
	values[i++] = ObjectIdGetDatum(key->dbid);
	if (visible)
		values[i++] = Int64GetDatum(key->queryid);
	else
		nulls[i++] = true;
	values[i++] = Int32GetDatum(key->plan_node_id);
	if (parent >= 0)
		values[i++] = Int32GetDatum(parent);
	else
		nulls[i++] = true;
	if (node_type != NULL)
		values[i++] = CStringGetTextDatum(node_type);
	else
		nulls[i++] = true;
	if (label != NULL)
		values[i++] = CStringGetTextDatum(label);
	else
		nulls[i++] = true;
	values[i++] = Int64GetDatum(self);
	values[i++] = Int64GetDatum(total);
	values[i++] = Int64GetDatum(jit_self);
	values[i++] = Int64GetDatum(jit_compile);
	values[i++] = Int64GetDatum(qsamples);
	values[i++] = Float8GetDatum(jp_share_pct(self, qsamples));
	values[i++] = Float8GetDatum(jp_share_pct(total, qsamples));
	Assert(i == PLAN_NODES_COLS);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * One row per (user, database, query, plan node), and per query one row
 * with plan_node_id -1 for the samples outside any node.
 */
Datum
jitprof_plan_nodes_1_1(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	NodeRow    *rows;
	int			nrows;

	jp_store_require();
	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == PLAN_NODES_COLS);

	rows = copy_rows(false, 0, &nrows, NULL, NULL);
	for (int i = 0; i < nrows;)
	{
		int			j = i;
		int64		self_sum = 0;
		JpStoreNodeKey okey;

		while (j < nrows && same_query(&rows[i].e.key, &rows[j].e.key))
		{
			NodeRow    *r = &rows[j];

			put_node_row(rsinfo, &r->e.key, r->visible,
						 r->e.has_shape ? r->e.parent : -1,
						 r->e.has_shape ? r->e.node_type : NULL,
						 r->e.has_shape ? r->e.label : NULL,
						 r->e.self_samples,
						 Min(r->total_samples, r->query_samples),
						 r->e.jit_self_samples, r->e.jit_compile_samples,
						 r->query_samples);
			self_sum += r->e.self_samples;
			j++;
		}
		okey = rows[i].e.key;
		okey.plan_node_id = -1;
		put_node_row(rsinfo, &okey, rows[i].visible, -1, "Outside",
					 "[outside any node]",
					 Max(rows[i].query_samples - self_sum, 0),
					 Max(rows[i].query_samples - self_sum, 0), 0, 0,
					 rows[i].query_samples);
		i = j;
	}
	return (Datum) 0;
}

static void
put_text(ReturnSetInfo *rsinfo, const char *text)
{
	Datum		value = CStringGetTextDatum(text);
	bool		isnull = false;

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
}

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
	ExplainTopStep top;			/* jitprof.steps */
} ExplainNode;

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

static void
explain_node(ReturnSetInfo *rsinfo, ExplainNode *nodes, int n, int at,
			 int level, int64 qsamples, StringInfo line)
{
	ExplainNode *x = &nodes[at];

	resetStringInfo(line);
	if (level > 0)
		appendStringInfo(line, "%*s->  ", 6 * (level - 1) + 2, "");
	appendStringInfo(line, "%s  (self %.1f%%, total %.1f%%, JIT code %.1f%%, JIT compile %.1f%%)",
					 x->label ? x->label : "?",
					 jp_share_pct(x->self, qsamples), jp_share_pct(x->total, qsamples),
					 jp_share_pct(x->jit, qsamples), jp_share_pct(x->compile, qsamples));
	put_text(rsinfo, line->data);
	if (x->top.first != NULL)
	{
		/* indented like EXPLAIN's detail lines */
		resetStringInfo(line);
		appendStringInfo(line, "%*sTop JIT step: %s ",
						 level > 0 ? 6 * level : 2, "", x->top.first->role);
		append_top_step(line, &x->top);
		appendStringInfo(line, " (%.1f%%)",
						 jp_share_pct(x->top.total, qsamples));
		put_text(rsinfo, line->data);
	}
	for (int i = 0; i < n; i++)
		if (i != at && nodes[i].parent == x->id && level < 64)
			explain_node(rsinfo, nodes, n, i, level + 1, qsamples, line);
}

/*
 * The plan of one query as EXPLAIN lays it out, each node annotated with
 * its share of the query's samples: self, total, JIT code, JIT compile.
 */
Datum
jitprof_explain_1_1(PG_FUNCTION_ARGS)
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
	int64		executions = 0;
	int64		self_sum = 0;
	bool		all = jp_reader_sees_all();
	Oid			me = GetUserId();
	StringInfoData line;

	jp_store_require();
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	rows = copy_rows(true, queryid, &nrows, &qs, &nq);
	nodes = palloc0(sizeof(ExplainNode) * Max(nrows, 1));
	for (int i = 0; i < nq; i++)
	{
		if (!(all || qs[i].key.userid == me))
			continue;
		qsamples += qs[i].query_samples;
		executions += qs[i].executions;
	}
	for (int i = 0; i < nrows; i++)
	{
		NodeRow    *r = &rows[i];
		int			k;

		if (!r->visible)
			continue;
		for (k = 0; k < n; k++)
			if (nodes[k].id == r->e.key.plan_node_id)
				break;
		if (k == n)
		{
			nodes[n].id = r->e.key.plan_node_id;
			nodes[n].parent = -1;
			n++;
		}
		if (r->e.has_shape && nodes[k].label == NULL)
		{
			nodes[k].label = r->e.label;
			nodes[k].parent = r->e.parent;
		}
		nodes[k].self += r->e.self_samples;
		nodes[k].total += r->total_samples;
		nodes[k].jit += r->e.jit_self_samples;
		nodes[k].compile += r->e.jit_compile_samples;
		self_sum += r->e.self_samples;
	}
	if (n == 0)
		return (Datum) 0;
	find_top_steps(nodes, n, queryid, all, me);

	initStringInfo(&line);
	appendStringInfo(&line, "query " INT64_FORMAT ": " INT64_FORMAT " samples in " INT64_FORMAT " executions",
					 queryid, qsamples, executions);
	put_text(rsinfo, line.data);

	/* roots: nodes whose parent is not among the nodes */
	for (int i = 0; i < n; i++)
	{
		bool		has_parent = false;

		for (int k = 0; k < n; k++)
			if (k != i && nodes[k].id == nodes[i].parent)
				has_parent = true;
		if (!has_parent)
			explain_node(rsinfo, nodes, n, i, 0, qsamples, &line);
	}
	resetStringInfo(&line);
	appendStringInfo(&line, "outside any node: %.1f%%",
					 jp_share_pct(Max(qsamples - self_sum, 0), qsamples));
	put_text(rsinfo, line.data);
	return (Datum) 0;
}

/*
 * For jitprof_folded (1.1): the visible plan-node rows' shapes, copied out
 * of the store, so that a JIT function's line can start with its node's
 * path from the plan's root.
 */
JpPlanPaths *
jp_plan_paths_copy(void)
{
	JpPlanPaths *paths = palloc0(sizeof(JpPlanPaths));

	paths->rows = copy_rows(false, 0, &paths->nrows, NULL, NULL);
	return paths;
}

static NodeRow *
find_row(const JpPlanPaths *paths, Oid userid, Oid dbid, int64 queryid,
		 int32 id)
{
	NodeRow    *rows = (NodeRow *) paths->rows;
	int			lo = 0;
	int			hi = paths->nrows - 1;
	NodeRow		key;

	memset(&key, 0, sizeof(key));
	key.e.key.userid = userid;
	key.e.key.dbid = dbid;
	key.e.key.queryid = queryid;
	key.e.key.plan_node_id = id;
	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			c = row_cmp(&key, &rows[mid]);

		if (c == 0)
			return &rows[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return NULL;
}

/*
 * Append "Agg#0;Sort#1;SeqScan#2" for plan node "id" of a query; false
 * (nothing appended) when its shape is unknown.
 */
bool
jp_plan_path(const JpPlanPaths *paths, Oid userid, Oid dbid, int64 queryid,
			 int32 id, StringInfo out)
{
	int32		chain[64];
	const char *types[64];
	int			n = 0;

	while (id >= 0 && n < lengthof(chain))
	{
		NodeRow    *r = find_row(paths, userid, dbid, queryid, id);

		if (r == NULL || !r->e.has_shape)
			return false;
		chain[n] = id;
		types[n] = r->e.node_type;
		n++;
		id = r->e.parent;
	}
	for (int i = n - 1; i >= 0; i--)
		appendStringInfo(out, "%s%s#%d", i == n - 1 ? "" : ";",
						 types[i], chain[i]);
	return n > 0;
}

/* the rows of the copy, for the folded lines of the nodes themselves */
int
jp_plan_paths_count(const JpPlanPaths *paths)
{
	return paths->nrows;
}

void
jp_plan_paths_row(const JpPlanPaths *paths, int i, JpStoreNodeKey *key,
				  int64 *self_samples, int64 *query_samples, bool *visible)
{
	const NodeRow *r = &((const NodeRow *) paths->rows)[i];

	*key = r->e.key;
	*self_samples = r->e.self_samples;
	*query_samples = r->query_samples;
	*visible = r->visible;
}

/* a JIT function's row, copied out of the store for jitprof_folded */
typedef struct FoldedFunction
{
	JpStoreKey	key;
	int64		self_samples;
	int64		total_samples;
	char		node_type[JP_NODE_TYPE_LEN];
	char		role[JP_ROLE_LEN];
	char		ordinal[16];
} FoldedFunction;

/*
 * jitprof_folded (1.1): the profile as folded stacks whose frames are the
 * plan path of each JIT function, "q<queryid>;Agg#0;Sort#1;SeqScan#2;qual
 * <samples>".  A plan node's samples outside its JIT functions end in the
 * node itself; a query's samples outside any node end in "[outside any
 * node]" (or "[outside JIT]" for a query without a plan-node profile).
 */
PG_FUNCTION_INFO_V1(jitprof_folded_1_1);

Datum
jitprof_folded_1_1(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		all;
	Oid			me = GetUserId();
	JpStoreEntry *entries;
	JpStoreEntry *entry;
	int64		nentries;
	FoldedFunction *fns;
	QueryRow   *qs;
	int			nfns = 0;
	int			nq = 0;
	JpPlanPaths *paths;
	int64	   *fn_total_of_row;
	StringInfoData line;

	jp_store_require();
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	all = jp_reader_sees_all();

	entries = jp_store_copy(&nentries);
	fns = palloc(sizeof(FoldedFunction) * Max(nentries, 1));
	qs = palloc(sizeof(QueryRow) * Max(nentries, 1));
	for (entry = entries; entry < entries + nentries; entry++)
	{
		if (!(all || entry->key.userid == me))
			continue;
		if (entry->key.discriminator == 0)
		{
			qs[nq].key = entry->key;
			qs[nq].executions = entry->executions;
			qs[nq].query_samples = entry->query_samples;
			nq++;
		}
		else
		{
			FoldedFunction *f;
			const char *ordinal;

			f = &fns[nfns++];
			f->key = entry->key;
			f->self_samples = entry->self_samples;
			f->total_samples = entry->total_samples;
			strlcpy(f->node_type, entry->node_type, JP_NODE_TYPE_LEN);
			strlcpy(f->role, entry->role, JP_ROLE_LEN);
			/* keep the ordinal of a node's second, third... function */
			ordinal = strrchr(entry->symbol, '_');
			if (ordinal == NULL || ordinal[1] == '\0' ||
				strspn(ordinal + 1, "0123456789") != strlen(ordinal + 1))
				ordinal = "";
			strlcpy(f->ordinal, ordinal, sizeof(f->ordinal));
		}
	}
	pfree(entries);

	/* no lock from here on */
	paths = jp_plan_paths_copy();
	fn_total_of_row = palloc0(sizeof(int64) * Max(paths->nrows, 1));
	initStringInfo(&line);

	for (int i = 0; i < nfns; i++)
	{
		FoldedFunction *f = &fns[i];
		NodeRow    *r;

		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";", f->key.queryid);
		if (!jp_plan_path(paths, f->key.userid, f->key.dbid, f->key.queryid,
						  f->key.plan_node_id, &line))
			appendStringInfo(&line, "%s#%d",
							 f->node_type[0] ? f->node_type : "JIT",
							 f->key.plan_node_id);
		appendStringInfo(&line, ";%s%s", f->role, f->ordinal);
		r = find_row(paths, f->key.userid, f->key.dbid, f->key.queryid,
					 f->key.plan_node_id);
		if (r != NULL)
			fn_total_of_row[r - (NodeRow *) paths->rows] += f->total_samples;
		if (f->self_samples > 0)
		{
			int			len = line.len;

			appendStringInfo(&line, " " INT64_FORMAT, f->self_samples);
			put_text(rsinfo, line.data);
			line.len = len;
			line.data[len] = '\0';
		}
		if (f->total_samples > f->self_samples)
		{
			appendStringInfo(&line, ";[called from JIT] " INT64_FORMAT,
							 f->total_samples - f->self_samples);
			put_text(rsinfo, line.data);
		}
	}

	/* each node's samples outside its JIT functions */
	for (int i = 0; i < paths->nrows; i++)
	{
		NodeRow    *r = &((NodeRow *) paths->rows)[i];
		int64		rest = r->e.self_samples - fn_total_of_row[i];

		if (!r->visible || rest <= 0)
			continue;
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";", r->e.key.queryid);
		if (!jp_plan_path(paths, r->e.key.userid, r->e.key.dbid,
						  r->e.key.queryid, r->e.key.plan_node_id, &line))
			appendStringInfo(&line, "Node#%d", r->e.key.plan_node_id);
		appendStringInfo(&line, " " INT64_FORMAT, rest);
		put_text(rsinfo, line.data);
	}

	/* each query's samples outside any node (or outside JIT) */
	for (int i = 0; i < nq; i++)
	{
		int64		in_nodes = 0;
		int64		in_jit = 0;
		bool		has_nodes = false;
		int64		outside;

		for (int k = 0; k < paths->nrows; k++)
		{
			NodeRow    *r = &((NodeRow *) paths->rows)[k];

			if (r->e.key.userid == qs[i].key.userid &&
				r->e.key.dbid == qs[i].key.dbid &&
				r->e.key.queryid == qs[i].key.queryid)
			{
				has_nodes = true;
				in_nodes += r->e.self_samples;
			}
		}
		for (int k = 0; k < nfns; k++)
			if (fns[k].key.userid == qs[i].key.userid &&
				fns[k].key.dbid == qs[i].key.dbid &&
				fns[k].key.queryid == qs[i].key.queryid)
				in_jit += fns[k].total_samples;
		outside = qs[i].query_samples - (has_nodes ? in_nodes : in_jit);
		if (outside <= 0)
			continue;
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";%s " INT64_FORMAT,
						 qs[i].key.queryid,
						 has_nodes ? "[outside any node]" : "[outside JIT]",
						 outside);
		put_text(rsinfo, line.data);
	}
	return (Datum) 0;
}
