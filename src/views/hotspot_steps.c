/*-------------------------------------------------------------------------
 *
 * hotspot_steps.c
 *	  SQL function jitprof_steps: each JIT function's samples per
 *	  expression step (jitprof.steps), from the store's step rows.
 *
 * Contract: jp_step_rows, which jitprof_explain uses too, copies the step
 * rows before the function rows (each under the store's lock in shared
 * mode, see jp_store_copy) and works on the copies after the lock is
 * released; a step row whose function is missing from the second copy, or
 * has more samples than it, is left out, so a function's step rows never
 * add up to more than the function.  Privacy as jitprof_hotspots.  The
 * columns: doc/steps.md, "The step profile".
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/hotspot_steps.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"

#include "views/views.h"

PG_FUNCTION_INFO_V1(jitprof_steps_1_2);

#define STEPS_COLS	17

typedef struct FunctionRef
{
	JpStoreKey	key;			/* hash key: must be first */
	const JpStoreEntry *entry;
} FunctionRef;

/* the function rows of a copy of the store, by key */
static HTAB *
function_index(const JpStoreEntry *entries, int64 nentries)
{
	HASHCTL		ctl;
	HTAB	   *index;

	ctl.keysize = sizeof(JpStoreKey);
	ctl.entrysize = sizeof(FunctionRef);
	ctl.hcxt = CurrentMemoryContext;
	index = hash_create("jitprof step functions", Max(nentries, 16), &ctl,
						HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int64 i = 0; i < nentries; i++)
	{
		FunctionRef *ref;

		CHECK_FOR_INTERRUPTS();
		if (entries[i].key.discriminator == 0)
			continue;			/* a query's summary row */
		ref = hash_search(index, &entries[i].key, HASH_ENTER, NULL);
		ref->entry = &entries[i];
	}
	return index;
}

/*
 * Every step row of the store, each with its function's row, in
 * CurrentMemoryContext; see the header comment.
 */
JpStepRow  *
jp_step_rows(int64 *nrows)
{
	JpStoreStepEntry *steps;
	int64		nsteps;
	JpStoreEntry *entries;
	int64		nentries;
	HTAB	   *index;
	JpStepRow  *rows;
	int64		n = 0;

	/* steps first: see the header comment */
	steps = jp_store_copy_steps(&nsteps);
	entries = jp_store_copy(&nentries);
	index = function_index(entries, nentries);
	rows = palloc(sizeof(JpStepRow) * Max(nsteps, 1));

	for (int64 i = 0; i < nsteps; i++)
	{
		const JpStoreStepEntry *s = &steps[i];
		FunctionRef *ref;
		JpStoreKey	key;

		CHECK_FOR_INTERRUPTS();
		memset(&key, 0, sizeof(key));
		key.userid = s->key.userid;
		key.dbid = s->key.dbid;
		key.queryid = s->key.queryid;
		key.plan_node_id = s->key.plan_node_id;
		key.discriminator = s->key.discriminator;
		ref = hash_search(index, &key, HASH_FIND, NULL);
		if (ref == NULL || ref->entry->self_samples < s->self_samples ||
			ref->entry->total_samples < s->total_samples)
			continue;
		rows[n].step = s;
		rows[n].function = ref->entry;
		n++;
	}
	hash_destroy(index);
	*nrows = n;
	return rows;
}

/*
 * The detail of a row that deforms an attribute, as jitprof_steps shows it
 * (jitprof_explain's top steps too): the column, or its attnum if unknown.
 */
const char *
jp_step_deform_detail(const JpStoreStepEntry *s)
{
	if (s->detail[0] != '\0')
		return s->detail;
	return psprintf("(attno %d)", jp_step_attnum(s->key.step));
}

Datum
jitprof_steps_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		see_all;
	Oid			me = GetUserId();
	JpStepRow  *rows;
	int64		nrows;

	jp_store_require();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != STEPS_COLS)
		elog(ERROR, "incorrect number of output arguments");
	see_all = jp_reader_sees_all();

	rows = jp_step_rows(&nrows);
	for (int64 i = 0; i < nrows; i++)
	{
		const JpStoreStepEntry *s = rows[i].step;
		const JpStoreEntry *fn = rows[i].function;
		Datum		values[STEPS_COLS];
		bool		nulls[STEPS_COLS];
		bool		visible = see_all || s->key.userid == me;
		int			c = 0;

		CHECK_FOR_INTERRUPTS();
		memset(nulls, 0, sizeof(nulls));
		values[c++] = ObjectIdGetDatum(s->key.userid);
		values[c++] = ObjectIdGetDatum(s->key.dbid);
		if (visible)
			values[c++] = Int64GetDatum(s->key.queryid);
		else
			nulls[c++] = true;
		values[c++] = Int32GetDatum(s->key.plan_node_id);
		if (fn->node_type[0] != '\0')
			values[c++] = CStringGetTextDatum(fn->node_type);
		else
			nulls[c++] = true;
		if (visible)
			values[c++] = CStringGetTextDatum(fn->symbol);
		else
			nulls[c++] = true;
		values[c++] = CStringGetTextDatum(fn->role);

		/* step, attnum, opcode, detail */
		if (s->key.step >= 0)
		{
			values[c++] = Int32GetDatum(s->key.step);
			nulls[c++] = true;
			if (s->opcode[0] != '\0')
				values[c++] = CStringGetTextDatum(s->opcode);
			else
				nulls[c++] = true;
			if (visible && s->opcode[0] != '\0')
				values[c++] = CStringGetTextDatum(s->detail);
			else
				nulls[c++] = true;
		}
		else if (s->key.step <= JP_STEP_ATTRIBUTE(0))
		{
			nulls[c++] = true;
			values[c++] = Int32GetDatum(jp_step_attnum(s->key.step));
			values[c++] = CStringGetTextDatum("deform");
			if (visible)
				values[c++] = CStringGetTextDatum(jp_step_deform_detail(s));
			else
				nulls[c++] = true;
		}
		else
		{
			nulls[c++] = true;
			nulls[c++] = true;
			nulls[c++] = true;
			if (visible)
				values[c++] = CStringGetTextDatum("code of no step: function entry and exit");
			else
				nulls[c++] = true;
		}

		values[c++] = Int64GetDatum(s->self_samples);
		values[c++] = Int64GetDatum(s->total_samples);
		values[c++] = Int64GetDatum(fn->total_samples);
		values[c++] = Int64GetDatum(fn->query_samples);
		values[c++] = Float8GetDatum(jp_share_pct(s->total_samples,
												  fn->total_samples));
		values[c++] = Float8GetDatum(jp_share_pct(s->total_samples,
												  fn->query_samples));
		Assert(c == STEPS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	return (Datum) 0;
}
