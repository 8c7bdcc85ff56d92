/*-------------------------------------------------------------------------
 *
 * advisor.h
 *	  The advisor layer (doc/architecture.md, doc/jit_advisor.md): does JIT
 *	  pay for a query?  Per-query JIT accounting in a bounded shared table,
 *	  the explore mode that runs a fraction of executions at another JIT
 *	  level, and the statistics the payoff views show.
 *
 * The executor hooks layer calls jp_advisor_start and jp_advisor_end_*;
 * the views read copies of the table (jp_advisor_copy) and judge each entry
 * with jp_advisor_judge, so that the rule is written once.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/advisor/advisor.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_ADVISOR_H
#define JITPROF_ADVISOR_H

#include "executor/execdesc.h"

#include "core/core.h"

/*
 * The JIT levels: the five PostgreSQL can choose, as es_jit_flags encode
 * them, then tiered JIT's (jitprof.tiering), which the flags cannot tell.
 */
typedef enum JpJitLevel
{
	JP_LEVEL_OFF = 0,			/* no PGJIT_PERFORM */
	JP_LEVEL_JIT,				/* PGJIT_PERFORM only */
	JP_LEVEL_JIT_OPT,			/* and PGJIT_OPT3 */
	JP_LEVEL_JIT_INLINE,		/* and PGJIT_INLINE */
	JP_LEVEL_ALL,				/* and both */
	JP_LEVEL_TIERED,			/* interpreted first, compiled when it pays */
	JP_NUM_LEVELS
} JpJitLevel;

/* the levels PostgreSQL's thresholds can give a plan */
#define JP_NUM_EAGER_LEVELS		JP_LEVEL_TIERED

/*
 * What tiered JIT would do with a plan, as the provider layer tells the
 * advisor at ExecutorStart (the advisor is below it and cannot ask).
 */
typedef struct JpTieringOffer
{
	bool		forced;			/* a forced switch point: the advisor leaves
								 * the query alone */
	bool		available;		/* the plan can run tiered */
	int			flags;			/* the jitFlags it runs tiered with */
} JpTieringOffer;

/* how the advisor runs a query, as tiering asks for each expression */
typedef enum JpAdvisedTiering
{
	JP_ADVISED_NONE = 0,		/* not followed: tiering decides */
	JP_ADVISED_EAGER,			/* at an eager level: not deferred */
	JP_ADVISED_TIERED			/* at the tiered level */
} JpAdvisedTiering;

/* jitprof.jit_advisor */
typedef enum JpAdvisorMode
{
	JP_ADVISOR_OFF = 0,
	JP_ADVISOR_EXPLORE,
	JP_ADVISOR_ENFORCE
} JpAdvisorMode;

/* one level's measurements of one query (Welford's running moments) */
typedef struct JpLevelStats
{
	int64		executions;
	double		cpu_mean;		/* ms, leader and parallel workers */
	double		cpu_m2;			/* sum of squared deviations, ms^2 */
	double		wall_sum;		/* ms */
	double		generation_sum; /* ms: es_jit->instr's phases */
	double		inlining_sum;
	double		optimization_sum;
	double		emission_sum;
} JpLevelStats;

typedef struct JpAdvisorKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
} JpAdvisorKey;

/* one query's entry in the shared table */
typedef struct JpAdvisorEntry
{
	JpAdvisorKey key;
	bool		used;
	bool		decided;		/* its verdict is not undecided */
	int16		pg_level;		/* the level without the advisor
								 * (PostgreSQL's, or tiered), latest execution */
	int16		enforce_level;	/* a decided query's best level, or -1 */
	int16		spare;			/* zero */
	double		plan_cost;		/* latest execution's */
	double		explore_loss;	/* ms spent above PostgreSQL's level */
	JpLevelStats level[JP_NUM_LEVELS];
} JpAdvisorEntry;

