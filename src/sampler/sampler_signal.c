/*-------------------------------------------------------------------------
 *
 * sampler_signal.c
 *	  The hotspot sampler's signal side: the SIGPROF handler, the CPU-time
 *	  timer that drives it, the range table of live JIT code it searches and
 *	  the bounds of the stack it walks.
 *
 * Contract: the only code that runs in signal context; the handler keeps
 * sampler_shared.h's rules (no allocation, lock, shared memory or call,
 * errno restored, the jp_sig.flushing protocol).  A sample goes to the
 * running execution (jp_sig.current) or to the "dropped" counter; a PC in
 * that execution's JIT code is a self sample, a JIT return address found by
 * walking frame pointers inside [SP, top of the main stack) a total sample.
 * The timer counts CPU time only, is created at a backend's first JIT
 * execution and stays armed.  The long story: doc/sampler.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler_signal.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "sampler/sampler_shared.h"

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

/* how many frames the handler walks looking for a JIT caller */
#define MAX_FRAMES		32

typedef struct CodeRange
{
	uintptr_t	start;
	uintptr_t	end;			/* exclusive */
	int			slot;
} CodeRange;

struct JpRangeTable
{
	int			nranges;
	CodeRange	ranges[FLEXIBLE_ARRAY_MEMBER];
};

/* the state shared with the handler: see sampler_shared.h */
JpSamplerShared jp_sig = {
	.compile_node = -1,
};

static JpRangeTable *volatile range_table = NULL;

/* the main thread's stack: [stack_lo, stack_hi) */
static uintptr_t stack_lo = 0;
static uintptr_t stack_hi = 0;

static bool timer_ready = false;
static bool timer_broken = false;	/* could not set up: do not retry */
static timer_t sample_timer;
static int	armed_rate = 0;

/*
 * Pointer stores the handler makes at its next sample, for tiered JIT: each
 * puts a counting wrapper back in front of an expression (the wake-up,
 * jp_sampler_wake_arm).  nwakes is set last and cleared first by the main
 * code.
 */
static void *volatile *wake_slots[JP_SAMPLER_MAX_WAKES];
static void *wake_values[JP_SAMPLER_MAX_WAKES];
static volatile sig_atomic_t nwakes = 0;

/*
 * Make the armed wake-up stores, once: from the handler, and from the main
 * code when the timer stops.  The stores are idempotent, so a handler that
 * interrupts the main code's loop only makes some of them again.
 */
static pg_attribute_always_inline void
make_wakes(void)
{
	int			n = nwakes;

	nwakes = 0;
	pg_compiler_barrier();
	for (int i = 0; i < n; i++)
		*wake_slots[i] = wake_values[i];
}

/* the slot of the function whose code contains pc, or -1 */
static pg_attribute_always_inline int
lookup_slot(const JpRangeTable *table, uintptr_t pc)
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
 * A mid-query flush is due: point the watched plan nodes at the flush
 * trampoline (one pointer store each).  The next node the executor calls
 * flushes from there; doc/sampler.md says why this composes with other
 * wrappers.
 */
static pg_attribute_always_inline void
arm_flush(void)
{
	int			n = jp_sig.narm;

	/*
	 * No plan is watched yet (the query is still in ExecutorStart) or none
	 * will be (its nodes are wrapped): with nothing armed, a flush marked
	 * armed would never be done nor cleared, and the query would not flush
	 * again until it ends.  A later sample tries again.
	 */
	if (n == 0)
		return;
	for (int i = 0; i < n; i++)
	{
		JpWatchEntry *e = jp_sig.arm[i];

		if (e->state != JP_WATCH_IDLE)
			continue;
		/* never forward to ourselves */
		if (e->node->ExecProcNode != jp_flush_trampoline)
		{
			e->saved = e->node->ExecProcNode;
			pg_compiler_barrier();
			e->node->ExecProcNode = jp_flush_trampoline;
		}
		e->state = JP_WATCH_ARMED;
	}
	jp_sig.flush_armed = true;
}

/*
 * The plan node a sample of exec belongs to, charged its self (and compile)
 * sample: the node whose expression is being compiled, else the running
 * node when this execution's plan is wrapped, found from the interrupted
 * frames on the main stack (sampler_nodes.c); -1 for none.
 */
static pg_attribute_always_inline int
charge_node(JpExec *exec, const ucontext_t *uc, uint32 weight)
{
	int			node = -1;
	uintptr_t	sp = CONTEXT_SP(uc);

	if (jp_sig.compile_exec == exec->id && jp_sig.compile_node >= 0)
	{
		node = jp_sig.compile_node;
		exec->node_compile[node] += weight;
	}
	else if (jp_sig.node_exec == exec->id)
	{
		if (sp >= stack_lo && sp < stack_hi)
			node = jp_nodes_running(sp, CONTEXT_FP(uc), stack_hi);
	}
	if (node < 0 || node >= JP_MAX_PLAN_NODES)
		return -1;
	exec->node_self[node] += weight;
	exec->node_sampled = true;
	return node;
}

