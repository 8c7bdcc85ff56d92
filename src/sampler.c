/*-------------------------------------------------------------------------
 *
 * sampler.c
 *	  Per-backend CPU-time sampler that attributes samples to JIT functions.
 *
 * While a top-level query is in the executor (ExecutorStart, ExecutorRun,
 * ExecutorFinish and ExecutorEnd at nesting level 0), a POSIX CPU-time timer
 * (CLOCK_PROCESS_CPUTIME_ID) sends SIGPROF to the backend's thread
 * jitprof.sample_rate times per CPU second.  PostgreSQL itself does not use
 * SIGPROF in backends.  The kernel checks CPU timers at its scheduler tick,
 * so at rates above the tick rate some expirations arrive together; the
 * handler weighs each signal by 1 + si_overrun so that counts stay
 * proportional to CPU time.
 *
 * The handler reads the interrupted PC from the signal context and looks it
 * up in a sorted table of the live JIT functions' address ranges: a hit is a
 * "self" sample for that function.  Otherwise it walks the frame-pointer
 * chain (JIT code keeps frame pointers, see provider.c) up to MAX_FRAMES
 * steps, reading only inside the thread's stack and only upwards, looking
 * for a return address inside JIT code: a hit is a "total" (inclusive)
 * sample, time spent in a PostgreSQL function that JIT code called.  Every
 * sample also counts toward the running query's own total.
 *
 * Signal-safety contract: the handler does no allocation, takes no lock,
 * touches no shared memory and calls no function that is not
 * async-signal-safe; it saves and restores errno.  The range table is
 * replaced, never modified: the sink callbacks build a new table with
 * malloc, publish it with one pointer store, and only then free the old one.
 * The handler runs on the backend's only PostgreSQL thread
 * (SIGEV_THREAD_ID), so once the store is done no handler can still be
 * reading the old table.  Counters are plain per-function slots; the code
 * that reads and zeroes them (flush) blocks SIGPROF while it does.
 *
 * Samples are aggregated in this backend and flushed into the shared store
 * (store.c) when the top-level query ends (ExecutorEnd), and during a long
 * query every jitprof.flush_interval seconds of CPU time.  A flush needs a
 * lock, so it cannot happen in the handler: when one is due, the handler
 * points the ExecProcNode of the running plan's nodes at flush_trampoline()
 * (one pointer store each, nothing else), and the next node the executor
 * calls flushes, restores every node's function and carries on.  Outside
 * those moments the executor runs untouched.  The slot of a function whose
 * code is freed earlier (a statement nested in a function frees its code at
 * its own ExecutorEnd) is recycled there, its counts kept in a backend-local
 * table until the flush.  Parallel workers sample and flush on their own,
 * under the leader's query ID and user.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "access/parallel.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "jitprof.h"
#include "store.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* registers of the interrupted code, from the signal context */
#if defined(__x86_64__)
#define CONTEXT_PC(uc)	((uintptr_t) (uc)->uc_mcontext.gregs[REG_RIP])
#define CONTEXT_SP(uc)	((uintptr_t) (uc)->uc_mcontext.gregs[REG_RSP])
#define CONTEXT_FP(uc)	((uintptr_t) (uc)->uc_mcontext.gregs[REG_RBP])
#elif defined(__aarch64__)
#define CONTEXT_PC(uc)	((uintptr_t) (uc)->uc_mcontext.pc)
#define CONTEXT_SP(uc)	((uintptr_t) (uc)->uc_mcontext.sp)
#define CONTEXT_FP(uc)	((uintptr_t) (uc)->uc_mcontext.regs[29])
#else
#error "jitprof's sampler supports x86-64 and AArch64 only"
#endif

/* how many live JIT functions one backend can attribute samples to */
#define MAX_SLOTS		4096
/* how many frames the handler walks looking for a JIT caller */
#define MAX_FRAMES		32

/* one JIT function this backend knows of, live or awaiting its flush */
typedef struct SampledFunction
{
	/* written by the signal handler */
	volatile uint32 self_samples;
	volatile uint32 total_samples;

	bool		in_use;			/* slot holds a function */
	bool		live;			/* code still mapped */
	bool		compiled;		/* linked since the last flush */
	bool		in_query;		/* linked by the running top-level query */
	uint64		object_key;
	uint64		size;
	JitprofOrigin origin;
} SampledFunction;

typedef struct CodeRange
{
	uintptr_t	start;
	uintptr_t	end;			/* exclusive */
	int			slot;
} CodeRange;

