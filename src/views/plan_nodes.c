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
 * is released.  It works in O(n log n) of the rows it copied (sorted rows
 * walked in step, binary search, hash tables by query or by plan node), and
 * its loops check for interrupts, so that statement_timeout stops a reader
 * of a big store.
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

#include "views/views.h"

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
	int			up;				/* its parent's row, or -1 */
} NodeRow;

/* a plan-node row's place in the copy, by key (JpPlanPaths.index) */
typedef struct RowRef
{
	JpStoreNodeKey key;			/* hash key: must be first */
	int			index;
} RowRef;

/* a plan-node row's key and place in the copy, sorted instead of the row */
typedef struct RowOrder
{
	JpStoreNodeKey key;
	int			index;
} RowOrder;

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

/* the order of queries: user, database, query ID */
static int
query_order(Oid userid_a, Oid dbid_a, int64 queryid_a,
			Oid userid_b, Oid dbid_b, int64 queryid_b)
{
	if (userid_a != userid_b)
		return userid_a < userid_b ? -1 : 1;
	if (dbid_a != dbid_b)
		return dbid_a < dbid_b ? -1 : 1;
	if (queryid_a != queryid_b)
		return queryid_a < queryid_b ? -1 : 1;
	return 0;
}

/* plan-node rows by query, then plan_node_id */
static int
row_order_cmp(const void *a, const void *b)
{
	const JpStoreNodeKey *ka = &((const RowOrder *) a)->key;
	const JpStoreNodeKey *kb = &((const RowOrder *) b)->key;
	int			c = query_order(ka->userid, ka->dbid, ka->queryid,
								kb->userid, kb->dbid, kb->queryid);

	if (c != 0)
		return c;
	if (ka->plan_node_id != kb->plan_node_id)
		return ka->plan_node_id < kb->plan_node_id ? -1 : 1;
	return 0;
}

/* summary rows in the same order of queries */
static int
query_row_cmp(const void *a, const void *b)
{
	const JpStoreKey *ka = &((const QueryRow *) a)->key;
	const JpStoreKey *kb = &((const QueryRow *) b)->key;

	return query_order(ka->userid, ka->dbid, ka->queryid,
					   kb->userid, kb->dbid, kb->queryid);
}

