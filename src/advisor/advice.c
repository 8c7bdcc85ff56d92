/*-------------------------------------------------------------------------
 *
 * advice.c
 *	  The JIT advisor's threshold optimiser: the jit, jit_above_cost,
 *	  jit_optimize_above_cost and jit_inline_above_cost that minimise the
 *	  workload's measured CPU time (doc/jit_advisor.md).
 *
 * The workload is a list of queries, each with its plan cost, its calls and
 * its mean CPU time per level.  A set of thresholds gives each query the
 * level PostgreSQL's planner would give it (plan cost above each threshold,
 * a threshold of -1 never), and the workload's CPU time is the sum of calls
 * x CPU time at that level.  Only where the thresholds fall between two
 * neighbouring plan costs matters, so the candidates are the m distinct
 * costs; prefix sums per level and suffix minima find the best of the
 * O(m^3) combinations in O(m) after sorting (jp_advise).
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/advisor/advice.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "advisor/advisor.h"

/* the level the planner gives a plan of "cost" under thresholds "t" */
int
jp_level_at(const JpThresholds *t, double cost)
{
	bool		opt,
				inl;

	if (!t->jit || t->above < 0 || !(cost > t->above))
		return JP_LEVEL_OFF;
	opt = t->optimize >= 0 && cost > t->optimize;
	inl = t->inline_ >= 0 && cost > t->inline_;
	if (opt && inl)
		return JP_LEVEL_ALL;
	if (opt)
		return JP_LEVEL_JIT_OPT;
	if (inl)
		return JP_LEVEL_JIT_INLINE;
	return JP_LEVEL_JIT;
}

/*
 * A query's CPU time at "level": measured, or when that level was not
 * measured, its time at PostgreSQL's level (the assumption that the level
 * changes nothing), else the mean of the levels measured.
 */
static double
cpu_at(const JpAdviceQuery *q, int level, bool *filled)
{
	double		sum = 0;
	int			n = 0;

	if (q->measured[level])
		return q->cpu[level];
	*filled = true;
	if (q->pg_level >= 0 && q->measured[q->pg_level])
		return q->cpu[q->pg_level];
	for (int l = 0; l < JP_NUM_LEVELS; l++)
		if (q->measured[l])
		{
			sum += q->cpu[l];
			n++;
		}
	return n > 0 ? sum / n : 0.0;
}

double
jp_workload_cpu(const JpAdviceQuery *q, int n, const JpThresholds *t)
{
	double		total = 0;
	bool		filled = false;

	for (int i = 0; i < n; i++)
		total += q[i].calls * cpu_at(&q[i], jp_level_at(t, q[i].plan_cost),
									 &filled);
	return total;
}