typedef struct RangeTable
{
	int			nranges;
	CodeRange	ranges[FLEXIBLE_ARRAY_MEMBER];
} RangeTable;

int			jitprof_sample_rate = 99;
int			jitprof_flush_interval = 10;

/*
 * The plan nodes of the running top-level query, and their ExecProcNode
 * functions while a mid-query flush is armed.
 */
typedef struct WatchedNode
{
	PlanState  *node;
	ExecProcNodeMtd saved;
}			WatchedNode;

#define MAX_WATCHED		256

static WatchedNode watched[MAX_WATCHED];
static volatile int nwatched = 0;
static volatile sig_atomic_t flush_armed = false;
static volatile uint32 samples_since_flush = 0;
static uint32 flush_after_samples = 0;	/* 0: flush only at the end */
static QueryDesc *running_query = NULL;

static TupleTableSlot *flush_trampoline(PlanState *node);

static SampledFunction slots[MAX_SLOTS];
static int	slots_hwm = 0;		/* slots[slots_hwm ..] are all free */
static RangeTable *volatile range_table = NULL;

/* state shared with the signal handler */
static volatile sig_atomic_t sampling = false;
static volatile uint32 query_samples = 0;
static volatile uint32 h_taken = 0;
static volatile uint32 h_self = 0;
static volatile uint32 h_total = 0;
static volatile uint32 h_dropped = 0;
static uint32 functions_untracked = 0;
static int	ndead_slots = 0;

/*
 * Functions whose code was freed before the top-level query ended (code of
 * statements nested in a function is freed at each nested ExecutorEnd):
 * their counts wait here, so that their slots can be reused at once.
 */
typedef struct PendingKey
{
	int64		queryid;
	int32		plan_node_id;
	uint32		discriminator;
} PendingKey;

typedef struct PendingFunction
{
	PendingKey	key;			/* hash key: must be first */
	JitprofOrigin origin;
	int64		self_samples;
	int64		total_samples;
	int64		compilations;
	int64		code_bytes;
	bool		in_query;
} PendingFunction;

static HTAB *pending = NULL;

/* the thread's stack, the only memory the frame walk reads */
static uintptr_t stack_lo = 0;
static uintptr_t stack_hi = 0;

static bool timer_ready = false;
static bool timer_broken = false;	/* could not set up: do not retry */
static timer_t sample_timer;
static int	nesting_level = 0;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;

/* the function whose code contains pc, or -1; async-signal-safe */
static inline int
lookup_slot(const RangeTable *table, uintptr_t pc)
{
	int			lo = 0;
	int			hi = table->nranges - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		const CodeRange *r = &table->ranges[mid];

		if (pc < r->start)
			hi = mid - 1;
		else if (pc >= r->end)
			lo = mid + 1;
		else
			return r->slot;
	}
	return -1;
}

/*
 * SIGPROF handler.  Async-signal-safe: no allocation, no locks, no shared
 * memory, no elog; see the file header.
 */
static void
sample_handler(int signo, siginfo_t *info, void *context)
{
	int			save_errno = errno;
	ucontext_t *uc = (ucontext_t *) context;
	const RangeTable *table = range_table;
	uint32		weight = 1;
	uintptr_t	pc;
	uintptr_t	fp;
	uintptr_t	lo;
	int			slot;

	if (info != NULL && info->si_code == SI_TIMER && info->si_overrun > 0)
		weight += (uint32) info->si_overrun;

	h_taken += weight;
	if (!sampling)
	{
		h_dropped += weight;
		errno = save_errno;
		return;
	}
	query_samples += weight;

	/* a mid-query flush is due: have the executor's next node call do it */
	samples_since_flush += weight;
	if (flush_after_samples > 0 && samples_since_flush >= flush_after_samples &&
		!flush_armed && nwatched > 0)
	{
		for (int i = 0; i < nwatched; i++)
		{
			watched[i].saved = watched[i].node->ExecProcNode;
			watched[i].node->ExecProcNode = flush_trampoline;
		}
		flush_armed = true;
	}

	if (table == NULL || table->nranges == 0)
	{
		errno = save_errno;
		return;
	}

	pc = CONTEXT_PC(uc);
	slot = lookup_slot(table, pc);
	if (slot >= 0)
	{
		slots[slot].self_samples += weight;
		slots[slot].total_samples += weight;
		h_self += weight;
		h_total += weight;
		errno = save_errno;
		return;
	}

	/*
	 * Walk the frame pointers up the stack looking for a JIT caller.  Only
	 * the part of the stack between the interrupted stack pointer and the
	 * stack's top is read: it is mapped, whatever the registers hold.
	 */
	if (stack_hi == 0)
	{
		errno = save_errno;
		return;
	}
	lo = Max(stack_lo, CONTEXT_SP(uc));
	fp = CONTEXT_FP(uc);
	for (int i = 0; i < MAX_FRAMES; i++)
	{
		uintptr_t	next;
		uintptr_t	ret;

		if (fp < lo || fp > stack_hi - 2 * sizeof(uintptr_t) ||
			(fp & (sizeof(uintptr_t) - 1)) != 0)
			break;
		next = ((const uintptr_t *) fp)[0];
		ret = ((const uintptr_t *) fp)[1];
		slot = lookup_slot(table, ret);
		if (slot >= 0)
		{
			slots[slot].total_samples += weight;
			h_total += weight;
			break;
		}
		/* frames grow down, so callers' frames are at higher addresses */
		if (next <= fp)
			break;
		fp = next;
	}
	errno = save_errno;
}