/* index of plan node "id" among the rows of one query, or -1 */
static int
find_in_query(const NodeRow *rows, int n, int32 id)
{
	int			lo = 0;
	int			hi = n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (rows[mid].e.key.plan_node_id == id)
			return mid;
		if (rows[mid].e.key.plan_node_id > id)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

/*
 * Set each row's total: its self samples plus those of every row below it,
 * for the rows of one query, sorted by plan_node_id.  Children are summed
 * into their parent before the parent into its own (leaves first), so each
 * row is visited once.  The shapes of one query's plans form a tree (a
 * node's shape comes from the first plan that had it, and that plan holds
 * its parent too), but a damaged stats file could hold a cycle of parents:
 * then each row's self is added along its chain of ancestors, at most n + 1
 * of them, the sum it had before this was made linear.  "up", "pending" and
 * "queue" are work arrays of n elements.
 */
static void
subtree_totals(NodeRow *rows, int n, int *up, int *pending, int *queue)
{
	int			head = 0;
	int			tail = 0;

	for (int k = 0; k < n; k++)
	{
		const JpStoreNodeEntry *e = &rows[k].e;

		up[k] = -1;
		pending[k] = 0;
		rows[k].total_samples = e->key.plan_node_id >= 0 ? e->self_samples : 0;
		if (e->key.plan_node_id >= 0 && e->has_shape && e->parent >= 0)
			up[k] = find_in_query(rows, n, e->parent);
	}
	for (int k = 0; k < n; k++)
		if (up[k] >= 0)
			pending[up[k]]++;
	for (int k = 0; k < n; k++)
		if (pending[k] == 0)
			queue[tail++] = k;
	while (head < tail)
	{
		int			k = queue[head++];

		if (up[k] >= 0)
		{
			rows[up[k]].total_samples += rows[k].total_samples;
			if (--pending[up[k]] == 0)
				queue[tail++] = up[k];
		}
	}
	if (tail == n)
		return;

	/* a cycle */
	for (int k = 0; k < n; k++)
		rows[k].total_samples = 0;
	for (int k = 0; k < n; k++)
	{
		int			hops = 0;

		CHECK_FOR_INTERRUPTS();
		if (rows[k].e.key.plan_node_id < 0)
			continue;
		for (int m = k; m >= 0 && hops++ <= n; m = up[m])
			rows[m].total_samples += rows[k].e.self_samples;
	}
}

/*
 * Copy the plan-node rows (all, or those of one query ID) out of the store,
 * and take the summary rows of their queries from "entries" (a copy of the
 * store's entries, taken before), then compute every row's total and query
 * samples.  Rows come sorted by query and plan_node_id, the summary rows
 * (*queries) by query.
 */
static NodeRow *
copy_rows_after(const JpStoreEntry *entries, int64 nentries,
				bool one_query, int64 queryid, int *nrows,
				QueryRow **queries, int *nqueries)
{
	JpStoreNodeEntry *nodes;
	int64		nnodes;
	NodeRow    *rows;
	QueryRow   *qs;
	int			count = 0;
	int			qcount = 0;
	int			q = 0;
	int		   *work;
	RowOrder   *order;
	bool		all = jp_reader_sees_all();
	Oid			me = GetUserId();

	/* taken under the lock; no lock from here on */
	nodes = jp_store_copy_nodes(&nnodes);

	/* sort the keys, not the rows: a row is some 250 bytes */
	order = palloc(sizeof(RowOrder) * Max(nnodes, 1));
	for (int64 i = 0; i < nnodes; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (one_query && nodes[i].key.queryid != queryid)
			continue;
		order[count].key = nodes[i].key;
		order[count].index = i;
		count++;
	}
	qsort(order, count, sizeof(RowOrder), row_order_cmp);
	rows = palloc(sizeof(NodeRow) * Max(count, 1));
	for (int i = 0; i < count; i++)
	{
		const JpStoreNodeEntry *e = &nodes[order[i].index];

		CHECK_FOR_INTERRUPTS();
		rows[i].e = *e;
		rows[i].visible = all || e->key.userid == me;
	}
	pfree(order);
	pfree(nodes);
	qs = palloc(sizeof(QueryRow) * Max(nentries, 1));
	for (int64 i = 0; i < nentries; i++)
	{
		const JpStoreEntry *entry = &entries[i];

		CHECK_FOR_INTERRUPTS();
		if (entry->key.discriminator != 0)
			continue;
		if (one_query && entry->key.queryid != queryid)
			continue;
		qs[qcount].key = entry->key;
		qs[qcount].executions = entry->executions;
		qs[qcount].query_samples = entry->query_samples;
		qcount++;
	}

	qsort(qs, qcount, sizeof(QueryRow), query_row_cmp);

	/* per query: its summary row (both arrays in query order), totals */
	work = palloc(sizeof(int) * 3 * Max(count, 1));
	for (int i = 0; i < count;)
	{
		const JpStoreNodeKey *key = &rows[i].e.key;
		int			j = i;
		int64		qsamples = 0;

		CHECK_FOR_INTERRUPTS();
		while (j < count && same_query(key, &rows[j].e.key))
			j++;
		while (q < qcount &&
			   query_order(qs[q].key.userid, qs[q].key.dbid, qs[q].key.queryid,
						   key->userid, key->dbid, key->queryid) < 0)
			q++;
		if (q < qcount &&
			query_order(qs[q].key.userid, qs[q].key.dbid, qs[q].key.queryid,
						key->userid, key->dbid, key->queryid) == 0)
			qsamples = qs[q].query_samples;
		for (int k = i; k < j; k++)
			rows[k].query_samples = qsamples;
		subtree_totals(rows + i, j - i, work, work + (j - i),
					   work + 2 * (j - i));
		for (int k = i; k < j; k++)
			rows[k].up = work[k - i] >= 0 ? i + work[k - i] : -1;
		i = j;
	}
	pfree(work);

	*nrows = count;
	if (queries)
		*queries = qs;
	else
		pfree(qs);
	if (nqueries)
		*nqueries = qcount;
	return rows;
}

/* copy_rows_after, with a copy of the store's entries taken first */
static NodeRow *
copy_rows(bool one_query, int64 queryid, int *nrows,
		  QueryRow **queries, int *nqueries)
{
	JpStoreEntry *entries;
	int64		nentries;
	NodeRow    *rows;

	entries = jp_store_copy(&nentries);
	rows = copy_rows_after(entries, nentries, one_query, queryid, nrows,
						   queries, nqueries);
	pfree(entries);
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

			CHECK_FOR_INTERRUPTS();
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

static void
explain_node(ReturnSetInfo *rsinfo, ExplainNode *nodes, int at,
			 int level, int64 qsamples, StringInfo line)
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
	if (level < 64)
		for (int i = x->first_child; i >= 0; i = nodes[i].next_sibling)
			explain_node(rsinfo, nodes, i, level + 1, qsamples, line);
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
	HASHCTL		ctl;
	HTAB	   *byid;
	int		   *up;

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
		self_sum += r->e.self_samples;
	}
	if (n == 0)
		return (Datum) 0;
	find_top_steps(nodes, n, queryid, all, me);

	initStringInfo(&line);
	appendStringInfo(&line, "query " INT64_FORMAT ": " INT64_FORMAT " samples in " INT64_FORMAT " executions",
					 queryid, qsamples, executions);
	jp_put_text_row(rsinfo, line.data);

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
			explain_node(rsinfo, nodes, i, 0, qsamples, &line);
	resetStringInfo(&line);
	appendStringInfo(&line, "outside any node: %.1f%%",
					 jp_share_pct(Max(qsamples - self_sum, 0), qsamples));
	jp_put_text_row(rsinfo, line.data);
	return (Datum) 0;
}