static int
cost_cmp(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * The threshold at rank r of the m distinct costs d[]: a plan is above it
 * when its cost is d[r] or more; rank m is no plan (-1).
 */
static double
threshold_at(const double *d, int m, int r)
{
	if (r >= m)
		return -1;
	return r == 0 ? 0 : d[r - 1];
}

/* index of "cost" in the m sorted distinct costs d[] */
static int
rank_of(const double *d, int m, double cost)
{
	int			lo = 0,
				hi = m - 1;

	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (d[mid] < cost)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The thresholds that minimise jp_workload_cpu over q[0..n-1]; on a tie the
 * one that JITs less (found first: the loops go from "never" down).
 */
void
jp_advise(const JpAdviceQuery *q, int n, JpThresholds *best)
{
	double	   *d;
	double	   *sum[JP_NUM_EAGER_LEVELS];	/* thresholds give no tiered */
	int			m = 0;
	double		best_total = 0;
	bool		found = false;
	int			bra = 0,
				bro = 0,
				bri = 0;

	memset(best, 0, sizeof(*best));
	best->above = best->optimize = best->inline_ = -1;
	if (n == 0)
		return;

	d = palloc(n * sizeof(double));
	for (int i = 0; i < n; i++)
		d[i] = q[i].plan_cost;
	qsort(d, n, sizeof(double), cost_cmp);
	for (int i = 0; i < n; i++)
		if (m == 0 || d[i] != d[m - 1])
			d[m++] = d[i];

	/* sum[l][k]: calls x CPU at level l of the queries of rank below k */
	for (int l = 0; l < JP_NUM_EAGER_LEVELS; l++)
		sum[l] = palloc0((m + 1) * sizeof(double));
	for (int i = 0; i < n; i++)
	{
		int			r = rank_of(d, m, q[i].plan_cost);
		bool		filled = false;

		for (int l = 0; l < JP_NUM_EAGER_LEVELS; l++)
			sum[l][r + 1] += q[i].calls * cpu_at(&q[i], l, &filled);
	}
	for (int l = 0; l < JP_NUM_EAGER_LEVELS; l++)
		for (int k = 1; k <= m; k++)
			sum[l][k] += sum[l][k - 1];

	/*
	 * With JIT from rank ra, optimisation from ro and inlining from ri (both
	 * >= ra: below ra they do nothing), lo = min(ro, ri), hi = max(ro, ri)
	 * and "mid" the level between them (jit+opt when ro < ri, jit+inline
	 * otherwise), the workload costs
	 *
	 * off[ra] + jit[lo] - jit[ra] + mid[hi] - mid[lo] + all[m] - all[hi]
	 *
	 * (x[k]: the prefix sums).  Its terms in hi depend on lo and mid only,
	 * those in lo on ra only: three suffix minima find the best of all O(m^3)
	 * combinations in O(m).  A tie goes to the larger rank, which JITs less.
	 */
	{
		double	   *hval[2];	/* min over hi >= k of mid[hi] - all[hi] */
		int		   *harg[2];
		double	   *lval = palloc((m + 1) * sizeof(double));
		int		   *larg = palloc((m + 1) * sizeof(int));
		int		   *lmid = palloc((m + 1) * sizeof(int));
		const int	mids[2] = {JP_LEVEL_JIT_OPT, JP_LEVEL_JIT_INLINE};

		for (int v = 0; v < 2; v++)
		{
			hval[v] = palloc((m + 1) * sizeof(double));
			harg[v] = palloc((m + 1) * sizeof(int));
			for (int k = m; k >= 0; k--)
			{
				double		x = sum[mids[v]][k] - sum[JP_LEVEL_ALL][k];

				if (k == m || x < hval[v][k + 1] - 1e-9)
				{
					hval[v][k] = x;
					harg[v][k] = k;
				}
				else
				{
					hval[v][k] = hval[v][k + 1];
					harg[v][k] = harg[v][k + 1];
				}
			}
		}

		/* lval[k]: min over lo >= k of jit[lo] - mid[lo] + hval[mid][lo] */
		for (int k = m; k >= 0; k--)
		{
			lval[k] = 0;
			larg[k] = -1;
			lmid[k] = 0;
			for (int v = 0; v < 2; v++)
			{
				double		x = sum[JP_LEVEL_JIT][k] - sum[mids[v]][k] +
				hval[v][k];

				if (larg[k] < 0 || x < lval[k] - 1e-9)
				{
					lval[k] = x;
					larg[k] = k;
					lmid[k] = v;
				}
			}
			if (k < m && lval[k + 1] <= lval[k] + 1e-9)
			{
				lval[k] = lval[k + 1];
				larg[k] = larg[k + 1];
				lmid[k] = lmid[k + 1];
			}
		}

		for (int ra = m; ra >= 0; ra--)
		{
			double		total = sum[JP_LEVEL_OFF][ra] - sum[JP_LEVEL_JIT][ra] +
			lval[ra] + sum[JP_LEVEL_ALL][m];

			if (!found || total < best_total - 1e-9)
			{
				int			lo = larg[ra];
				int			v = lmid[ra];
				int			hi = harg[v][lo];

				found = true;
				best_total = total;
				bra = ra;
				bro = mids[v] == JP_LEVEL_JIT_OPT ? lo : hi;
				bri = mids[v] == JP_LEVEL_JIT_OPT ? hi : lo;
			}
		}
		CHECK_FOR_INTERRUPTS();
	}

	best->jit = bra < m;
	best->above = threshold_at(d, m, bra);
	best->optimize = threshold_at(d, m, bro);
	best->inline_ = threshold_at(d, m, bri);
	for (int l = 0; l < JP_NUM_EAGER_LEVELS; l++)
		pfree(sum[l]);
	pfree(d);
}