/* Arm a mid-query flush of exec when enough samples have come since its last. */
static pg_attribute_always_inline void
arm_flush_if_due(const JpExec *exec)
{
	if (jp_sig.flush_after <= 0 || exec->since_flush < jp_sig.flush_after ||
		jp_sig.flush_armed || jp_sig.disarming)
		return;
	/* a wrapped plan flushes at its next node call, in the wrapper */
	if (jp_sig.node_exec == exec->id)
	{
		jp_sig.flush_armed = true;
		jp_sig.flush_pending = true;
		jp_nodes_arm_flush();
	}
	else
		arm_flush();
}

/*
 * Charge a sample to the JIT function of slot, at pc: its total, and when
 * self (pc is the interrupted one) its self sample and node (-1 for none).
 * Code of another execution counts as other_execution only.
 */
static pg_attribute_always_inline void
charge_slot(JpExec *exec, int slot, uintptr_t pc, bool self, int node,
			uint32 weight)
{
	JpStepProfile *steps;

	if (jp_sig.slots[slot].owner != exec->id)
	{
		jp_sig.counts.other_execution += weight;
		return;
	}
	steps = jp_sig.slots[slot].steps;
	jp_sig.slots[slot].total_samples += weight;
	jp_sig.counts.jit_total += weight;
	if (steps != NULL)
		jp_step_profile_charge(steps, pc, weight, self);
	if (!self)
		return;
	jp_sig.slots[slot].self_samples += weight;
	jp_sig.counts.jit_self += weight;
	if (node >= 0)
		exec->node_jit[node] += weight;
}

/*
 * Walk the frame pointers up the main stack looking for a JIT caller, and
 * charge the first one found its total sample.  Reads only inside
 * [sp, stack_hi): that part of the stack is mapped, whatever the registers
 * hold.  Off the main stack, it does not walk.
 */
static pg_attribute_always_inline void
charge_caller(const JpRangeTable *table, JpExec *exec, uintptr_t sp,
			  uintptr_t fp, uint32 weight)
{
	if (sp < stack_lo || sp >= stack_hi)
		return;
	for (int i = 0; i < MAX_FRAMES; i++)
	{
		uintptr_t	next;
		uintptr_t	ret;
		int			slot;

		if (!jp_frame_read(fp, sp, stack_hi, &next, &ret))
			return;
		/* the call instruction, which may be a function's last one */
		slot = lookup_slot(table, ret - 1);
		if (slot >= 0)
		{
			charge_slot(exec, slot, ret - 1, false, -1, weight);
			return;
		}
		/* frames grow down, so callers' frames are at higher addresses */
		if (next <= fp)
			return;
		fp = next;
	}
}

/*
 * SIGPROF handler.  Async-signal-safe: no allocation, no locks, no shared
 * memory, no elog, and no calls (its helpers above are inlined); see
 * sampler_shared.h.
 */
static void
sample_handler(int signo, siginfo_t *info, void *context)
{
	int			save_errno = errno;
	ucontext_t *uc = (ucontext_t *) context;
	JpExec	   *exec = jp_sig.current;
	const JpRangeTable *table;
	uint32		weight = 1;
	int			slot;
	int			node;

	if (info != NULL && info->si_code == SI_TIMER && info->si_overrun > 0)
		weight += (uint32) info->si_overrun;
	jp_sig.ticks += weight;

	/* a tiered query asked to be woken: one pointer store per expression */
	if (nwakes > 0)
		make_wakes();

	/* the main code is reading the counters: count on the side */
	if (jp_sig.flushing)
	{
		jp_sig.side_samples += weight;
		if (exec != NULL)
			exec->deferred_samples += weight;
		errno = save_errno;
		return;
	}

	jp_sig.counts.taken += weight;
	if (exec == NULL)
	{
		jp_sig.counts.dropped += weight;
		errno = save_errno;
		return;
	}
	exec->query_samples += weight;
	exec->since_flush += weight;
	node = charge_node(exec, uc, weight);
	arm_flush_if_due(exec);

	table = range_table;
	if (table != NULL && table->nranges > 0)
	{
		slot = lookup_slot(table, CONTEXT_PC(uc));
		if (slot >= 0)
			charge_slot(exec, slot, CONTEXT_PC(uc), true, node, weight);
		else
			charge_caller(table, exec, CONTEXT_SP(uc), CONTEXT_FP(uc), weight);
	}
	errno = save_errno;
}

/* A table with room for nranges ranges, or NULL; never throws. */
JpRangeTable *
jp_sig_new_table(int nranges)
{
	JpRangeTable *table;

	table = malloc(offsetof(JpRangeTable, ranges) +
				   sizeof(CodeRange) * Max(nranges, 1));
	if (table != NULL)
		table->nranges = 0;
	return table;
}