/* Block or unblock SIGPROF, around code that reads the handler's counters. */
static void
block_sampler(bool block, sigset_t *old)
{
	sigset_t	set;

	if (block)
	{
		sigemptyset(&set);
		sigaddset(&set, SIGPROF);
		sigprocmask(SIG_BLOCK, &set, old);
	}
	else
		sigprocmask(SIG_SETMASK, old, NULL);
}

/* Replace the range table; see the file header for why this is safe. */
static void
publish_table(RangeTable *table)
{
	RangeTable *old = range_table;

	pg_compiler_barrier();
	range_table = table;
	pg_compiler_barrier();
	if (old != NULL)
		free(old);
}

static int
range_cmp(const void *a, const void *b)
{
	const CodeRange *ra = (const CodeRange *) a;
	const CodeRange *rb = (const CodeRange *) b;

	if (ra->start != rb->start)
		return ra->start < rb->start ? -1 : 1;
	return 0;
}

/* the lowest free slot, so that the slots in use stay compact */
static int
take_slot(void)
{
	for (int i = 0; i < slots_hwm; i++)
		if (!slots[i].in_use)
			return i;
	if (slots_hwm < MAX_SLOTS)
		return slots_hwm++;
	return -1;
}

static void
shrink_slots_hwm(void)
{
	while (slots_hwm > 0 && !slots[slots_hwm - 1].in_use)
		slots_hwm--;
}

/*
 * The store keys helpers (functions llvmjit generated that naming.c did not
 * name, e.g. kept-alive inlined callees) by a per-backend counter; fold them
 * into one entry per query so that their key is stable.
 */
static void
stable_origin(JitprofOrigin *origin)
{
	if (strcmp(origin->role, "helper") == 0)
		snprintf(origin->symbol, JP_SYMBOL_LEN, "q" INT64_FORMAT "_helpers",
				 origin->queryid);
}

/* sink callback: runs inside LLVM's call stack, must never throw */
static void
sampler_object_linked(const JitprofObject *object)
{
	const RangeTable *old = range_table;
	int			nold = old ? old->nranges : 0;
	RangeTable *table;
	int			n;

	table = malloc(offsetof(RangeTable, ranges) +
				   sizeof(CodeRange) * (nold + object->nfunctions));
	if (table == NULL)
	{
		functions_untracked += object->nfunctions;
		return;
	}
	if (nold > 0)
		memcpy(table->ranges, old->ranges, sizeof(CodeRange) * nold);
	n = nold;

	for (int i = 0; i < object->nfunctions; i++)
	{
		const JitprofFunction *fn = &object->functions[i];
		int			slot;
		SampledFunction *sf;

		if (fn->size == 0)
			continue;
		slot = take_slot();
		if (slot < 0)
		{
			functions_untracked++;
			continue;
		}
		sf = &slots[slot];
		sf->self_samples = 0;
		sf->total_samples = 0;
		sf->in_use = true;
		sf->live = true;
		sf->compiled = true;
		sf->in_query = true;
		sf->object_key = object->key;
		sf->size = fn->size;
		sf->origin = fn->origin;
		stable_origin(&sf->origin);

		table->ranges[n].start = (uintptr_t) fn->address;
		table->ranges[n].end = (uintptr_t) (fn->address + fn->size);
		table->ranges[n].slot = slot;
		n++;
	}
	table->nranges = n;
	qsort(table->ranges, n, sizeof(CodeRange), range_cmp);
	publish_table(table);
}

