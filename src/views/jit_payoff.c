/*-------------------------------------------------------------------------
 *
 * jit_payoff.c
 *	  SQL functions over the JIT advisor's table (doc/jit_advisor.md):
 *	  jitprof_jit_payoff (one row per query: the verdict), jitprof_jit_levels
 *	  (one row per query and JIT level measured) and jitprof_advisor (the
 *	  table's counters and what exploring spent).
 *
 * Each works on a copy of the table taken under its lock (jp_advisor_copy)
 * and checks for interrupts in its loop.  Privacy is the hotspot views':
 * another role's row shows no query ID unless the reader is a superuser or
 * has the privileges of pg_read_all_stats.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/jit_payoff.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "catalog/pg_type.h"
#include "jit/jit.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "views/views.h"

PG_FUNCTION_INFO_V1(jitprof_jit_payoff_1_3);
PG_FUNCTION_INFO_V1(jitprof_jit_payoff_1_4);
PG_FUNCTION_INFO_V1(jitprof_jit_levels_1_3);
PG_FUNCTION_INFO_V1(jitprof_advisor_1_3);
PG_FUNCTION_INFO_V1(jitprof_jit_advice_1_3);
PG_FUNCTION_INFO_V1(jitprof_jit_advice_of_1_3);
PG_FUNCTION_INFO_V1(jitprof_jit_advice_of_1_4);

#define PAYOFF_COLS_1_3	17
#define PAYOFF_COLS		20		/* 1.4: tiered against off and eager */
#define LEVELS_COLS		13
#define ADVISOR_COLS	13
#define ADVICE_COLS		10

/* a query whose advised level costs this much more than its best is unserved */
#define UNSERVED_MARGIN	1.01

static void
advisor_require(void)
{
	if (!jp_advisor_available())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("jitprof must be loaded via shared_preload_libraries"),
				 errhint("Add jitprof to shared_preload_libraries and restart the server.")));
}

/* a copy of the table, and whether the reader sees every query ID */
static JpAdvisorEntry *
advisor_rows_copy(bool *see_all, int64 *n)
{
	advisor_require();
	*see_all = jp_reader_sees_all();
	return jp_advisor_copy(n);
}

/*
 * Start a function's result set of ncols columns and copy the table: the
 * entries, their count and whether the reader sees every query ID.
 */
static JpAdvisorEntry *
advisor_rows(FunctionCallInfo fcinfo, int ncols, bool *see_all, int64 *n)
{
	ReturnSetInfo *rsinfo PG_USED_FOR_ASSERTS_ONLY =
	(ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == ncols);
	return advisor_rows_copy(see_all, n);
}

/* the first three columns of a row: userid, dbid, queryid if visible */
static int
put_key(const JpAdvisorEntry *e, bool see_all, Datum *values, bool *nulls)
{
	values[0] = ObjectIdGetDatum(e->key.userid);
	values[1] = ObjectIdGetDatum(e->key.dbid);
	if (see_all || e->key.userid == GetUserId())
		values[2] = Int64GetDatum(e->key.queryid);
	else
		nulls[2] = true;
	return 3;
}

