/*-------------------------------------------------------------------------
 *
 * advisor.c
 *	  The JIT advisor: per-query JIT accounting, the explore mode and the
 *	  statistics of the payoff views (doc/jit_advisor.md).
 *
 * Contract: a statement out of scope pays one comparison at ExecutorStart
 * and one at ExecutorEnd, and no system call.  Nothing here raises an ERROR
 * in a user's query: a failed allocation gives up the exploration with one
 * WARNING per backend.  No cached plan is written (the executor gets a
 * shallow copy).  One LWLock (tranche "jitprof advisor") protects the shared
 * table: shared to decide whether to explore, exclusive to record.  The
 * tiered level is run through tiering (provider layer), which tells the
 * advisor at ExecutorStart what it would do with the plan and asks, per
 * expression, whether the advisor runs the query eagerly.  Scope, measures,
 * workers, modes, the tiered level and persistence: doc/jit_advisor.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/advisor/advisor.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>
#include <time.h>

#include "access/parallel.h"
#include "access/xact.h"
#include "common/hashfn.h"
#include "common/pg_prng.h"
#include "executor/executor.h"
#include "jit/jit.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/float.h"
#include "utils/guc.h"

#include "advisor/advisor.h"
#include "store/store.h"

/* executions between two explorations of a decided query, on average */
#define DRIFT_RATE			0.01

/* GUC variables */
static int	advisor_mode = JP_ADVISOR_OFF;
static double advisor_min_cost = 10000.0;
static double advisor_fraction = 0.1;
static double advisor_max_loss = 0.02;
static int	advisor_max_queries = 1000;
static int	advisor_debug_level = -1;

/* plan cost from which a statement is in scope; see the file header */
double		jp_advisor_cutoff = 0;

/* the execution being measured in this backend, or NULL */
QueryDesc  *jp_advisor_open_query = NULL;

typedef struct AdvisorShared
{
	LWLock	   *lock;
	int64		nentries;
	JpAdvisorSavedCounts counts;	/* as the saved file holds them */
	uint32		nbuckets;		/* a power of 2, >= 2 * max_queries */
	int32		max_queries;
} AdvisorShared;

/* per leader BackendId: the CPU time its parallel workers used */
typedef struct WorkerSlot
{
	pg_atomic_uint32 armed;		/* SLOT_* */
	pg_atomic_uint64 cpu_ns;
} WorkerSlot;

/* a slot's state; the workers of a tiered execution tier too */
#define SLOT_IDLE		0
#define SLOT_EAGER		1
#define SLOT_TIERED		2

static AdvisorShared *adv = NULL;
static int32 *adv_index = NULL; /* [nbuckets] entry number + 1, 0 free */
static JpAdvisorEntry *adv_entries = NULL;
static WorkerSlot *adv_workers = NULL;
static int	adv_nworkers = 0;

/* the open execution of this backend (jp_advisor_open_query) */
typedef struct OpenExec
{
	bool		worker;			/* a parallel worker's share */
	int			nest_level;		/* transaction nesting level at its start */
	PlannedStmt *original;		/* the plan, when the executor got a copy */
	JpAdvisorKey key;
	int			level;			/* the level it runs at */
	int			base_level;		/* the level it runs at unless explored */
	int			pg_level;
	double		plan_cost;
	int64		cpu_start;		/* ns */
	instr_time	wall_start;
	bool		has_jit;
	JitInstrumentation jit;
} OpenExec;