/* sink callback: runs inside LLVM's call stack, must never throw */
static void
sampler_object_freed(const JitprofObject *object)
{
	const RangeTable *old = range_table;
	RangeTable *table;
	int			n = 0;

	if (old == NULL)
		return;

	table = malloc(offsetof(RangeTable, ranges) +
				   sizeof(CodeRange) * Max(old->nranges, 1));
	if (table == NULL)
	{
		/*
		 * The dead ranges stay in the table, and their slots stay in use.
		 * JITLink's arena never reuses addresses, so nothing is
		 * misattributed; only the slots are lost.
		 */
		return;
	}
	for (int i = 0; i < old->nranges; i++)
	{
		const CodeRange *r = &old->ranges[i];

		if (slots[r->slot].object_key == object->key)
		{
			slots[r->slot].live = false;
			ndead_slots++;
		}
		else
			table->ranges[n++] = *r;
	}
	table->nranges = n;
	publish_table(table);
}

static bool
sampler_sink_enabled(void)
{
	return jp_store_available();
}

static const JitprofSink sampler_sink = {
	sampler_sink_enabled,
	sampler_object_linked,
	sampler_object_freed
};

/* Install the handler and create the timer, once per process. */
static bool
prepare_timer(void)
{
	struct sigaction sa;
	struct sigevent sev;
	pthread_attr_t attr;

	if (timer_ready)
		return true;
	if (timer_broken)
		return false;

	if (pthread_getattr_np(pthread_self(), &attr) == 0)
	{
		void	   *addr;
		size_t		size;

		if (pthread_attr_getstack(&attr, &addr, &size) == 0)
		{
			stack_lo = (uintptr_t) addr;
			stack_hi = (uintptr_t) addr + size;
		}
		pthread_attr_destroy(&attr);
	}

	/* someone else's SIGPROF handler (a gprof build, say): leave it alone */
	if (sigaction(SIGPROF, NULL, &sa) != 0)
		goto fail;
	if ((sa.sa_flags & SA_SIGINFO) ?
		(sa.sa_sigaction != NULL && sa.sa_sigaction != sample_handler) :
		(sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
	{
		ereport(WARNING,
				(errmsg("jitprof could not start its sampler: SIGPROF is already in use in this process"),
				 errdetail("Hotspot samples are not collected in this session.")));
		timer_broken = true;
		return false;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sample_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		goto fail;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &sample_timer) != 0)
		goto fail;

	timer_ready = true;
	return true;

fail:
	ereport(WARNING,
			(errmsg("jitprof could not start its sampler: %m"),
			 errdetail("Hotspot samples are not collected in this session.")));
	/* do not try again in this process */
	timer_broken = true;
	return false;
}

static void
set_timer(int rate)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	if (rate > 0)
	{
		its.it_interval.tv_sec = 0;
		its.it_interval.tv_nsec = 1000000000L / rate;
		if (its.it_interval.tv_nsec == 0)
			its.it_interval.tv_nsec = 1;
		its.it_value = its.it_interval;
	}
	timer_settime(sample_timer, 0, &its, NULL);
}

/* Start sampling a top-level query, if the sampler is on. */
static bool
start_sampling(void)
{
	if (nesting_level != 0 || jitprof_sample_rate <= 0 ||
		!jp_store_available() || !prepare_timer())
		return false;
	sampling = true;
	set_timer(jitprof_sample_rate);
	return true;
}

static void
stop_sampling(void)
{
	sampling = false;
	set_timer(0);
}

/*
 * Move the counts of functions whose code is gone into the pending table
 * and free their slots.  Freed code is no longer in the range table, so the
 * signal handler cannot touch these slots any more.
 */
