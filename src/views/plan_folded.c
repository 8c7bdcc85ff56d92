/*-------------------------------------------------------------------------
 *
 * plan_folded.c
 *	  jitprof_folded, each version's C function: the profile as folded
 *	  stacks for flame-graph tools.  1.0's frames are a function's plan node
 *	  and role; 1.1's are its plan path from the plan's root,
 *	  "q<queryid>;Agg#0;Sort#1;SeqScan#2;qual <samples>".  Rows of another
 *	  user that the reader may not see are left out.
 *
 * It works on a copy of the store's entries and of the plan-node rows
 * (jp_plan_rows_copy_after), each taken under the store's lock in shared
 * mode, after the lock is released; its loops check for interrupts.  Only
 * the rows the reader may see are used (privacy as jitprof_hotspots).
 *
 * Its time is linear in the entries and rows (the rows' sort aside): one
 * hash table by query holds where each query's plan-node rows are in the
 * sorted copy and what its rows and functions add up to, so a function
 * finds its plan node's row with one hash lookup and a binary search among
 * its query's few rows.  Functions without samples print nothing and add
 * nothing, and are passed over at once.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/plan_folded.c
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

/* the parts of the query key that a query's rows and functions share */
typedef struct FoldedQueryKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
} FoldedQueryKey;

/*
 * One query: where its plan-node rows are in the sorted copy, and what its
 * rows and its JIT functions add up to.
 */
typedef struct FoldedQuery
{
	FoldedQueryKey key;			/* hash key: must be first */
	int			first_row;		/* its rows: rows[first_row .. + nrows - 1] */
	int			nrows;			/* 0: no plan-node profile */
	int64		in_nodes;		/* self samples of its plan-node rows */
	int64		in_jit;			/* total samples of its JIT functions */
} FoldedQuery;

/* a query's summary row the reader may see */
typedef struct FoldedSummary
{
	const JpStoreEntry *entry;
	FoldedQuery *query;
} FoldedSummary;

static FoldedQuery *
folded_query(HTAB *queries, Oid userid, Oid dbid, int64 queryid,
			 HASHACTION action)
{
	FoldedQueryKey key;
	FoldedQuery *fq;
	bool		found;

	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;
	fq = hash_search(queries, &key, action, &found);
	if (fq != NULL && !found)
	{
		fq->first_row = 0;
		fq->nrows = 0;
		fq->in_nodes = 0;
		fq->in_jit = 0;
	}
	return fq;
}

/*
 * Append the path of plan node "id", whose row is "r" (NULL: none), from
 * the plan's root; false (nothing appended) when a shape on it is unknown.
 * Parents are followed through each row's "up".
 */
