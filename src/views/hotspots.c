/*-------------------------------------------------------------------------
 *
 * hotspots.c
 *	  SQL functions over the shared hotspot store: jitprof_hotspots,
 *	  jitprof_queries, jitprof_sampler and jitprof_reset (jitprof_steps is
 *	  in hotspot_steps.c, jitprof_folded and the plan-node functions in
 *	  plan_nodes.c, plan_explain.c and plan_folded.c).
 *
 * Each takes a copy of the store's entries (jp_store_copy, a memcpy loop
 * under the lock in shared mode) and builds its tuplestore from that copy
 * after the lock is released: neither filling the tuplestore nor the caller
 * consuming rows ever holds up a backend flushing its samples.  Each loop
 * over the copy checks for interrupts, so that statement_timeout and a
 * cancel stop a reader of a big store; each runs in time linear in the
 * entries (a hash table sums them per query).
 *
 * Privacy follows pg_stat_statements: a row of another user shows no query
 * ID and no symbol unless the reader is a superuser or has the privileges of
 * pg_read_all_stats.
 *
 * Without shared_preload_libraries there is no store, and every function
 * raises an ERROR saying so.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/hotspots.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "views/views.h"

PG_FUNCTION_INFO_V1(jitprof_hotspots_1_0);
PG_FUNCTION_INFO_V1(jitprof_queries_1_0);
PG_FUNCTION_INFO_V1(jitprof_queries_1_4);
PG_FUNCTION_INFO_V1(jitprof_sampler_1_0);
PG_FUNCTION_INFO_V1(jitprof_sampler_1_1);
PG_FUNCTION_INFO_V1(jitprof_sampler_1_2);
PG_FUNCTION_INFO_V1(jitprof_reset_1_0);

#define HOTSPOTS_COLS	16
#define QUERIES_COLS_1_0	10
#define QUERIES_COLS	15
#define SAMPLER_COLS_1_0	11
#define SAMPLER_COLS_1_1	18
#define SAMPLER_COLS	21


/*
 * May the caller see other roles' query IDs, symbols and code addresses?
 * The rule of pg_stat_statements, shared by every jitprof view.
 */
bool
jp_reader_sees_all(void)
{
	return superuser() ||
		has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
}

static double
percent(int64 part, int64 whole)
{
	return whole > 0 ? 100.0 * (double) part / (double) whole : 0.0;
}

