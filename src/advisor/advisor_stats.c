/*-------------------------------------------------------------------------
 *
 * advisor_stats.c
 *	  The JIT advisor's verdict on one query: the best level, the saving
 *	  against PostgreSQL's choice with a 95% confidence interval (Welch),
 *	  whether JIT pays, and a bound for a query with too few executions
 *	  (doc/jit_advisor.md says why each choice).
 *
 * Pure arithmetic on a copy of an entry: the views call it on their copy,
 * advisor.c under its lock to mark a query decided.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/advisor/advisor_stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "advisor/advisor.h"

/* how much faster than the interpreter compiled code is assumed at most */
#define BOUND_SPEEDUP		2.0

/* a JIT level's name, as the settings and the views spell it */
const char *
jp_level_name(int level)
{
	static const char *const names[JP_NUM_LEVELS] = {
		"off", "jit", "jit+opt", "jit+inline", "all", "tiered"
	};

	return level >= 0 && level < JP_NUM_LEVELS ? names[level] : "?";
}

double
jp_level_cpu_stddev(const JpLevelStats *s)
{
	if (s->executions < 2)
		return 0.0;
	return sqrt(Max(s->cpu_m2, 0.0) / (double) (s->executions - 1));
}

/*
 * The 0.975 quantile of Student's t with df degrees of freedom: exact for
 * 1 and 2, and for more the Cornish-Fisher expansion around the normal
 * quantile, within 0.002 of the exact value from df = 3 on.  Below 3 the
 * value at the next lower integer is used, which widens the interval.
 */
static double
t_975(double df)
{
	const double z = 1.959963985;
	double		z3 = z * z * z;
	double		z5 = z3 * z * z;
	double		z7 = z5 * z * z;
	double		z9 = z7 * z * z;

	if (df < 2)
		return 12.7062;
	if (df < 3)
		return 4.3027;
	return z + (z3 + z) / (4 * df) +
		(5 * z5 + 16 * z3 + 3 * z) / (96 * df * df) +
		(3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df * df * df) +
		(79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) /
		(92160 * df * df * df * df);
}

/* mean of a minus mean of b, with its 95% interval (Welch's t) */
static void
welch(const JpLevelStats *a, const JpLevelStats *b, double *diff,
	  double *low, double *high)
{
	double		va = jp_level_cpu_stddev(a);
	double		vb = jp_level_cpu_stddev(b);
	double		sa,
				sb,
				se2,
				df,
				half;

	va *= va;
	vb *= vb;
	sa = va / (double) a->executions;
	sb = vb / (double) b->executions;
	se2 = sa + sb;
	if (se2 > 0)
		df = se2 * se2 / (sa * sa / (double) (a->executions - 1) +
						  sb * sb / (double) (b->executions - 1));
	else
		df = (double) (a->executions + b->executions - 2);
	half = t_975(df) * sqrt(se2);
	*diff = a->cpu_mean - b->cpu_mean;
	*low = *diff - half;
	*high = *diff + half;
}

static double
compile_mean(const JpLevelStats *s)
{
	if (s->executions == 0)
		return 0.0;
	return (s->generation_sum + s->inlining_sum + s->optimization_sum +
			s->emission_sum) / (double) s->executions;
}

/*
 * Tiered against off and against the best eager JIT level, and its verdict
 * against the best of all the other levels: does tiering pay here?
 */
static void
judge_tiered(const JpAdvisorEntry *e, JpAdvisorJudgement *out)
{
	const JpLevelStats *t = &e->level[JP_LEVEL_TIERED];
	const JpLevelStats *off = &e->level[JP_LEVEL_OFF];
	int			best_eager = -1;
	int			best_other = -1;
	double		diff,
				low,
				high;

	if (t->executions == 0)
		return;
	out->tiered_verdict = "undecided";
	for (int l = 0; l < JP_NUM_EAGER_LEVELS; l++)
	{
		const JpLevelStats *s = &e->level[l];

		if (s->executions < JP_ADVISOR_MIN_EXECUTIONS)
			continue;
		if (l != JP_LEVEL_OFF &&
			(best_eager < 0 || s->cpu_mean < e->level[best_eager].cpu_mean))
			best_eager = l;
		if (best_other < 0 || s->cpu_mean < e->level[best_other].cpu_mean)
			best_other = l;
	}
	if (t->executions < JP_ADVISOR_MIN_EXECUTIONS)
		return;
	if (off->executions >= JP_ADVISOR_MIN_EXECUTIONS)
	{
		out->has_tiered_vs_off = true;
		out->tiered_vs_off = off->cpu_mean - t->cpu_mean;
	}
	if (best_eager >= 0)
	{
		out->has_tiered_vs_eager = true;
		out->tiered_vs_eager = e->level[best_eager].cpu_mean - t->cpu_mean;
	}
	if (best_other < 0)
		return;
	welch(&e->level[best_other], t, &diff, &low, &high);
	if (low > 0)
		out->tiered_verdict = "tiered pays";
	else if (high < 0)
		out->tiered_verdict = "tiered loses";
}