JpRangeTable *
jp_sig_current_table(void)
{
	return range_table;
}

int
jp_sig_table_size(const JpRangeTable *table)
{
	return table != NULL ? table->nranges : 0;
}

void
jp_sig_table_add(JpRangeTable *table, uintptr_t start, uintptr_t end,
				 int slot)
{
	CodeRange  *r = &table->ranges[table->nranges++];

	r->start = start;
	r->end = end;
	r->slot = slot;
}

/* Copy "from" into "to", leaving out the ranges of one object's slots. */
void
jp_sig_table_copy_except(JpRangeTable *to, const JpRangeTable *from,
						 uint64 object_key)
{
	if (from == NULL)
		return;
	for (int i = 0; i < from->nranges; i++)
	{
		const CodeRange *r = &from->ranges[i];

		if (object_key != 0 && jp_sig.slots[r->slot].object_key == object_key)
			continue;
		to->ranges[to->nranges++] = *r;
	}
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

void
jp_sig_table_sort(JpRangeTable *table)
{
	qsort(table->ranges, table->nranges, sizeof(CodeRange), range_cmp);
}

/*
 * Replace the range table.  The handler runs on this thread, so once the
 * pointer is stored no handler can still be reading the old table.
 */
void
jp_sig_publish_table(JpRangeTable *table)
{
	JpRangeTable *old = range_table;

	pg_compiler_barrier();
	range_table = table;
	pg_compiler_barrier();
	if (old != NULL && old != table)
		free(old);
}

/*
 * The timer's rate in samples per CPU second, or 0 when it does not run:
 * stores armed now are made within 1 / rate seconds of CPU time.
 */
int
jp_sampler_tick_rate(void)
{
	return timer_ready && armed_rate > 0 ? armed_rate : 0;
}

/*
 * The samples the timer has taken in this backend, whatever was running:
 * tiering times the statements it does not take with it (tiering_plan.c).
 */
uint32
jp_sampler_ticks(void)
{
	return jp_sig.ticks;
}

/*
 * Have the handler make N pointer stores (*SLOTS[i] = VALUES[i]) at its next
 * sample, once; replaces what was armed.  N is at most
 * JP_SAMPLER_MAX_WAKES.  The slots must stay valid until the stores are
 * made or jp_sampler_wake_disarm returns.
 */
void
jp_sampler_wake_arm(void *volatile *slots[], void *values[], int n)
{
	Assert(n >= 0 && n <= JP_SAMPLER_MAX_WAKES);
	nwakes = 0;
	pg_compiler_barrier();
	for (int i = 0; i < n; i++)
	{
		wake_slots[i] = slots[i];
		wake_values[i] = values[i];
	}
	pg_compiler_barrier();
	nwakes = n;
}

/* Nothing armed is stored after this returns. */
void
jp_sampler_wake_disarm(void)
{
	nwakes = 0;
	pg_compiler_barrier();
}

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

	/*
	 * The main thread's stack, as glibc reports it: from its top down by
	 * RLIMIT_STACK, bounded by the mapping below.  The kernel keeps other
	 * mappings out of that range, so an SP inside it is on the main stack.
	 */
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
				(errmsg("could not start the jitprof sampler because SIGPROF is already in use in this process"),
				 errdetail("Hotspot samples are not collected in this session."),
				 errhint("Remove the other user of SIGPROF from this process, or set jitprof.sample_rate to 0.")));
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
			(errmsg("could not start the jitprof sampler: %m"),
			 errdetail("Hotspot samples are not collected in this session.")));
	/* do not try again in this process */
	timer_broken = true;
	return false;
}

/*
 * Run the timer at "rate" samples per CPU second (0: stopped).  Makes a
 * system call only when the rate changes, and creates the timer only when
 * it is first needed.
 */
void
jp_sig_set_rate(int rate)
{
	struct itimerspec its;

	if (rate == armed_rate)
		return;
	/* whoever armed stores must not wait for a sample that will not come */
	if (rate <= 0)
		make_wakes();
	if (rate > 0 && !prepare_timer())
	{
		armed_rate = rate;		/* do not try again for this rate */
		return;
	}
	if (!timer_ready)
	{
		armed_rate = rate;
		return;
	}

	memset(&its, 0, sizeof(its));
	if (rate > 0)
	{
		its.it_interval.tv_sec = 0;
		its.it_interval.tv_nsec = 1000000000L / rate;
		if (its.it_interval.tv_nsec == 0)
			its.it_interval.tv_nsec = 1;
		its.it_value = its.it_interval;
	}
	if (timer_settime(sample_timer, 0, &its, NULL) == 0)
		armed_rate = rate;
}