static void
recycle_dead_slots(void)
{
	if (ndead_slots == 0)
		return;

	if (pending == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(PendingKey);
		ctl.entrysize = sizeof(PendingFunction);
		ctl.hcxt = TopMemoryContext;
		pending = hash_create("jitprof pending functions", 64, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	for (int i = 0; i < slots_hwm; i++)
	{
		SampledFunction *sf = &slots[i];
		PendingKey	key;
		PendingFunction *pf;
		bool		found;

		if (!sf->in_use || sf->live)
			continue;
		memset(&key, 0, sizeof(key));
		key.queryid = sf->origin.queryid;
		key.plan_node_id = sf->origin.plan_node_id;
		key.discriminator = jp_store_discriminator(sf->origin.symbol);
		pf = hash_search(pending, &key, HASH_ENTER, &found);
		if (!found)
		{
			memset((char *) pf + sizeof(PendingKey), 0,
				   sizeof(PendingFunction) - sizeof(PendingKey));
			pf->origin = sf->origin;
		}
		pf->self_samples += sf->self_samples;
		pf->total_samples += sf->total_samples;
		pf->in_query |= sf->in_query;
		if (sf->compiled)
		{
			pf->compilations++;
			pf->code_bytes = sf->size;
		}
		sf->in_use = false;
	}
	ndead_slots = 0;
	shrink_slots_hwm();
}

/*
 * Hand everything counted since the last flush to the store: the live
 * functions' counts and the pending ones.  "final" is the flush at the end
 * of the top-level query, which counts an execution; the others only add
 * samples.  A function's query_samples are those of the top-level query
 * that linked it, counted in every flush of that query.
 */
static void
flush_samples(QueryDesc *queryDesc, bool final)
{
	static JpStoreDelta deltas[MAX_SLOTS];
	int			ndeltas = 0;
	sigset_t	old;
	int64		qsamples;
	JpSamplerHealth health;
	JpStoreDelta *all = deltas;
	int			npending;

	recycle_dead_slots();
	npending = pending ? hash_get_num_entries(pending) : 0;
	if (npending > 0)
		all = palloc((MAX_SLOTS + npending) * sizeof(JpStoreDelta));

	block_sampler(true, &old);
	qsamples = query_samples;
	query_samples = 0;
	samples_since_flush = 0;
	memset(&health, 0, sizeof(health));
	health.samples_taken = h_taken;
	health.samples_jit_self = h_self;
	health.samples_jit_total = h_total;
	health.samples_dropped = h_dropped;
	health.functions_untracked = functions_untracked;
	h_taken = h_self = h_total = h_dropped = 0;
	functions_untracked = 0;

	for (int i = 0; i < slots_hwm; i++)
	{
		SampledFunction *sf = &slots[i];
		JpStoreDelta *d;

		if (!sf->in_use)
			continue;
		if (sf->compiled || sf->self_samples > 0 || sf->total_samples > 0)
		{
			d = &all[ndeltas++];
			d->origin = &sf->origin;
			d->self_samples = sf->self_samples;
			d->total_samples = sf->total_samples;
			d->compilations = sf->compiled ? 1 : 0;
			d->code_bytes = sf->size;
			/* percentages are relative to the executions that ran the code */
			d->query_samples = sf->in_query ? qsamples : 0;
			sf->self_samples = 0;
			sf->total_samples = 0;
			sf->compiled = false;
		}
		if (final)
			sf->in_query = false;
	}
	block_sampler(false, &old);

	if (npending > 0)
	{
		HASH_SEQ_STATUS status;
		PendingFunction *pf;

		hash_seq_init(&status, pending);
		while ((pf = hash_seq_search(&status)) != NULL)
		{
			JpStoreDelta *d = &all[ndeltas++];

			d->origin = &pf->origin;
			d->self_samples = pf->self_samples;
			d->total_samples = pf->total_samples;
			d->compilations = pf->compilations;
			d->code_bytes = pf->code_bytes;
			d->query_samples = pf->in_query ? qsamples : 0;
		}
	}

	/*
	 * Nothing compiled and nothing sampled: leave the store's lock alone, so
	 * that short statements without JIT code cost nothing.
	 */
	if (ndeltas > 0 || health.samples_taken > 0 ||
		health.functions_untracked > 0)
		jp_store_flush(GetUserId(), MyDatabaseId,
					   (int64) queryDesc->plannedstmt->queryId,
					   final && !IsParallelWorker(), qsamples, all, ndeltas,
					   &health);

	/* the deltas point into the pending table, so empty it only now */
	if (npending > 0)
	{
		hash_destroy(pending);
		pending = NULL;
		pfree(all);
	}
}

static void
sampler_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	bool		started;

	/* a new top-level query: forget samples of one that failed */
	if (nesting_level == 0)
	{
		query_samples = 0;
		samples_since_flush = 0;
	}

	/* plan initialisation generates the JIT code: that is the query's too */
	started = start_sampling();
	nesting_level++;
	PG_TRY();
	{
		if (prev_ExecutorStart)
			prev_ExecutorStart(queryDesc, eflags);
		else
			standard_ExecutorStart(queryDesc, eflags);
	}
	PG_FINALLY();
	{
		nesting_level--;
		if (started)
			stop_sampling();
	}
	PG_END_TRY();
}

/*
 * Collect the plan's nodes into watched[]; context counts them.  The
 * handler does not look at watched[] until nwatched is published.
 */
static bool
watch_node(PlanState *node, void *context)
{
	int		   *n = (int *) context;

	if (node == NULL)
		return false;
	if (*n < MAX_WATCHED)
	{
		watched[*n].node = node;
		watched[*n].saved = NULL;
		(*n)++;
	}
	return planstate_tree_walker(node, watch_node, context);
}

/*
 * Put back the ExecProcNode functions that an armed flush replaced, and
 * return the one of "node" (NULL if it was not replaced).
 */
static ExecProcNodeMtd
disarm_flush(PlanState *node)
{
	ExecProcNodeMtd result = NULL;
	sigset_t	old;

	block_sampler(true, &old);
	if (flush_armed)
	{
		for (int i = 0; i < nwatched; i++)
		{
			if (watched[i].node->ExecProcNode != flush_trampoline)
				continue;
			watched[i].node->ExecProcNode = watched[i].saved;
			if (watched[i].node == node)
				result = watched[i].saved;
		}
		flush_armed = false;
	}
	block_sampler(false, &old);
	return result;
}

/*
 * Stands in for a plan node's ExecProcNode when a mid-query flush is due:
 * flushes from this safe point in the executor, then runs the node.
 */
static TupleTableSlot *
flush_trampoline(PlanState *node)
{
	ExecProcNodeMtd next = disarm_flush(node);

	if (next == NULL)
		elog(ERROR, "jitprof: plan node %d is not watched by the sampler",
			 node->plan ? node->plan->plan_node_id : -1);
	flush_samples(running_query, false);
	return next(node);
}

static void
sampler_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
					uint64 count, bool execute_once)
{
	bool		started = start_sampling();

	if (started && jitprof_flush_interval > 0)
	{
		int			n = 0;

		watch_node(queryDesc->planstate, &n);
		running_query = queryDesc;
		flush_after_samples = (uint32) Min((int64) jitprof_flush_interval *
										   jitprof_sample_rate, PG_UINT32_MAX);
		pg_compiler_barrier();
		nwatched = n;
	}

	nesting_level++;
	PG_TRY();
	{
		if (prev_ExecutorRun)
			prev_ExecutorRun(queryDesc, direction, count, execute_once);
		else
			standard_ExecutorRun(queryDesc, direction, count, execute_once);
	}
	PG_FINALLY();
	{
		nesting_level--;
		if (started)
		{
			stop_sampling();
			disarm_flush(NULL);
			nwatched = 0;
			running_query = NULL;
		}
	}
	PG_END_TRY();
}