/*
 * For jitprof_folded (1.1): the plan-node rows and their shapes, copied out
 * of the store after "entries" (the caller's copy of its entries), so that
 * a JIT function's line can start with its node's path from the plan's
 * root.
 */
JpPlanPaths *
jp_plan_paths_copy(const JpStoreEntry *entries, int64 nentries)
{
	JpPlanPaths *paths = palloc0(sizeof(JpPlanPaths));
	NodeRow    *rows;
	HASHCTL		ctl;

	rows = copy_rows_after(entries, nentries, false, 0, &paths->nrows,
						   NULL, NULL);
	paths->rows = rows;
	ctl.keysize = sizeof(JpStoreNodeKey);
	ctl.entrysize = sizeof(RowRef);
	ctl.hcxt = CurrentMemoryContext;
	paths->index = hash_create("jitprof plan paths", Max(paths->nrows, 16),
							   &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int i = 0; i < paths->nrows; i++)
	{
		RowRef	   *ref;

		CHECK_FOR_INTERRUPTS();
		/* the store's keys have their padding zeroed, as HASH_BLOBS needs */
		ref = hash_search(paths->index, &rows[i].e.key, HASH_ENTER, NULL);
		ref->index = i;
	}
	return paths;
}

static NodeRow *
find_row(const JpPlanPaths *paths, Oid userid, Oid dbid, int64 queryid,
		 int32 id)
{
	JpStoreNodeKey key;
	RowRef	   *ref;

	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;
	key.plan_node_id = id;
	ref = hash_search(paths->index, &key, HASH_FIND, NULL);
	return ref != NULL ? &((NodeRow *) paths->rows)[ref->index] : NULL;
}

/*
 * Append the path of plan node "id", whose row is "r" (NULL: none), from
 * the plan's root; false (nothing appended) when a shape on it is unknown.
 * Parents are followed through each row's "up".
 */
static bool
append_path(const JpPlanPaths *paths, const NodeRow *r, int32 id,
			StringInfo out)
{
	const NodeRow *rows = (const NodeRow *) paths->rows;
	int32		chain[64];
	const char *types[64];
	int			n = 0;

	while (id >= 0 && n < lengthof(chain))
	{
		if (r == NULL || !r->e.has_shape)
			return false;
		chain[n] = id;
		types[n] = r->e.node_type;
		n++;
		id = r->e.parent;
		r = r->up >= 0 ? &rows[r->up] : NULL;
	}
	for (int i = n - 1; i >= 0; i--)
		appendStringInfo(out, "%s%s#%d", i == n - 1 ? "" : ";",
						 types[i], chain[i]);
	return n > 0;
}

/*
 * Append "Agg#0;Sort#1;SeqScan#2" for plan node "id" of a query; false
 * (nothing appended) when its shape is unknown.
 */
bool
jp_plan_path(const JpPlanPaths *paths, Oid userid, Oid dbid, int64 queryid,
			 int32 id, StringInfo out)
{
	return append_path(paths, id >= 0 ?
					   find_row(paths, userid, dbid, queryid, id) : NULL,
					   id, out);
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

typedef struct FoldedQueryKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
} FoldedQueryKey;

/* what the plan-node rows and JIT functions of one query add up to */
typedef struct FoldedQuery
{
	FoldedQueryKey key;			/* hash key: must be first */
	bool		has_nodes;
	int64		in_nodes;		/* self samples of its plan-node rows */
	int64		in_jit;			/* total samples of its JIT functions */
} FoldedQuery;