static OpenExec open_exec;
static bool warned = false;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static const struct config_enum_entry mode_options[] = {
	{"off", JP_ADVISOR_OFF, false},
	{"explore", JP_ADVISOR_EXPLORE, false},
	{"enforce", JP_ADVISOR_ENFORCE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry debug_level_options[] = {
	{"none", -1, false},
	{"off", JP_LEVEL_OFF, false},
	{"jit", JP_LEVEL_JIT, false},
	{"jit+opt", JP_LEVEL_JIT_OPT, false},
	{"jit+inline", JP_LEVEL_JIT_INLINE, false},
	{"all", JP_LEVEL_ALL, false},
	{"tiered", JP_LEVEL_TIERED, false},
	{NULL, 0, false}
};

static int
level_of_flags(int flags)
{
	if ((flags & PGJIT_PERFORM) == 0)
		return JP_LEVEL_OFF;
	if ((flags & PGJIT_OPT3) && (flags & PGJIT_INLINE))
		return JP_LEVEL_ALL;
	if (flags & PGJIT_OPT3)
		return JP_LEVEL_JIT_OPT;
	if (flags & PGJIT_INLINE)
		return JP_LEVEL_JIT_INLINE;
	return JP_LEVEL_JIT;
}

/* the jitFlags of "level", with what to compile as in "flags" or the GUCs */
static int
flags_of_level(int level, int flags)
{
	int			what = flags & (PGJIT_EXPR | PGJIT_DEFORM);

	if (level == JP_LEVEL_OFF)
		return PGJIT_NONE;
	if ((flags & PGJIT_PERFORM) == 0)
		what = (jit_expressions ? PGJIT_EXPR : 0) |
			(jit_tuple_deforming ? PGJIT_DEFORM : 0);
	if (what == 0)
		return PGJIT_NONE;
	flags = PGJIT_PERFORM | what;
	if (level == JP_LEVEL_JIT_OPT || level == JP_LEVEL_ALL)
		flags |= PGJIT_OPT3;
	if (level == JP_LEVEL_JIT_INLINE || level == JP_LEVEL_ALL)
		flags |= PGJIT_INLINE;
	return flags;
}

/* can "level" run this plan?  Off always; tiered where tiering offers it */
static bool
level_runs(int level, int flags, const JpTieringOffer *offer)
{
	if (level == JP_LEVEL_OFF)
		return true;
	if (level == JP_LEVEL_TIERED)
		return offer->available;
	return flags_of_level(level, flags) != PGJIT_NONE;
}

/* the jitFlags a plan with "flags" runs "level" with */
static int
level_flags(int level, int flags, const JpTieringOffer *offer)
{
	if (level == JP_LEVEL_TIERED)
		return offer->flags;
	return flags_of_level(level, flags);
}

static void
set_cutoff(int mode, double min_cost)
{
	if (mode == JP_ADVISOR_OFF)
		jp_advisor_cutoff = get_float8_infinity();
	else if (InitializingParallelWorker)
		jp_advisor_cutoff = -get_float8_infinity();
	else
		jp_advisor_cutoff = min_cost;
}

static void
assign_mode(int newval, void *extra)
{
	set_cutoff(newval, advisor_min_cost);
}

static void
assign_min_cost(double newval, void *extra)
{
	set_cutoff(advisor_mode, newval);
}

/* ------------------------------------------------------------------------
 * Shared memory
 * ------------------------------------------------------------------------
 */

static uint32
bucket_count(int max_queries)
{
	uint32		n = 1;

	while (n < 2 * (uint32) max_queries)
		n <<= 1;
	return n;
}

static Size
table_memsize(void)
{
	Size		size = MAXALIGN(sizeof(AdvisorShared));

	size = add_size(size, MAXALIGN(mul_size(bucket_count(advisor_max_queries),
											sizeof(int32))));
	size = add_size(size, mul_size(advisor_max_queries,
								   sizeof(JpAdvisorEntry)));
	return size;
}

static Size
workers_memsize(void)
{
	return mul_size(MaxBackends + 1, sizeof(WorkerSlot));
}

static void
advisor_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(add_size(CACHELINEALIGN(table_memsize()),
									CACHELINEALIGN(workers_memsize())));
	RequestNamedLWLockTranche("jitprof advisor", 1);
}

static JpAdvisorEntry *entry_find(const JpAdvisorKey *key, bool add);
static void register_callbacks(void);

/*
 * Fill the empty table from the saved file (advisor_file.c).  In the
 * postmaster at start, before any backend exists: no lock.
 */
static void
advisor_load(void)
{
	JpAdvisorSavedCounts c;
	JpAdvisorEntry *entries;
	int64		n;

	entries = jp_advisor_file_load(adv->max_queries, &n, &c);
	if (entries == NULL)
		return;
	for (int64 k = 0; k < n; k++)
	{
		int64		before = adv->nentries;
		JpAdvisorEntry *e = entry_find(&entries[k].key, true);

		/* a key twice in the file: the first one stays */
		if (e != NULL && adv->nentries > before)
			*e = entries[k];
	}
	adv->counts = c;
	pfree(entries);
}

/* At postmaster exit: a clean shutdown saves the table. */
static void
advisor_save(int code, Datum arg)
{
	if (code != 0 || !jitprof_save || adv == NULL)
		return;
	jp_advisor_file_save(adv_entries, adv->nentries, &adv->counts);
}

static void
advisor_shmem_startup(void)
{
	bool		found;
	bool		found_workers;
	char	   *base;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	base = ShmemInitStruct("jitprof advisor", table_memsize(), &found);
	adv = (AdvisorShared *) base;
	adv_index = (int32 *) (base + MAXALIGN(sizeof(AdvisorShared)));
	adv_entries = (JpAdvisorEntry *)
		(base + MAXALIGN(sizeof(AdvisorShared)) +
		 MAXALIGN(bucket_count(advisor_max_queries) * sizeof(int32)));
	if (!found)
	{
		/* the entries are zero as the kernel gave them: touched when used */
		memset(adv, 0, sizeof(AdvisorShared));
		adv->lock = &(GetNamedLWLockTranche("jitprof advisor"))->lock;
		adv->nbuckets = bucket_count(advisor_max_queries);
		adv->max_queries = advisor_max_queries;
		memset(adv_index, 0, adv->nbuckets * sizeof(int32));
	}
	adv_workers = ShmemInitStruct("jitprof advisor workers",
								  workers_memsize(), &found_workers);
	adv_nworkers = MaxBackends + 1;
	if (!found_workers)
	{
		for (int i = 0; i < adv_nworkers; i++)
		{
			pg_atomic_init_u32(&adv_workers[i].armed, 0);
			pg_atomic_init_u64(&adv_workers[i].cpu_ns, 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);

	/* the postmaster loads the saved table and saves it at shutdown */
	if (!IsUnderPostmaster)
	{
		on_shmem_exit(advisor_save, (Datum) 0);
		if (!found && jitprof_save)
			advisor_load();
	}
}

bool
jp_advisor_available(void)
{
	return adv != NULL;
}

static uint32
key_hash(const JpAdvisorKey *key)
{
	return hash_bytes((const unsigned char *) key, sizeof(JpAdvisorKey));
}

/* the entry of "key", or with "add" a new one; NULL if none (or no room) */
static JpAdvisorEntry *
entry_find(const JpAdvisorKey *key, bool add)
{
	uint32		mask = adv->nbuckets - 1;
	uint32		i = key_hash(key) & mask;

	for (;;)
	{
		int32		slot = adv_index[i];
		JpAdvisorEntry *e;

		if (slot == 0)
		{
			if (!add || adv->nentries >= adv->max_queries)
				return NULL;
			e = &adv_entries[adv->nentries];
			memset(e, 0, sizeof(JpAdvisorEntry));
			e->key = *key;
			e->used = true;
			e->enforce_level = -1;
			adv_index[i] = (int32) (++adv->nentries);
			return e;
		}
		e = &adv_entries[slot - 1];
		if (e->key.userid == key->userid && e->key.dbid == key->dbid &&
			e->key.queryid == key->queryid)
			return e;
		i = (i + 1) & mask;
	}
}

/* ------------------------------------------------------------------------
 * Measuring an execution
 * ------------------------------------------------------------------------
 */

static bool
cpu_now(int64 *ns)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return false;
	*ns = (int64) ts.tv_sec * INT64CONST(1000000000) + ts.tv_nsec;
	return true;
}

/* what went wrong, for the one WARNING a backend gives */
typedef enum AdvisorFailure
{
	FAILED_PLAN_COPY,
	FAILED_CPU_CLOCK
} AdvisorFailure;

static void
warn_once(AdvisorFailure failure)
{
	if (warned)
		return;
	warned = true;
	if (failure == FAILED_PLAN_COPY)
		ereport(WARNING,
				(errmsg("JIT advisor could not copy a plan to explore another JIT level"),
				 errdetail("The query ran at the JIT level PostgreSQL chose.  This backend reports no further JIT advisor failure.")));
	else
		ereport(WARNING,
				(errmsg("JIT advisor could not read the CPU clock"),
				 errdetail("The execution was not measured.  This backend reports no further JIT advisor failure.")));
}

/*
 * The level this execution runs at unless explored (*base): PostgreSQL's,
 * or in enforce mode a decided query's best level.  Returns the level it
 * runs at: *base, or with luck another one drawn at random, unless the
 * query is decided (then only at the drift rate) or exploration spent its
 * budget.  Only called while the session has jit on.
 */
static int
choose_level(const JpAdvisorKey *key, int pg_level, int pg_flags,
			 const JpTieringOffer *offer, int *base)
{
	JpAdvisorEntry *e;
	double		p = advisor_fraction;
	int			others[JP_NUM_LEVELS];
	int			nothers = 0;
	int			enforce = -1;

	*base = pg_level;
	LWLockAcquire(adv->lock, LW_SHARED);
	e = entry_find(key, false);
	if (e != NULL && advisor_mode == JP_ADVISOR_ENFORCE)
		enforce = e->enforce_level;
	if (adv->counts.explore_loss_ms > advisor_max_loss * adv->counts.cpu_ms)
		p = 0;
	else if (e != NULL && e->decided)
		p = Min(p, DRIFT_RATE);
	LWLockRelease(adv->lock);

	/*
	 * A level that compiles nothing here (no jit_expressions...), or tiered
	 * where tiering is off, leaves the query at its own level.
	 */
	if (enforce >= 0 && level_runs(enforce, pg_flags, offer))
		*base = enforce;

	if (advisor_debug_level >= 0)
		return level_runs(advisor_debug_level, pg_flags, offer) ?
			advisor_debug_level : *base;
	if (p <= 0 || pg_prng_double(&pg_global_prng_state) >= p)
		return *base;

	/* with tiering on, tiered is one more level to draw */
	for (int l = 0; l < JP_NUM_LEVELS; l++)
		if (l != *base && level_runs(l, pg_flags, offer))
			others[nothers++] = l;
	if (nothers == 0)
		return *base;
	return others[pg_prng_uint64_range(&pg_global_prng_state, 0, nothers - 1)];
}

static void
worker_start(QueryDesc *queryDesc)
{
	uint32		armed;

	if (adv_workers == NULL || JP_LEADER_BACKEND_SLOT <= 0 ||
		JP_LEADER_BACKEND_SLOT >= adv_nworkers ||
		jp_advisor_open_query != NULL)
		return;
	armed = pg_atomic_read_u32(&adv_workers[JP_LEADER_BACKEND_SLOT].armed);
	if (armed == SLOT_IDLE)
		return;
	memset(&open_exec, 0, sizeof(open_exec));
	open_exec.worker = true;
	/* only jp_advisor_tiering reads a worker's level */
	open_exec.level = armed == SLOT_TIERED ? JP_LEVEL_TIERED : JP_LEVEL_JIT;
	if (!cpu_now(&open_exec.cpu_start))
		return;
	jp_advisor_open_query = queryDesc;
}

/*
 * An in-scope ExecutorStart (the plan's cost passed jp_advisor_cutoff),
 * before the next hook: decide the level and start the clocks.  OFFER is
 * what tiering would do with the plan: where it would tier it, that is the
 * query's own level, and the tiered level is one more to explore.  A forced
 * switch point (a test's) is no level the advisor chose: it is not followed.
 */
void
jp_advisor_start(QueryDesc *queryDesc, int eflags, bool toplevel,
				 const JpTieringOffer *offer)
{
	PlannedStmt *pstmt = queryDesc->plannedstmt;
	OpenExec	o;
	int			flags;

	register_callbacks();
	if (IsParallelWorker())
	{
		worker_start(queryDesc);
		return;
	}
	if (!toplevel || adv == NULL || jp_advisor_open_query != NULL ||
		pstmt->queryId == UINT64CONST(0) ||
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) != 0 || offer->forced)
		return;

	memset(&o, 0, sizeof(o));
	o.nest_level = GetCurrentTransactionNestLevel();
	o.key.userid = GetUserId();
	o.key.dbid = MyDatabaseId;
	o.key.queryid = (int64) pstmt->queryId;
	o.plan_cost = pstmt->planTree->total_cost;
	/* a session's jit = off is its level, and is never explored */
	if (!jit_enabled)
		o.pg_level = JP_LEVEL_OFF;
	else if (offer->available)
		o.pg_level = JP_LEVEL_TIERED;
	else
		o.pg_level = level_of_flags(pstmt->jitFlags);
	o.level = o.base_level = o.pg_level;
	if (jit_enabled)
		o.level = choose_level(&o.key, o.pg_level, pstmt->jitFlags, offer,
							   &o.base_level);

	/* tiering leaves the plans the advisor follows alone: it promotes here */
	flags = o.level == o.pg_level && o.level != JP_LEVEL_TIERED ?
		pstmt->jitFlags : level_flags(o.level, pstmt->jitFlags, offer);
	if (flags != pstmt->jitFlags)
	{
		if (jp_plan_with_jit_flags(queryDesc, flags))
			o.original = pstmt;
		else
		{
			/* it runs as PostgreSQL planned it, and is recorded so */
			warn_once(FAILED_PLAN_COPY);
			o.level = o.base_level = o.pg_level =
				jit_enabled ? level_of_flags(pstmt->jitFlags) : JP_LEVEL_OFF;
		}
	}

	if (!cpu_now(&o.cpu_start))
	{
		if (o.original != NULL)
			queryDesc->plannedstmt = o.original;
		warn_once(FAILED_CPU_CLOCK);
		return;
	}
	INSTR_TIME_SET_CURRENT(o.wall_start);
	if (JP_MY_BACKEND_SLOT > 0 && JP_MY_BACKEND_SLOT < adv_nworkers)
	{
		pg_atomic_write_u64(&adv_workers[JP_MY_BACKEND_SLOT].cpu_ns, 0);
		pg_atomic_write_u32(&adv_workers[JP_MY_BACKEND_SLOT].armed,
							o.level == JP_LEVEL_TIERED ? SLOT_TIERED : SLOT_EAGER);
	}
	open_exec = o;
	jp_advisor_open_query = queryDesc;
}

/*
 * How the advisor runs the query of ESTATE, for tiering (provider layer),
 * which defers a query's expressions unless the advisor runs it at an eager
 * level.  Called for each expression the provider compiles, so one pointer
 * comparison for the queries the advisor does not follow.
 */
JpAdvisedTiering
jp_advisor_tiering(EState *estate)
{
	if (jp_advisor_open_query == NULL ||
		jp_advisor_open_query->estate != estate)
		return JP_ADVISED_NONE;
	return open_exec.level == JP_LEVEL_TIERED ? JP_ADVISED_TIERED :
		JP_ADVISED_EAGER;
}

/*
 * Has the advisor judged this user's query QUERYID, in this database, a
 * query where JIT loses?  For tiering (provider layer), which then does not
 * compile it.  The verdict is jp_advisor_judge's, as the views show it.
 */
bool
jp_advisor_jit_loses(int64 queryid)
{
	JpAdvisorKey key;
	JpAdvisorEntry *e;
	JpAdvisorEntry copy;
	JpAdvisorJudgement j;
	bool		found = false;

	if (adv == NULL || queryid == 0)
		return false;
	memset(&key, 0, sizeof(key));
	key.userid = GetUserId();
	key.dbid = MyDatabaseId;
	key.queryid = queryid;
	LWLockAcquire(adv->lock, LW_SHARED);
	e = entry_find(&key, false);
	if (e != NULL && e->decided)
	{
		copy = *e;
		found = true;
	}
	LWLockRelease(adv->lock);
	if (!found)
		return false;
	jp_advisor_judge(&copy, &j);
	return strcmp(j.verdict, "jit loses") == 0;
}

/* Before the executor releases the JIT context: its instrumentation. */
void
jp_advisor_end_before(QueryDesc *queryDesc)
{
	EState	   *estate = queryDesc->estate;

	if (open_exec.worker || estate == NULL || estate->es_jit == NULL)
		return;
	open_exec.has_jit = true;
	open_exec.jit = estate->es_jit->instr;
}

static void
level_add(JpLevelStats *s, double cpu, double wall, const OpenExec *o)
{
	double		delta = cpu - s->cpu_mean;

	s->executions++;
	s->cpu_mean += delta / (double) s->executions;
	s->cpu_m2 += delta * (cpu - s->cpu_mean);
	s->wall_sum += wall;
	if (o->has_jit)
	{
		s->generation_sum += INSTR_TIME_GET_MILLISEC(o->jit.generation_counter);
		s->inlining_sum += INSTR_TIME_GET_MILLISEC(o->jit.inlining_counter);
		s->optimization_sum += INSTR_TIME_GET_MILLISEC(o->jit.optimization_counter);
		s->emission_sum += INSTR_TIME_GET_MILLISEC(o->jit.emission_counter);
	}
}

static void
record(const OpenExec *o, double cpu, double wall)
{
	JpAdvisorEntry *e;
	JpAdvisorJudgement j;

	LWLockAcquire(adv->lock, LW_EXCLUSIVE);
	e = entry_find(&o->key, true);
	if (e == NULL)
	{
		adv->counts.dropped++;
		LWLockRelease(adv->lock);
		return;
	}
	adv->counts.executions++;
	adv->counts.cpu_ms += cpu;
	if (o->base_level != o->pg_level)
		adv->counts.enforced++;
	if (o->level != o->base_level)
	{
		/* what it cost above the level it would have run at */
		const JpLevelStats *base = &e->level[o->base_level];

		adv->counts.explored++;
		adv->counts.explore_cpu_ms += cpu;
		if (base->executions > 0 && cpu > base->cpu_mean)
		{
			adv->counts.explore_loss_ms += cpu - base->cpu_mean;
			e->explore_loss += cpu - base->cpu_mean;
		}
	}
	e->pg_level = (int16) o->pg_level;
	e->plan_cost = o->plan_cost;
	level_add(&e->level[o->level], cpu, wall, o);
	jp_advisor_judge(e, &j);
	e->decided = strcmp(j.verdict, "undecided") != 0;

	/*
	 * Enforce mode's level: a decided query's best measured level, which is
	 * off when JIT loses and the best JIT level when it pays (the verdict
	 * compares the best JIT level with off).
	 */
	e->enforce_level = (int16) (e->decided ? j.best : -1);
	LWLockRelease(adv->lock);
}

/*
 * After ExecutorEnd: the clocks, the workers' share, the entry.  Puts back
 * the plan the executor was given.
 */
void
jp_advisor_end_after(QueryDesc *queryDesc)
{
	OpenExec	o = open_exec;
	int64		cpu_end;
	instr_time	wall;
	double		cpu_ms;

	jp_advisor_open_query = NULL;
	if (o.original != NULL)
		queryDesc->plannedstmt = o.original;
	if (!cpu_now(&cpu_end))
	{
		warn_once(FAILED_CPU_CLOCK);
		cpu_end = o.cpu_start;
	}
	if (o.worker)
	{
		pg_atomic_fetch_add_u64(&adv_workers[JP_LEADER_BACKEND_SLOT].cpu_ns,
								(uint64) Max(cpu_end - o.cpu_start, 0));
		return;
	}
	INSTR_TIME_SET_CURRENT(wall);
	INSTR_TIME_SUBTRACT(wall, o.wall_start);
	cpu_ms = (double) (cpu_end - o.cpu_start) / 1e6;
	if (JP_MY_BACKEND_SLOT > 0 && JP_MY_BACKEND_SLOT < adv_nworkers)
	{
		pg_atomic_write_u32(&adv_workers[JP_MY_BACKEND_SLOT].armed, SLOT_IDLE);
		cpu_ms += (double) pg_atomic_exchange_u64(&adv_workers[JP_MY_BACKEND_SLOT].cpu_ns,
												  0) / 1e6;
	}
	record(&o, cpu_ms, INSTR_TIME_GET_MILLISEC(wall));
}

/*
 * An execution that did not reach its ExecutorEnd (an error) is not
 * recorded: at the end of its transaction, or of the subtransaction it
 * started in, it is forgotten.  (A subtransaction that the query itself
 * runs, a PL/pgSQL exception block, is deeper and leaves it alone.)  Its
 * QueryDesc and plan copy belong to memory that goes with it.
 */
static void
forget_open(void)
{
	if (jp_advisor_open_query == NULL)
		return;
	jp_advisor_open_query = NULL;
	if (!open_exec.worker && JP_MY_BACKEND_SLOT > 0 && JP_MY_BACKEND_SLOT < adv_nworkers)
		pg_atomic_write_u32(&adv_workers[JP_MY_BACKEND_SLOT].armed, SLOT_IDLE);
}

static void
advisor_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PREPARE)
		forget_open();
}

