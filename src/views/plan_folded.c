/*-------------------------------------------------------------------------
 *
 * plan_folded.c
 *	  jitprof_folded (extension version 1.1): the profile as folded stacks
 *	  whose frames are each JIT function's plan path from the plan's root,
 *	  "q<queryid>;Agg#0;Sort#1;SeqScan#2;qual <samples>".
 *
 * It works on a copy of the store's entries and of the plan-node rows
 * (jp_plan_rows_copy_after), each taken under the store's lock in shared
 * mode, after the lock is released; its loops check for interrupts.  Only
 * the rows the reader may see are used (privacy as jitprof_hotspots).
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

/* plan-node rows copied out of the store (no lock held) */
typedef struct JpPlanPaths
{
	NodeRow    *rows;
	int			nrows;
	HTAB	   *index;			/* a row's place in rows, by its key */
} JpPlanPaths;

/* a plan-node row's place in the copy, by key (JpPlanPaths.index) */
typedef struct RowRef
{
	JpStoreNodeKey key;			/* hash key: must be first */
	int			index;
} RowRef;

/*
 * For jitprof_folded (1.1): the plan-node rows and their shapes, copied out
 * of the store after "entries" (the caller's copy of its entries), so that
 * a JIT function's line can start with its node's path from the plan's
 * root.
 */
static JpPlanPaths *
plan_paths_copy(const JpStoreEntry *entries, int64 nentries)
{
	JpPlanPaths *paths = palloc0(sizeof(JpPlanPaths));
	NodeRow    *rows;
	HASHCTL		ctl;

	rows = jp_plan_rows_copy_after(entries, nentries, false, 0, &paths->nrows,
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
	return ref != NULL ? &paths->rows[ref->index] : NULL;
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
	const NodeRow *rows = paths->rows;
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

/* a JIT function's row, copied out of the store for jitprof_folded */
typedef struct FoldedFunction
{
	JpStoreKey	key;
	int64		self_samples;
	int64		total_samples;
	char		node_type[JP_NODE_TYPE_LEN];
	char		role[JP_ROLE_LEN];
	int32		ordinal;
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

	/* two copies (here and in plan_paths_copy), each under the lock */
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

			f = &fns[nfns++];
			f->key = entry->key;
			f->self_samples = entry->self_samples;
			f->total_samples = entry->total_samples;
			strlcpy(f->node_type, entry->node_type, JP_NODE_TYPE_LEN);
			strlcpy(f->role, entry->role, JP_ROLE_LEN);
			f->ordinal = entry->ordinal;
		}
	}
	paths = plan_paths_copy(entries, nentries);
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
		appendStringInfoChar(&line, ';');
		jp_append_role(&line, f->role, f->ordinal);
		if (r != NULL)
			fn_total_of_row[r - paths->rows] += f->total_samples;
		jp_put_folded_samples(rsinfo, &line, f->self_samples,
							  f->total_samples);
	}

	/* each node's samples outside its JIT functions */
	for (int i = 0; i < paths->nrows; i++)
	{
		NodeRow    *r = &paths->rows[i];
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
		const JpStoreNodeKey *key = &paths->rows[i].e.key;
		FoldedQuery *fq;

		CHECK_FOR_INTERRUPTS();
		fq = folded_query(queries, key->userid, key->dbid, key->queryid,
						  HASH_FIND);
		if (fq != NULL)
		{
			fq->has_nodes = true;
			fq->in_nodes += paths->rows[i].e.self_samples;
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