/* the table's counters, for jitprof_advisor */
typedef struct JpAdvisorCounts
{
	int64		entries;
	int64		max_queries;
	int64		dropped;		/* executions of queries that found no room */
	int64		executions;		/* recorded in-scope executions */
	int64		explored;		/* of which ran at another level */
	int64		enforced;		/* ran at a decided level, not PostgreSQL's */
	double		cpu_ms;			/* CPU of the recorded executions */
	double		explore_cpu_ms; /* of which explored */
	double		explore_loss_ms;	/* explored CPU above PostgreSQL's level */
	int64		entry_bytes;
	int64		shmem_bytes;
} JpAdvisorCounts;

/* the table's counters, in shared memory and in the saved file */
typedef struct JpAdvisorSavedCounts
{
	int64		dropped;
	int64		executions;
	int64		explored;
	int64		enforced;
	double		cpu_ms;
	double		explore_cpu_ms;
	double		explore_loss_ms;
} JpAdvisorSavedCounts;

/* a comparison of two levels: mean saving of "to" over "from", Welch */
typedef struct JpAdvisorJudgement
{
	int			best;			/* level, or -1 while no level has enough */
	bool		has_saving;		/* saving* are set */
	double		saving;			/* ms per execution, PostgreSQL's minus best */
	double		saving_low;		/* 95% confidence interval */
	double		saving_high;
	const char *verdict;		/* "jit pays", "jit loses", "undecided" */
	bool		has_bound;		/* a one-execution bound: bound, assumption */
	double		bound;			/* ms that jit = off saves at least */
	char		assumption[256];
	/* tiered against off and the best eager JIT level, where measured */
	bool		has_tiered_vs_off;
	double		tiered_vs_off;	/* ms per execution, off's minus tiered's */
	bool		has_tiered_vs_eager;
	double		tiered_vs_eager;	/* the best eager JIT level's minus
									 * tiered's */
	const char *tiered_verdict; /* NULL while tiered never ran */
} JpAdvisorJudgement;

/* one query of a workload, for the threshold optimiser (advice.c) */
typedef struct JpAdviceQuery
{
	int64		queryid;
	double		plan_cost;
	double		calls;
	int			pg_level;		/* -1: not known */
	bool		measured[JP_NUM_LEVELS];
	double		cpu[JP_NUM_LEVELS]; /* mean ms, where measured */
} JpAdviceQuery;

/* what the planner's JIT settings decide; a threshold of -1 never passes */
typedef struct JpThresholds
{
	bool		jit;
	double		above;
	double		optimize;
	double		inline_;
} JpThresholds;

/* executions a level needs before it is compared */
#define JP_ADVISOR_MIN_EXECUTIONS	5

extern double jp_advisor_cutoff;
extern QueryDesc *jp_advisor_open_query;

extern void jp_advisor_init(void);
extern void jp_advisor_start(QueryDesc *queryDesc, int eflags, bool toplevel,
							 const JpTieringOffer *offer);
extern JpAdvisedTiering jp_advisor_tiering(EState *estate);
extern void jp_advisor_end_before(QueryDesc *queryDesc);
extern void jp_advisor_end_after(QueryDesc *queryDesc);
extern bool jp_advisor_available(void);
extern JpAdvisorEntry *jp_advisor_copy(int64 *nentries);
extern void jp_advisor_counts(JpAdvisorCounts *counts);
extern void jp_advisor_reset(void);
extern bool jp_advisor_jit_loses(int64 queryid);

/* advisor_stats.c: statistics and verdicts, from an entry's numbers only */
extern void jp_advisor_judge(const JpAdvisorEntry *entry,
							 JpAdvisorJudgement *out);
extern const char *jp_level_name(int level);
extern double jp_level_cpu_stddev(const JpLevelStats *s);

/* advisor_file.c: the table saved at shutdown, loaded at start */
extern JpAdvisorEntry *jp_advisor_file_load(int64 max_entries, int64 *nentries,
											JpAdvisorSavedCounts *counts);
extern void jp_advisor_file_save(const JpAdvisorEntry *entries, int64 nentries,
								 const JpAdvisorSavedCounts *counts);

/* advice.c */
extern int	jp_level_at(const JpThresholds *t, double cost);
extern double jp_workload_cpu(const JpAdviceQuery *q, int n,
							  const JpThresholds *t);
extern void jp_advise(const JpAdviceQuery *q, int n, JpThresholds *best);

#endif							/* JITPROF_ADVISOR_H */