/* jitprof_jit_payoff's rows: 1.3's columns, and with TIERED 1.4's three */
static void
payoff_rows(FunctionCallInfo fcinfo, bool tiered)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			ncols = tiered ? PAYOFF_COLS : PAYOFF_COLS_1_3;
	bool		see_all;
	JpAdvisorEntry *entries;
	int64		n;

	entries = advisor_rows(fcinfo, ncols, &see_all, &n);
	for (const JpAdvisorEntry *e = entries; e < entries + n; e++)
	{
		Datum		values[PAYOFF_COLS];
		bool		nulls[PAYOFF_COLS];
		JpAdvisorJudgement j;
		int64		executions = 0;
		int64		explored = 0;
		double		jit_gain = 0;
		bool		has_gain;
		int			i;

		CHECK_FOR_INTERRUPTS();
		memset(nulls, 0, sizeof(nulls));
		jp_advisor_judge(e, &j);
		for (int l = 0; l < JP_NUM_LEVELS; l++)
		{
			executions += e->level[l].executions;
			if (l != e->pg_level)
				explored += e->level[l].executions;
		}

		/*
		 * What JIT gained (or lost) over jit = off on every JIT execution so
		 * far, once off is measured well enough to compare with.
		 */
		has_gain = e->level[JP_LEVEL_OFF].executions >= JP_ADVISOR_MIN_EXECUTIONS;
		for (int l = JP_LEVEL_OFF + 1; has_gain && l < JP_NUM_LEVELS; l++)
			jit_gain += (double) e->level[l].executions *
				(e->level[JP_LEVEL_OFF].cpu_mean - e->level[l].cpu_mean);

		i = put_key(e, see_all, values, nulls);
		values[i++] = Float8GetDatum(e->plan_cost);
		values[i++] = CStringGetTextDatum(jp_level_name(e->pg_level));
		values[i++] = Int64GetDatum(executions);
		values[i++] = Int64GetDatum(explored);
		if (j.best >= 0)
			values[i++] = CStringGetTextDatum(jp_level_name(j.best));
		else
			nulls[i++] = true;
		if (j.has_saving)
			values[i++] = Float8GetDatum(j.saving);
		else
			nulls[i++] = true;
		if (j.has_saving && j.best != e->pg_level)
		{
			values[i++] = Float8GetDatum(j.saving_low);
			values[i++] = Float8GetDatum(j.saving_high);
		}
		else
		{
			nulls[i++] = true;
			nulls[i++] = true;
		}
		values[i++] = CStringGetTextDatum(j.verdict);
		if (e->enforce_level >= 0)
			values[i++] = CStringGetTextDatum(jp_level_name(e->enforce_level));
		else
			nulls[i++] = true;
		if (has_gain)
			values[i++] = Float8GetDatum(jit_gain);
		else
			nulls[i++] = true;
		values[i++] = Float8GetDatum(e->explore_loss);
		if (j.has_bound)
		{
			values[i++] = Float8GetDatum(j.bound);
			values[i++] = CStringGetTextDatum(j.assumption);
		}
		else
		{
			nulls[i++] = true;
			nulls[i++] = true;
		}
		if (tiered)
		{
			if (j.has_tiered_vs_off)
				values[i++] = Float8GetDatum(j.tiered_vs_off);
			else
				nulls[i++] = true;
			if (j.has_tiered_vs_eager)
				values[i++] = Float8GetDatum(j.tiered_vs_eager);
			else
				nulls[i++] = true;
			if (j.tiered_verdict != NULL)
				values[i++] = CStringGetTextDatum(j.tiered_verdict);
			else
				nulls[i++] = true;
		}
		Assert(i == ncols);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

Datum
jitprof_jit_payoff_1_3(PG_FUNCTION_ARGS)
{
	payoff_rows(fcinfo, false);
	return (Datum) 0;
}

Datum
jitprof_jit_payoff_1_4(PG_FUNCTION_ARGS)
{
	payoff_rows(fcinfo, true);
	return (Datum) 0;
}

Datum
jitprof_jit_levels_1_3(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		see_all;
	JpAdvisorEntry *entries;
	int64		n;

	entries = advisor_rows(fcinfo, LEVELS_COLS, &see_all, &n);
	for (const JpAdvisorEntry *e = entries; e < entries + n; e++)
	{
		CHECK_FOR_INTERRUPTS();
		for (int l = 0; l < JP_NUM_LEVELS; l++)
		{
			const JpLevelStats *s = &e->level[l];
			double		count = (double) s->executions;
			Datum		values[LEVELS_COLS];
			bool		nulls[LEVELS_COLS];
			int			i;

			if (s->executions == 0)
				continue;
			memset(nulls, 0, sizeof(nulls));
			i = put_key(e, see_all, values, nulls);
			values[i++] = CStringGetTextDatum(jp_level_name(l));
			values[i++] = BoolGetDatum(l == e->pg_level);
			values[i++] = Int64GetDatum(s->executions);
			values[i++] = Float8GetDatum(s->cpu_mean);
			if (s->executions >= 2)
				values[i++] = Float8GetDatum(jp_level_cpu_stddev(s));
			else
				nulls[i++] = true;
			values[i++] = Float8GetDatum(s->wall_sum / count);
			values[i++] = Float8GetDatum(s->generation_sum / count);
			values[i++] = Float8GetDatum(s->inlining_sum / count);
			values[i++] = Float8GetDatum(s->optimization_sum / count);
			values[i++] = Float8GetDatum(s->emission_sum / count);
			Assert(i == LEVELS_COLS);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
								 nulls);
		}
	}
	return (Datum) 0;
}

Datum
jitprof_advisor_1_3(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[ADVISOR_COLS];
	bool		nulls[ADVISOR_COLS];
	JpAdvisorCounts c;
	int			i = 0;

	advisor_require();
	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == ADVISOR_COLS);
	jp_advisor_counts(&c);

	memset(nulls, 0, sizeof(nulls));
	values[i++] = CStringGetTextDatum(GetConfigOption("jitprof.jit_advisor",
													  false, false));
	values[i++] = Int64GetDatum(c.entries);
	values[i++] = Int64GetDatum(c.max_queries);
	values[i++] = Int64GetDatum(c.dropped);
	values[i++] = Int64GetDatum(c.executions);
	values[i++] = Int64GetDatum(c.explored);
	values[i++] = Int64GetDatum(c.enforced);
	values[i++] = Float8GetDatum(c.cpu_ms);
	values[i++] = Float8GetDatum(c.explore_cpu_ms);
	values[i++] = Float8GetDatum(c.explore_loss_ms);
	values[i++] = Float8GetDatum(c.cpu_ms > 0 ? Min(100.0 * c.explore_loss_ms / c.cpu_ms, 100.0) : 0.0);
	values[i++] = Int64GetDatum(c.entry_bytes);
	values[i++] = Int64GetDatum(c.shmem_bytes);
	Assert(i == ADVISOR_COLS);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