static void
advisor_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && jp_advisor_open_query != NULL &&
		GetCurrentTransactionNestLevel() <= open_exec.nest_level)
		forget_open();
}

/*
 * Only an advised query needs the transaction callbacks, so a backend
 * registers them when the advisor first sees one of its queries: work the
 * advisor never sees pays nothing at commit.
 */
static void
register_callbacks(void)
{
	static bool registered = false;

	if (registered)
		return;
	RegisterXactCallback(advisor_xact_callback, NULL);
	RegisterSubXactCallback(advisor_subxact_callback, NULL);
	registered = true;
}

/* ------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------
 */

/*
 * A copy of every entry, in CurrentMemoryContext; allocated before the lock
 * is taken (the table never holds more than its cap).
 */
JpAdvisorEntry *
jp_advisor_copy(int64 *nentries)
{
	JpAdvisorEntry *copy;

	copy = palloc_extended(Max(adv->max_queries, 1) * sizeof(JpAdvisorEntry),
						   MCXT_ALLOC_HUGE);
	LWLockAcquire(adv->lock, LW_SHARED);
	*nentries = adv->nentries;
	memcpy(copy, adv_entries, adv->nentries * sizeof(JpAdvisorEntry));
	LWLockRelease(adv->lock);
	return copy;
}