static bool
append_path(const NodeRow *rows, const NodeRow *r, int32 id, StringInfo out)
{
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
 * A JIT function's last frame in a folded line: its role, and its number
 * when it is not the first of its plan node and role ("qual_2"), from the
 * store entry's ordinal, as its symbol ends.
 */
void
jp_append_role(StringInfo line, const char *role, int32 ordinal)
{
	appendStringInfoString(line, role);
	if (ordinal > 1)
		appendStringInfo(line, "_%d", ordinal);
}

/*
 * The folded lines of one JIT function whose stack is in *line: its self
 * samples, then the samples of PostgreSQL code it called.  *line is left
 * as it came.
 */
void
jp_put_folded_samples(ReturnSetInfo *rsinfo, StringInfo line,
					  int64 self_samples, int64 total_samples)
{
	int			len = line->len;

	if (self_samples > 0)
	{
		appendStringInfo(line, " " INT64_FORMAT, self_samples);
		jp_put_text_row(rsinfo, line->data);
		line->len = len;
		line->data[len] = '\0';
	}
	if (total_samples > self_samples)
	{
		appendStringInfo(line, ";[called from JIT] " INT64_FORMAT,
						 total_samples - self_samples);
		jp_put_text_row(rsinfo, line->data);
		line->len = len;
		line->data[len] = '\0';
	}
}

/*
 * The profile in the folded-stack format of flame-graph tools, one line per
 * stack: "q<queryid>;<NodeType>#<plan_node_id>;<role> <samples>".  Self
 * samples of a JIT function end in its role; samples in PostgreSQL code it
 * called end in "<role>;[called from JIT]"; the rest of a query's samples
 * end in "[outside JIT]".
 */
PG_FUNCTION_INFO_V1(jitprof_folded_1_0);

Datum
jitprof_folded_1_0(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		see_all;
	Oid			me = GetUserId();
	HTAB	   *totals;
	HASH_SEQ_STATUS status;
	JpStoreEntry *entries;
	JpStoreEntry *entry;
	int64		nentries;
	JpQueryTotals *t;
	StringInfoData line;

	jp_store_require();
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	see_all = jp_reader_sees_all();
	initStringInfo(&line);

	entries = jp_store_copy(&nentries);
	for (entry = entries; entry < entries + nentries; entry++)
	{
		CHECK_FOR_INTERRUPTS();
		if (entry->key.discriminator == 0 ||
			!(see_all || entry->key.userid == me))
			continue;

		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";%s#%d;",
						 entry->key.queryid,
						 entry->node_type[0] ? entry->node_type : "JIT",
						 entry->key.plan_node_id);
		jp_append_role(&line, entry->role, entry->ordinal);
		jp_put_folded_samples(rsinfo, &line, entry->self_samples,
							  entry->total_samples);
	}
	pfree(entries);

	totals = jp_query_totals();
	hash_seq_init(&status, totals);
	while ((t = hash_seq_search(&status)) != NULL)
	{
		int64		outside;

		CHECK_FOR_INTERRUPTS();
		if (!t->has_summary || !(see_all || t->key.userid == me))
			continue;
		outside = t->query_samples - t->jit_total_samples;
		if (outside <= 0)
			continue;
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";[outside JIT] " INT64_FORMAT,
						 t->key.queryid, outside);
		jp_put_text_row(rsinfo, line.data);
	}
	hash_destroy(totals);

	return (Datum) 0;
}

/*
 * jitprof_folded (1.1): the profile as folded stacks whose frames are the
 * plan path of each JIT function, "q<queryid>;Agg#0;Sort#1;SeqScan#2;qual
 * <samples>".  A plan node's samples outside its JIT functions end in the
 * node itself; a query's samples outside any node end in "[outside any
 * node]" (or "[outside JIT]" for a query without a plan-node profile).
 * Lines come in this order: the functions' in the order of the store's
 * copy, the nodes' in the order of the rows (by query and plan node), the
 * queries' in the order of the copy.
 */
PG_FUNCTION_INFO_V1(jitprof_folded_1_1);