/*
 * The verdict: tiered is one of the JIT levels, so "jit pays" when the best
 * of the eager and tiered levels beats off.
 */
void
jp_advisor_judge(const JpAdvisorEntry *e, JpAdvisorJudgement *out)
{
	const JpLevelStats *off = &e->level[JP_LEVEL_OFF];
	const JpLevelStats *pg = &e->level[e->pg_level];
	int			best_jit = -1;
	int			most_jit = -1;

	memset(out, 0, sizeof(*out));
	out->best = -1;
	out->verdict = "undecided";
	judge_tiered(e, out);

	for (int l = 0; l < JP_NUM_LEVELS; l++)
	{
		const JpLevelStats *s = &e->level[l];

		if (l != JP_LEVEL_OFF && s->executions > 0 &&
			(most_jit < 0 || s->executions > e->level[most_jit].executions))
			most_jit = l;
		if (s->executions < JP_ADVISOR_MIN_EXECUTIONS)
			continue;
		if (out->best < 0 || s->cpu_mean < e->level[out->best].cpu_mean)
			out->best = l;
		if (l != JP_LEVEL_OFF &&
			(best_jit < 0 || s->cpu_mean < e->level[best_jit].cpu_mean))
			best_jit = l;
	}

	/* what the best level saves per execution against PostgreSQL's */
	if (out->best >= 0 && pg->executions >= JP_ADVISOR_MIN_EXECUTIONS)
	{
		out->has_saving = true;
		if (out->best != e->pg_level)
			welch(pg, &e->level[out->best], &out->saving, &out->saving_low,
				  &out->saving_high);
	}

	/* does the best JIT level beat jit = off, beyond doubt? */
	if (best_jit >= 0 && off->executions >= JP_ADVISOR_MIN_EXECUTIONS)
	{
		double		diff,
					low,
					high;

		welch(off, &e->level[best_jit], &diff, &low, &high);
		if (low > 0)
			out->verdict = "jit pays";
		else if (high < 0)
			out->verdict = "jit loses";
		return;
	}

	/*
	 * Too few executions to compare: a bound from the JIT executions' own
	 * profile.  Of a JIT execution's CPU t, compiling took c and the code ran
	 * r = t - c.  If the interpreter is at most BOUND_SPEEDUP times slower
	 * than the compiled code, jit = off costs at most BOUND_SPEEDUP * r, so
	 * it saves at least t - BOUND_SPEEDUP * r.
	 */
	if (most_jit >= 0)
	{
		const JpLevelStats *s = &e->level[most_jit];
		double		c = Min(compile_mean(s), s->cpu_mean);
		double		r = s->cpu_mean - c;
		double		share = s->cpu_mean > 0 ? 100.0 * c / s->cpu_mean : 0.0;

		out->has_bound = true;
		out->bound = s->cpu_mean - BOUND_SPEEDUP * r;
		if (out->bound > 0)
			snprintf(out->assumption, sizeof(out->assumption),
					 "compiling took %.0f%% of the CPU time at %s; if the interpreter is at most %.0f times slower than the compiled code, jit = off saves at least %.3f ms per execution",
					 share, jp_level_name(most_jit), BOUND_SPEEDUP, out->bound);
		else
			snprintf(out->assumption, sizeof(out->assumption),
					 "compiling took %.0f%% of the CPU time at %s; if the interpreter were %.0f times slower than the compiled code, jit = off would cost up to %.3f ms more per execution, so this profile bounds nothing",
					 share, jp_level_name(most_jit), BOUND_SPEEDUP, -out->bound);
	}
}