static void
sampler_ExecutorFinish(QueryDesc *queryDesc)
{
	bool		started = start_sampling();

	nesting_level++;
	PG_TRY();
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_FINALLY();
	{
		nesting_level--;
		if (started)
			stop_sampling();
	}
	PG_END_TRY();
}

static void
sampler_ExecutorEnd(QueryDesc *queryDesc)
{
	/* releasing the query's JIT code is the query's time too */
	bool		started = start_sampling();

	nesting_level++;
	PG_TRY();
	{
		if (prev_ExecutorEnd)
			prev_ExecutorEnd(queryDesc);
		else
			standard_ExecutorEnd(queryDesc);
	}
	PG_FINALLY();
	{
		nesting_level--;
		if (started)
			stop_sampling();
	}
	PG_END_TRY();

	if (!jp_store_available())
		return;

	/* the query's JIT code is released by now; flush it and its samples */
	if (nesting_level == 0)
		flush_samples(queryDesc, true);
	else
		recycle_dead_slots();
}

void
jp_sampler_init(void)
{
	DefineCustomIntVariable("jitprof.sample_rate",
							"Samples per CPU second taken by the hotspot sampler; 0 turns it off.",
							"Takes effect at the next query.  Needs jitprof in shared_preload_libraries.",
							&jitprof_sample_rate,
							99,
							0,
							10000,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("jitprof.flush_interval",
							"CPU time after which a running query's samples are flushed to the hotspot store.",
							"0 flushes only when the query ends.",
							&jitprof_flush_interval,
							10,
							0,
							3600,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	/* the store and its executor hooks exist only when preloaded */
	if (!process_shared_preload_libraries_in_progress)
		return;

	jp_registry_register_sink(&sampler_sink);

	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = sampler_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = sampler_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = sampler_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = sampler_ExecutorEnd;
}