Datum
jitprof_hotspots_1_0(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		see_all;
	Oid			me = GetUserId();
	JpStoreEntry *entries;
	JpStoreEntry *entry;
	int64		nentries;

	jp_store_require();
	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == HOTSPOTS_COLS);
	see_all = jp_reader_sees_all();

	entries = jp_store_copy(&nentries);
	for (entry = entries; entry < entries + nentries; entry++)
	{
		Datum		values[HOTSPOTS_COLS];
		bool		nulls[HOTSPOTS_COLS];
		bool		visible = see_all || entry->key.userid == me;
		int			i = 0;

		CHECK_FOR_INTERRUPTS();
		if (entry->key.discriminator == 0)
			continue;			/* a query's summary row */

		memset(nulls, 0, sizeof(nulls));
		values[i++] = ObjectIdGetDatum(entry->key.userid);
		values[i++] = ObjectIdGetDatum(entry->key.dbid);
		if (visible)
			values[i++] = Int64GetDatum(entry->key.queryid);
		else
			nulls[i++] = true;
		values[i++] = Int32GetDatum(entry->key.plan_node_id);
		if (entry->node_type[0] != '\0')
			values[i++] = CStringGetTextDatum(entry->node_type);
		else
			nulls[i++] = true;
		values[i++] = CStringGetTextDatum(entry->role);
		if (visible)
			values[i++] = CStringGetTextDatum(entry->symbol);
		else
			nulls[i++] = true;
		values[i++] = Int64GetDatum(entry->self_samples);
		values[i++] = Int64GetDatum(entry->total_samples);
		values[i++] = Int64GetDatum(entry->query_samples);
		values[i++] = Float8GetDatum(percent(entry->self_samples,
											 entry->query_samples));
		values[i++] = Float8GetDatum(percent(entry->total_samples,
											 entry->query_samples));
		values[i++] = Int64GetDatum(entry->compilations);
		values[i++] = Int64GetDatum(entry->code_bytes);
		values[i++] = TimestampTzGetDatum(entry->first_seen);
		values[i++] = TimestampTzGetDatum(entry->last_seen);
		Assert(i == HOTSPOTS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(entries);

	return (Datum) 0;
}

/*
 * Sum the store into one JpQueryTotals per (user, database, query).  Returns
 * a hash table in CurrentMemoryContext.
 */
HTAB	   *
jp_query_totals(void)
{
	HASHCTL		ctl;
	HTAB	   *totals;
	JpStoreEntry *entries;
	JpStoreEntry *entry;
	int64		nentries;

	ctl.keysize = sizeof(JpQueryKey);
	ctl.entrysize = sizeof(JpQueryTotals);
	ctl.hcxt = CurrentMemoryContext;
	totals = hash_create("jitprof query totals", 256, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	entries = jp_store_copy(&nentries);
	for (entry = entries; entry < entries + nentries; entry++)
	{
		JpQueryKey	key;
		JpQueryTotals *t;
		bool		found;

		CHECK_FOR_INTERRUPTS();
		memset(&key, 0, sizeof(key));
		key.userid = entry->key.userid;
		key.dbid = entry->key.dbid;
		key.queryid = entry->key.queryid;
		t = hash_search(totals, &key, HASH_ENTER, &found);
		if (!found)
			memset((char *) t + sizeof(JpQueryKey), 0,
				   sizeof(JpQueryTotals) - sizeof(JpQueryKey));
		if (entry->key.discriminator == 0)
		{
			t->has_summary = true;
			t->executions = entry->executions;
			t->query_samples = entry->query_samples;
			t->tiered_executions = entry->tiered_executions;
			t->tiering_switches = entry->tiering_switches;
			t->tiering_functions = entry->tiering_functions;
			t->tiering_expressions_compiled =
				entry->tiering_expressions_compiled;
			t->tiering_expressions_never_compiled =
				entry->tiering_expressions_never_compiled;
		}
		else
		{
			t->jit_self_samples += entry->self_samples;
			t->jit_total_samples += entry->total_samples;
			t->functions++;
			t->code_bytes += entry->code_bytes;
			t->max_function_query_samples =
				Max(t->max_function_query_samples, entry->query_samples);
		}
	}
	pfree(entries);

	return totals;
}

/*
 * jitprof_queries: the first ncols columns (10 in 1.0; 1.4 adds tiered
 * JIT's five).
 */
static Datum
queries_rows(FunctionCallInfo fcinfo, int ncols)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		see_all;
	Oid			me = GetUserId();
	HTAB	   *totals;
	HASH_SEQ_STATUS status;
	JpQueryTotals *t;

	jp_store_require();
	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == ncols);
	see_all = jp_reader_sees_all();

	totals = jp_query_totals();
	hash_seq_init(&status, totals);
	while ((t = hash_seq_search(&status)) != NULL)
	{
		Datum		values[QUERIES_COLS];
		bool		nulls[QUERIES_COLS];
		int64		qsamples;
		int			i = 0;

		CHECK_FOR_INTERRUPTS();

		/*
		 * Statements nested in a function have no summary row of their own:
		 * their code ran within the top-level statement's samples.
		 */
		qsamples = t->has_summary ? t->query_samples :
			t->max_function_query_samples;

		memset(nulls, 0, sizeof(nulls));
		values[i++] = ObjectIdGetDatum(t->key.userid);
		values[i++] = ObjectIdGetDatum(t->key.dbid);
		if (see_all || t->key.userid == me)
			values[i++] = Int64GetDatum(t->key.queryid);
		else
			nulls[i++] = true;
		values[i++] = Int64GetDatum(t->executions);
		values[i++] = Int64GetDatum(qsamples);
		values[i++] = Int64GetDatum(t->jit_self_samples);
		values[i++] = Int64GetDatum(t->jit_total_samples);
		values[i++] = Float8GetDatum(percent(t->jit_self_samples, qsamples));
		values[i++] = Int64GetDatum(t->functions);
		values[i++] = Int64GetDatum(t->code_bytes);
		Assert(i == QUERIES_COLS_1_0);
		if (ncols >= QUERIES_COLS)
		{
			values[i++] = Int64GetDatum(t->tiered_executions);
			values[i++] = Int64GetDatum(t->tiering_switches);
			values[i++] = Int64GetDatum(t->tiering_functions);
			values[i++] = Int64GetDatum(t->tiering_expressions_compiled);
			values[i++] = Int64GetDatum(t->tiering_expressions_never_compiled);
			Assert(i == QUERIES_COLS);
		}

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	hash_destroy(totals);

	return (Datum) 0;
}

Datum
jitprof_queries_1_0(PG_FUNCTION_ARGS)
{
	return queries_rows(fcinfo, QUERIES_COLS_1_0);
}

Datum
jitprof_queries_1_4(PG_FUNCTION_ARGS)
{
	return queries_rows(fcinfo, QUERIES_COLS);
}

/* jitprof_sampler: the first ncols columns (11 in 1.0, 18 in 1.1, 21) */
static Datum
sampler_row(FunctionCallInfo fcinfo, int ncols)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[SAMPLER_COLS];
	bool		nulls[SAMPLER_COLS];
	JpSamplerHealth health;
	int64		evictions;
	int64		entries;
	TimestampTz stats_reset;
	int64		node_entries;
	int64		step_entries;
	int64		steps_dropped;
	int			max_hotspots;
	int			max_plan_nodes;
	int			max_steps;
	int			i = 0;

	jp_store_require();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != ncols)
		elog(ERROR, "incorrect number of output arguments");

	jp_store_health(&health, &evictions, &entries, &stats_reset);
	node_entries = jp_store_node_count();
	jp_store_step_counts(&step_entries, &steps_dropped);
	jp_store_limits(&max_hotspots, &max_plan_nodes, &max_steps);

	memset(nulls, 0, sizeof(nulls));
	values[i++] = Int32GetDatum(jp_sampler_rate());
	values[i++] = Int64GetDatum(health.samples_taken);
	values[i++] = Int64GetDatum(health.samples_jit_self);
	values[i++] = Int64GetDatum(health.samples_jit_total);
	values[i++] = Int64GetDatum(health.samples_dropped);
	values[i++] = Int64GetDatum(health.functions_untracked);
	values[i++] = Int64GetDatum(health.flushes);
	values[i++] = Int64GetDatum(evictions);
	values[i++] = Int64GetDatum(entries);
	values[i++] = Int32GetDatum(max_hotspots);
	values[i++] = TimestampTzGetDatum(stats_reset);
	values[i++] = Int64GetDatum(health.samples_other_execution);
	values[i++] = Int64GetDatum(health.samples_in_flush);
	values[i++] = Int64GetDatum(health.executions_untracked);
	values[i++] = Int64GetDatum(health.forward_fallbacks);
	values[i++] = Int64GetDatum(node_entries);
	values[i++] = Int32GetDatum(max_plan_nodes);
	values[i++] = Int64GetDatum(health.plan_nodes_dropped);
	values[i++] = Int64GetDatum(step_entries);
	values[i++] = Int32GetDatum(max_steps);
	values[i++] = Int64GetDatum(steps_dropped);
	Assert(i == SAMPLER_COLS);

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

Datum
jitprof_sampler_1_0(PG_FUNCTION_ARGS)
{
	return sampler_row(fcinfo, SAMPLER_COLS_1_0);
}

Datum
jitprof_sampler_1_1(PG_FUNCTION_ARGS)
{
	return sampler_row(fcinfo, SAMPLER_COLS_1_1);
}

Datum
jitprof_sampler_1_2(PG_FUNCTION_ARGS)
{
	return sampler_row(fcinfo, SAMPLER_COLS);
}

/* one row of a view with a single text column (jitprof_folded, _explain) */
void
jp_put_text_row(ReturnSetInfo *rsinfo, const char *text)
{
	Datum		value = CStringGetTextDatum(text);
	bool		isnull = false;

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
}

Datum
jitprof_reset_1_0(PG_FUNCTION_ARGS)
{
	jp_store_require();
	jp_store_reset();
	jp_advisor_reset();
	PG_RETURN_VOID();
}