/*
 * The advice's one row: the advised settings, the workload's CPU time under
 * the current and the advised ones, and the queries the advice does not
 * serve (their advised level costs over 1% more than their best measured
 * one), by "ids" (query IDs, or positions), NULL where not visible.
 */
static void
put_advice(FunctionCallInfo fcinfo, const JpAdviceQuery *q, int n,
		   const bool *visible, const int64 *ids)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	JpThresholds current = {jit_enabled, jit_above_cost,
	jit_optimize_above_cost, jit_inline_above_cost};
	JpThresholds advice;
	Datum		values[ADVICE_COLS];
	bool		nulls[ADVICE_COLS];
	Datum	   *unserved = palloc(Max(n, 1) * sizeof(Datum));
	bool	   *unserved_nulls = palloc(Max(n, 1) * sizeof(bool));
	int			nunserved = 0;
	int			nfilled = 0;
	double		now,
				advised;
	int			dims[1];
	int			lbs[1] = {1};
	int			i = 0;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == ADVICE_COLS);
	jp_advise(q, n, &advice);
	now = jp_workload_cpu(q, n, &current);
	advised = jp_workload_cpu(q, n, &advice);

	for (int k = 0; k < n; k++)
	{
		int			level = jp_level_at(&advice, q[k].plan_cost);
		int			best = -1;
		int			measured = 0;
		int			eager = 0;

		CHECK_FOR_INTERRUPTS();

		/* a best level of tiered is one no threshold gives: unserved */
		for (int l = 0; l < JP_NUM_LEVELS; l++)
		{
			if (!q[k].measured[l])
				continue;
			measured++;
			eager += l < JP_NUM_EAGER_LEVELS;
			if (best < 0 || q[k].cpu[l] < q[k].cpu[best])
				best = l;
		}
		if (eager < JP_NUM_EAGER_LEVELS)
			nfilled++;
		if (measured >= 2 && q[k].measured[level] &&
			q[k].cpu[level] > UNSERVED_MARGIN * q[k].cpu[best])
		{
			unserved[nunserved] = Int64GetDatum(ids[k]);
			unserved_nulls[nunserved++] = !visible[k];
		}
	}

	memset(nulls, 0, sizeof(nulls));
	values[i++] = BoolGetDatum(advice.jit);
	for (int k = 0; k < 3; k++)
	{
		double		t = k == 0 ? advice.above :
		(k == 1 ? advice.optimize : advice.inline_);

		if (advice.jit)
			values[i++] = Float8GetDatum(t);
		else
			nulls[i++] = true;
	}
	values[i++] = Float8GetDatum(now);
	values[i++] = Float8GetDatum(advised);
	values[i++] = Float8GetDatum(now - advised);
	values[i++] = Int32GetDatum(n);
	values[i++] = Int32GetDatum(nfilled);
	dims[0] = nunserved;
	values[i++] = PointerGetDatum(construct_md_array(unserved, unserved_nulls,
													 1, dims, lbs, INT8OID, 8,
													 FLOAT8PASSBYVAL, 'd'));
	Assert(i == ADVICE_COLS);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* jitprof_jit_advice(): the advice for the queries the advisor measured */
Datum
jitprof_jit_advice_1_3(PG_FUNCTION_ARGS)
{
	bool		see_all;
	int64		n;
	JpAdvisorEntry *entries = advisor_rows_copy(&see_all, &n);
	JpAdviceQuery *q = palloc0(Max(n, 1) * sizeof(JpAdviceQuery));
	bool	   *visible = palloc(Max(n, 1) * sizeof(bool));
	int64	   *ids = palloc(Max(n, 1) * sizeof(int64));

	for (int64 k = 0; k < n; k++)
	{
		const JpAdvisorEntry *e = &entries[k];

		CHECK_FOR_INTERRUPTS();
		q[k].queryid = e->key.queryid;
		q[k].plan_cost = e->plan_cost;
		q[k].pg_level = e->pg_level;
		for (int l = 0; l < JP_NUM_LEVELS; l++)
		{
			const JpLevelStats *s = &e->level[l];

			q[k].calls += (double) s->executions;
			/* PostgreSQL's level is the baseline: one execution will do */
			q[k].measured[l] = s->executions >= JP_ADVISOR_MIN_EXECUTIONS ||
				(l == e->pg_level && s->executions > 0);
			q[k].cpu[l] = s->cpu_mean;
		}
		visible[k] = see_all || e->key.userid == GetUserId();
		ids[k] = e->key.queryid;
	}
	put_advice(fcinfo, q, (int) n, visible, ids);
	return (Datum) 0;
}