Datum
jitprof_folded_1_1(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		all;
	Oid			me = GetUserId();
	JpStoreEntry *entries;
	int64		nentries;
	NodeRow    *rows;
	int			nrows;
	const JpStoreEntry **fns;
	FoldedSummary *qs;
	int			nfns = 0;
	int			nq = 0;
	int64	   *fn_total_of_row;
	StringInfoData line;
	HASHCTL		ctl;
	HTAB	   *queries;

	jp_store_require();
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	all = jp_reader_sees_all();

	/* two copies (here and in jp_plan_rows_copy_after), each under the lock */
	entries = jp_store_copy(&nentries);
	rows = jp_plan_rows_copy_after(entries, nentries, false, 0, &nrows,
								   NULL, NULL);

	/* each query's rows (sorted by query) and their self samples */
	ctl.keysize = sizeof(FoldedQueryKey);
	ctl.entrysize = sizeof(FoldedQuery);
	ctl.hcxt = CurrentMemoryContext;
	queries = hash_create("jitprof folded queries", Max(nentries / 4, 256), &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int i = 0; i < nrows;)
	{
		const JpStoreNodeKey *key = &rows[i].e.key;
		FoldedQuery *fq;
		int			j;

		CHECK_FOR_INTERRUPTS();
		fq = folded_query(queries, key->userid, key->dbid, key->queryid,
						  HASH_ENTER);
		fq->first_row = i;
		for (j = i; j < nrows && rows[j].e.key.userid == key->userid &&
			 rows[j].e.key.dbid == key->dbid &&
			 rows[j].e.key.queryid == key->queryid; j++)
			fq->in_nodes += rows[j].e.self_samples;
		fq->nrows = j - i;
		i = j;
	}

	/* the summary rows and the functions with samples the reader may see */
	fns = palloc(sizeof(JpStoreEntry *) * Max(nentries, 1));
	qs = palloc(sizeof(FoldedSummary) * Max(nentries, 1));
	for (const JpStoreEntry *entry = entries; entry < entries + nentries;
		 entry++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!(all || entry->key.userid == me))
			continue;
		if (entry->key.discriminator == 0)
		{
			qs[nq].entry = entry;
			qs[nq].query = folded_query(queries, entry->key.userid,
										entry->key.dbid, entry->key.queryid,
										HASH_ENTER);
			nq++;
		}
		else if (entry->total_samples != 0 || entry->self_samples > 0)
			fns[nfns++] = entry;
	}

	/* each function's lines, with its plan node's path when known */
	fn_total_of_row = palloc0(sizeof(int64) * Max(nrows, 1));
	initStringInfo(&line);
	for (int i = 0; i < nfns; i++)
	{
		const JpStoreEntry *f = fns[i];
		FoldedQuery *fq;
		const NodeRow *r = NULL;

		CHECK_FOR_INTERRUPTS();
		fq = folded_query(queries, f->key.userid, f->key.dbid, f->key.queryid,
						  HASH_FIND);
		if (fq != NULL)
		{
			int			k = jp_plan_row_find(rows + fq->first_row, fq->nrows,
											 f->key.plan_node_id);

			if (k >= 0)
				r = &rows[fq->first_row + k];
			fq->in_jit += f->total_samples;
		}
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";", f->key.queryid);
		if (!append_path(rows, r, f->key.plan_node_id, &line))
			appendStringInfo(&line, "%s#%d",
							 f->node_type[0] ? f->node_type : "JIT",
							 f->key.plan_node_id);
		appendStringInfoChar(&line, ';');
		jp_append_role(&line, f->role, f->ordinal);
		if (r != NULL)
			fn_total_of_row[r - rows] += f->total_samples;
		jp_put_folded_samples(rsinfo, &line, f->self_samples,
							  f->total_samples);
	}

	/* each node's samples outside its JIT functions */
	for (int i = 0; i < nrows; i++)
	{
		NodeRow    *r = &rows[i];
		int64		rest = r->e.self_samples - fn_total_of_row[i];

		CHECK_FOR_INTERRUPTS();
		if (!r->visible || rest <= 0)
			continue;
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";", r->e.key.queryid);
		if (!append_path(rows, r, r->e.key.plan_node_id, &line))
			appendStringInfo(&line, "Node#%d", r->e.key.plan_node_id);
		appendStringInfo(&line, " " INT64_FORMAT, rest);
		jp_put_text_row(rsinfo, line.data);
	}

	/* each query's samples outside any node (or outside JIT) */
	for (int i = 0; i < nq; i++)
	{
		const FoldedQuery *fq = qs[i].query;
		int64		outside;

		CHECK_FOR_INTERRUPTS();
		outside = qs[i].entry->query_samples -
			(fq->nrows > 0 ? fq->in_nodes : fq->in_jit);
		if (outside <= 0)
			continue;
		resetStringInfo(&line);
		appendStringInfo(&line, "q" INT64_FORMAT ";%s " INT64_FORMAT,
						 qs[i].entry->key.queryid,
						 fq->nrows > 0 ? "[outside any node]" : "[outside JIT]",
						 outside);
		jp_put_text_row(rsinfo, line.data);
	}
	hash_destroy(queries);
	return (Datum) 0;
}