static FoldedQuery *
folded_query(HTAB *queries, Oid userid, Oid dbid, int64 queryid,
			 HASHACTION action)
{
	FoldedQueryKey key;

	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;
	return hash_search(queries, &key, action, NULL);
}

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
	HASHCTL		ctl;
	HTAB	   *queries;

	jp_store_require();
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	all = jp_reader_sees_all();

	/* two copies (here and in jp_plan_paths_copy), each under the lock */
	entries = jp_store_copy(&nentries);
	fns = palloc(sizeof(FoldedFunction) * Max(nentries, 1));
	qs = palloc(sizeof(QueryRow) * Max(nentries, 1));
	for (entry = entries; entry < entries + nentries; entry++)
	{
		CHECK_FOR_INTERRUPTS();
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
	paths = jp_plan_paths_copy(entries, nentries);
	pfree(entries);
	fn_total_of_row = palloc0(sizeof(int64) * Max(paths->nrows, 1));
	initStringInfo(&line);

	for (int i = 0; i < nfns; i++)
	{
		FoldedFunction *f = &fns[i];
		NodeRow    *r;

		CHECK_FOR_INTERRUPTS();
		r = find_row(paths, f->key.userid, f->key.dbid, f->key.queryid,
					 f->key.plan_node_id);
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";", f->key.queryid);
		if (!append_path(paths, r, f->key.plan_node_id, &line))
			appendStringInfo(&line, "%s#%d",
							 f->node_type[0] ? f->node_type : "JIT",
							 f->key.plan_node_id);
		appendStringInfo(&line, ";%s%s", f->role, f->ordinal);
		if (r != NULL)
			fn_total_of_row[r - (NodeRow *) paths->rows] += f->total_samples;
		jp_put_folded_samples(rsinfo, &line, f->self_samples,
							  f->total_samples);
	}

	/* each node's samples outside its JIT functions */
	for (int i = 0; i < paths->nrows; i++)
	{
		NodeRow    *r = &((NodeRow *) paths->rows)[i];
		int64		rest = r->e.self_samples - fn_total_of_row[i];

		CHECK_FOR_INTERRUPTS();
		if (!r->visible || rest <= 0)
			continue;
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";", r->e.key.queryid);
		if (!append_path(paths, r, r->e.key.plan_node_id, &line))
			appendStringInfo(&line, "Node#%d", r->e.key.plan_node_id);
		appendStringInfo(&line, " " INT64_FORMAT, rest);
		jp_put_text_row(rsinfo, line.data);
	}

	/*
	 * Each query's samples outside any node (or outside JIT): its nodes' and
	 * functions' sums, gathered in one pass over each through a hash table.
	 */
	ctl.keysize = sizeof(FoldedQueryKey);
	ctl.entrysize = sizeof(FoldedQuery);
	ctl.hcxt = CurrentMemoryContext;
	queries = hash_create("jitprof folded queries", Max(nq, 16), &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int i = 0; i < nq; i++)
	{
		FoldedQuery *fq;

		CHECK_FOR_INTERRUPTS();
		fq = folded_query(queries, qs[i].key.userid, qs[i].key.dbid,
						  qs[i].key.queryid, HASH_ENTER);
		fq->has_nodes = false;
		fq->in_nodes = 0;
		fq->in_jit = 0;
	}
	for (int i = 0; i < paths->nrows; i++)
	{
		const JpStoreNodeKey *key = &((NodeRow *) paths->rows)[i].e.key;
		FoldedQuery *fq;

		CHECK_FOR_INTERRUPTS();
		fq = folded_query(queries, key->userid, key->dbid, key->queryid,
						  HASH_FIND);
		if (fq != NULL)
		{
			fq->has_nodes = true;
			fq->in_nodes += ((NodeRow *) paths->rows)[i].e.self_samples;
		}
	}
	for (int i = 0; i < nfns; i++)
	{
		FoldedQuery *fq;

		CHECK_FOR_INTERRUPTS();
		fq = folded_query(queries, fns[i].key.userid, fns[i].key.dbid,
						  fns[i].key.queryid, HASH_FIND);
		if (fq != NULL)
			fq->in_jit += fns[i].total_samples;
	}
	for (int i = 0; i < nq; i++)
	{
		FoldedQuery *fq;
		int64		outside;

		CHECK_FOR_INTERRUPTS();
		fq = folded_query(queries, qs[i].key.userid, qs[i].key.dbid,
						  qs[i].key.queryid, HASH_FIND);
		outside = qs[i].query_samples -
			(fq->has_nodes ? fq->in_nodes : fq->in_jit);
		if (outside <= 0)
			continue;
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";%s " INT64_FORMAT,
						 qs[i].key.queryid,
						 fq->has_nodes ? "[outside any node]" : "[outside JIT]",
						 outside);
		jp_put_text_row(rsinfo, line.data);
	}
	hash_destroy(queries);
	return (Datum) 0;
}
