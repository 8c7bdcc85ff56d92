/*-------------------------------------------------------------------------
 *
 * plan_nodes.c
 *	  The plan-node profile (extension version 1.1): jitprof_plan_nodes, and
 *	  the copy of the plan-node rows with their totals that jitprof_explain
 *	  (plan_explain.c) and jitprof_folded (plan_folded.c) work on.
 *
 * The store keeps per plan node only its self, JIT code and JIT compile
 * samples and the plan's shape; a node's total (the sum of self over its
 * subtree) and the query's "outside any node" row are computed here, so
 * that a query's nodes and that row add up to its samples exactly.
 * A query's samples here are those of its executions that had plan-node
 * data (JpStoreEntry.node_samples): executions run with jitprof.plan_nodes
 * off add to jitprof_queries, not to any node or to "outside any node".
 *
 * Contract: each function of the three files works on copies of the store's
 * entries and plan-node rows, each taken under the lock in shared mode, in
 * O(n log n) of the rows, and its loops check for interrupts.  Another
 * user's rows show no query ID unless the reader may see all statistics, and
 * jitprof_explain and the folded paths use only the rows the reader may
 * see.  The columns: doc/plan_nodes.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/plan_nodes.c
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

PG_FUNCTION_INFO_V1(jitprof_plan_nodes_1_1);

#define PLAN_NODES_COLS 14

/* a plan-node row's key and place in the copy, sorted instead of the row */
typedef struct RowOrder
{
	JpStoreNodeKey key;
	int			index;
} RowOrder;

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
int
jp_plan_row_find(const NodeRow *rows, int n, int32 id)
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
			up[k] = jp_plan_row_find(rows, n, e->parent);
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
NodeRow    *
jp_plan_rows_copy_after(const JpStoreEntry *entries, int64 nentries,
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
		qs[qcount].node_executions = entry->node_executions;
		qs[qcount].node_samples = entry->node_samples;
		qs[qcount].tiered_executions = entry->tiered_executions;
		qs[qcount].tiering_switches = entry->tiering_switches;
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
			qsamples = qs[q].node_samples;
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

/* jp_plan_rows_copy_after, with a copy of the store's entries taken first */
NodeRow    *
jp_plan_rows_copy(bool one_query, int64 queryid, int *nrows,
				  QueryRow **queries, int *nqueries)
{
	JpStoreEntry *entries;
	int64		nentries;
	NodeRow    *rows;

	entries = jp_store_copy(&nentries);
	rows = jp_plan_rows_copy_after(entries, nentries, one_query, queryid,
								   nrows, queries, nqueries);
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

	rows = jp_plan_rows_copy(false, 0, &nrows, NULL, NULL);
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