void
jp_advisor_counts(JpAdvisorCounts *c)
{
	memset(c, 0, sizeof(*c));
	c->max_queries = advisor_max_queries;
	c->entry_bytes = sizeof(JpAdvisorEntry);
	if (adv == NULL)
		return;
	c->shmem_bytes = CACHELINEALIGN(table_memsize()) +
		CACHELINEALIGN(workers_memsize());
	LWLockAcquire(adv->lock, LW_SHARED);
	c->entries = adv->nentries;
	c->dropped = adv->counts.dropped;
	c->executions = adv->counts.executions;
	c->explored = adv->counts.explored;
	c->enforced = adv->counts.enforced;
	c->cpu_ms = adv->counts.cpu_ms;
	c->explore_cpu_ms = adv->counts.explore_cpu_ms;
	c->explore_loss_ms = adv->counts.explore_loss_ms;
	LWLockRelease(adv->lock);
}

void
jp_advisor_reset(void)
{
	if (adv == NULL)
		return;
	LWLockAcquire(adv->lock, LW_EXCLUSIVE);
	memset(adv_index, 0, adv->nbuckets * sizeof(int32));
	adv->nentries = 0;
	memset(&adv->counts, 0, sizeof(adv->counts));
	LWLockRelease(adv->lock);
}