/*
 * jitprof_jit_advice(plan_cost, calls, cpu_ms): the advice for a workload
 * given as arrays, one element (cpu_ms: one row of five, for off, jit,
 * jit+opt, jit+inline and all, NULL where not measured; from 1.4 a sixth
 * for tiered may follow) per query; the unserved queries are given by
 * position.
 */
static void
advice_of(FunctionCallInfo fcinfo, int max_width)
{
	ArrayType  *costs_a = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *calls_a = PG_GETARG_ARRAYTYPE_P(1);
	ArrayType  *cpu_a = PG_GETARG_ARRAYTYPE_P(2);
	Datum	   *costs,
			   *calls,
			   *cpu;
	bool	   *costs_null,
			   *calls_null,
			   *cpu_null;
	int			n,
				ncalls,
				ncpu,
				width;
	JpAdviceQuery *q;
	bool	   *visible;
	int64	   *ids;

	deconstruct_array(costs_a, FLOAT8OID, 8, FLOAT8PASSBYVAL, 'd',
					  &costs, &costs_null, &n);
	deconstruct_array(calls_a, FLOAT8OID, 8, FLOAT8PASSBYVAL, 'd',
					  &calls, &calls_null, &ncalls);
	deconstruct_array(cpu_a, FLOAT8OID, 8, FLOAT8PASSBYVAL, 'd',
					  &cpu, &cpu_null, &ncpu);
	width = n > 0 && ARR_NDIM(cpu_a) == 2 ? ARR_DIMS(cpu_a)[1] : 0;
	if (ncalls != n ||
		(n > 0 && (width < JP_NUM_EAGER_LEVELS || width > max_width)) ||
		ncpu != n * width)
	{
		if (max_width > JP_NUM_EAGER_LEVELS)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("arrays of jitprof_jit_advice do not match"),
					 errdetail("plan_cost, calls and cpu_ms have %d, %d and %d elements.",
							   n, ncalls, ncpu),
					 errhint("Give one plan cost and one number of calls per query, and cpu_ms as an array of one row of %d or %d values per query (off, jit, jit+opt, jit+inline, all, and tiered).",
							 JP_NUM_EAGER_LEVELS, max_width)));
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrays of jitprof_jit_advice do not match"),
				 errdetail("plan_cost, calls and cpu_ms have %d, %d and %d elements.",
						   n, ncalls, ncpu),
				 errhint("Give one plan cost and one number of calls per query, and cpu_ms as an array of one row of %d values per query (off, jit, jit+opt, jit+inline, all).",
						 JP_NUM_EAGER_LEVELS)));
	}
	if (n > 100000)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("jitprof_jit_advice accepts at most 100000 queries"),
				 errhint("Give the queries with the most CPU time only.")));

	q = palloc0(Max(n, 1) * sizeof(JpAdviceQuery));
	visible = palloc(Max(n, 1) * sizeof(bool));
	ids = palloc(Max(n, 1) * sizeof(int64));
	for (int k = 0; k < n; k++)
	{
		if (costs_null[k] || calls_null[k])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("plan cost and calls of query %d are null", k + 1),
					 errhint("Give every query a plan cost and a number of calls.")));
		q[k].plan_cost = DatumGetFloat8(costs[k]);
		q[k].calls = DatumGetFloat8(calls[k]);
		q[k].pg_level = -1;
		for (int l = 0; l < width; l++)
		{
			int			at = k * width + l;

			q[k].measured[l] = !cpu_null[at];
			q[k].cpu[l] = cpu_null[at] ? 0.0 : DatumGetFloat8(cpu[at]);
		}
		visible[k] = true;
		ids[k] = k + 1;
	}
	put_advice(fcinfo, q, n, visible, ids);
}

/* 1.3: five levels per query */
Datum
jitprof_jit_advice_of_1_3(PG_FUNCTION_ARGS)
{
	advice_of(fcinfo, JP_NUM_EAGER_LEVELS);
	return (Datum) 0;
}

/* 1.4: five, or six with tiered */
Datum
jitprof_jit_advice_of_1_4(PG_FUNCTION_ARGS)
{
	advice_of(fcinfo, JP_NUM_LEVELS);
	return (Datum) 0;
}