void
jp_advisor_init(void)
{
	DefineCustomEnumVariable("jitprof.jit_advisor",
							 "Measures whether JIT pays per query, explores other JIT levels, and applies the best one.",
							 "off records nothing; explore records in-scope executions and runs jitprof.advisor_fraction of them at another JIT level; enforce also runs each decided query at its best measured level.",
							 &advisor_mode,
							 JP_ADVISOR_OFF,
							 mode_options,
							 PGC_SUSET,
							 0,
							 NULL, assign_mode, NULL);
	DefineCustomRealVariable("jitprof.advisor_min_cost",
							 "Plan cost from which the JIT advisor measures an execution.",
							 "Cheaper statements pay one comparison.",
							 &advisor_min_cost,
							 10000.0,
							 0.0,
							 DBL_MAX,
							 PGC_SUSET,
							 0,
							 NULL, assign_min_cost, NULL);
	DefineCustomRealVariable("jitprof.advisor_fraction",
							 "Share of in-scope executions the JIT advisor runs at another JIT level.",
							 "A query whose verdict is decided is explored at most once in 100 executions.",
							 &advisor_fraction,
							 0.1,
							 0.0,
							 1.0,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomRealVariable("jitprof.advisor_max_loss",
							 "Share of the in-scope CPU time that exploring other JIT levels may lose.",
							 "Exploration pauses while its loss is above this share.",
							 &advisor_max_loss,
							 0.02,
							 0.0,
							 1.0,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("jitprof.debug_advisor_level",
							 "Runs every in-scope execution at this JIT level in explore mode (for tests).",
							 "tiered runs only where jitprof.tiering would tier the plan.",
							 &advisor_debug_level,
							 -1,
							 debug_level_options,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	set_cutoff(advisor_mode, advisor_min_cost);

	/* without preloading there is no table, and no hook calls us */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("jitprof.advisor_max_queries",
							"Maximum number of queries in the JIT advisor's shared table.",
							"Executions of queries that find no room are counted in jitprof_advisor.dropped.",
							&advisor_max_queries,
							1000,
							10,
							1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = advisor_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = advisor_shmem_startup;
}
