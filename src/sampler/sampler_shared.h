/*-------------------------------------------------------------------------
 *
 * sampler_shared.h
 *	  What the hotspot sampler's files share, and no other layer includes:
 *	  jp_sig, the one struct the SIGPROF handler shares with the main code.
 *
 * jp_sig is written by three files only: sampler_signal.c (the handler, the
 * only code that runs in signal context), sampler_profile.c (executions,
 * slots, flushes and flush points) and sampler_nodes.c (the running
 * plan node); JpSamplerShared below says who writes which field, and when.
 * Signal-safety contract.  The handler runs on the backend's only thread,
 * between two instructions of the main code, never beside it.  Hence:
 *	- every field it reads or writes is volatile (a sig_atomic_t for a flag
 *	  one side sets and the other clears), and the main code orders its
 *	  stores with pg_compiler_barrier();
 *	- the handler adds to counters, sets flush_armed and flush_pending,
 *	  stores into watched or wrapped plan nodes' ExecProcNode while a flush
 *	  is due, makes the pointer stores tiering armed (jp_sampler_wake_arm),
 *	  and reads the range table and the stack; it allocates nothing, takes
 *	  no lock, touches no shared memory and calls no function but
 *	  jp_nodes_arm_flush, which makes those stores for a wrapped plan,
 *	  jp_nodes_running and jp_call_site_position, which only read;
 *	- counters the main code reads and zeroes are guarded by jp_sig.flushing,
 *	  not by blocking the signal: while it is set, the handler adds only to
 *	  side_samples and the execution's deferred_samples;
 *	- the range table is replaced by one pointer store, never changed in place.
 * The long story: doc/sampler.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler_shared.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_SAMPLER_SHARED_H
#define JITPROF_SAMPLER_SHARED_H

#include <signal.h>

#include "executor/execdesc.h"
#include "nodes/execnodes.h"

#include "core/core.h"
#include "link/link.h"
#include "names/names.h"
#include "sampler/sampler.h"
#include "store/store.h"

/* how many JIT functions one backend can attribute samples to at once */
#define JP_MAX_SLOTS		4096
/* how many executions (statements, open cursors) can be tracked at once */
#define JP_MAX_EXECS		32
/* how many plan nodes of a running statement can serve as flush points */
#define JP_MAX_WATCHED		256
/* plan nodes with a plan_node_id below this get a plan-node profile */
#define JP_MAX_PLAN_NODES	256

/*
 * Samples of one JIT function per expression step, for a function with a
 * step table (jitprof.steps).  The handler finds the row of a PC's offset
 * by binary search in offsets[]: a self sample counts for the step of the
 * interrupted PC (self and total), a sample in code the function called for
 * the step of the call (total).  One malloc'd block, never changed once the
 * slot is published except for the counters.
 */
typedef struct JpStepProfile
{
	uintptr_t	start;			/* the function's address */
	int			nranges;
	int			ndistinct;		/* distinct steps: entries of step[] */
	int			none_index;		/* index of JP_STEP_NONE in step[] */
	const uint32 *offsets;		/* [nranges] ascending row offsets */
	const uint16 *which;		/* [nranges] index into step[] */
	const int32 *step;			/* [ndistinct] JitprofStepRange.step */
	volatile uint32 *self;		/* [ndistinct], written by the handler */
	volatile uint32 *total;		/* [ndistinct], written by the handler */
	JitprofStepLabels *labels;	/* what the steps are, or NULL */
	Size		bytes;			/* size of the block */
	struct JpStepProfile *next; /* in a pending function's list */
} JpStepProfile;

/* One JIT function this backend knows of, live or awaiting its flush. */
typedef struct JpSlot
{
	/* written by the signal handler while jp_sig.flushing is clear */
	volatile uint32 self_samples;
	volatile uint32 total_samples;

	/* read by the signal handler: per-step counters, or NULL */
	JpStepProfile *volatile steps;

	/* read by the signal handler: the execution its samples belong to */
	volatile uint32 owner;		/* JpExec.id, 0 for none */

	bool		in_use;			/* slot holds a function */
	bool		live;			/* code still mapped */
	bool		compiled;		/* linked since the last flush */
	uint64		object_key;
	uint64		size;
	JitprofOrigin origin;
} JpSlot;

typedef enum JpExecState
{
	JP_EXEC_FREE = 0,
	JP_EXEC_OPEN,				/* running, or a cursor between FETCHes */
	JP_EXEC_FAILED				/* ended by an error; flushed later */
} JpExecState;

/*
 * One execution of a statement that runs JIT code: a top-level query, a
 * top-level utility statement in which JIT queries ran (EXPLAIN ANALYZE, DO,
 * CALL, CREATE TABLE AS ...), or a cursor from DECLARE to CLOSE.  Every
 * sample taken while it is jp_sig.current belongs to it.
 */
typedef struct JpExec
{
	/* written by the signal handler */
	volatile uint32 query_samples;	/* while jp_sig.flushing is clear */
	volatile uint32 deferred_samples;	/* while jp_sig.flushing is set */
	volatile uint32 since_flush;
	/* per plan_node_id, while jp_sig.flushing is clear (sampler_nodes.c) */
	volatile uint32 node_self[JP_MAX_PLAN_NODES];
	volatile uint32 node_jit[JP_MAX_PLAN_NODES];
	volatile uint32 node_compile[JP_MAX_PLAN_NODES];
	volatile bool node_sampled; /* some node_self is not zero */

	/* main code only */
	uint32		id;				/* never 0 while not free */
	JpExecState state;
	const QueryDesc *owner;		/* the query it follows; NULL for a utility */
	int64		queryid;
	Oid			userid;
	Oid			dbid;
	bool		count_at_end;	/* its ExecutorEnd counts the execution */
	struct JpNodeShape *shape;	/* its plan's nodes, once captured */
	int			nshape;
	bool		shape_sent;
	bool		nodes_tracked;	/* its plan was wrapped for the node profile */
} JpExec;

/* counters of the signal handler, flushed with every execution */
typedef struct JpHandlerCounts
{
	volatile uint32 taken;
	volatile uint32 jit_self;
	volatile uint32 jit_total;
	volatile uint32 dropped;	/* no JIT execution was running */
	volatile uint32 other_execution;	/* JIT code of another execution */
} JpHandlerCounts;

/* a plan node that can serve as a mid-query flush point */
typedef enum JpWatchState
{
	JP_WATCH_IDLE = 0,			/* its own ExecProcNode in place */
	JP_WATCH_ARMED,				/* ExecProcNode points at the trampoline */
	JP_WATCH_LOST				/* someone else changed it while armed */
} JpWatchState;

typedef struct JpWatchEntry
{
	PlanState  *node;			/* hash key; NULL for an empty entry */
	ExecProcNodeMtd saved;		/* what the trampoline forwards to */
	volatile JpWatchState state;
	bool		in_call;		/* the trampoline is running for it */
} JpWatchEntry;

/*
 * The state shared between the signal handler and the main code.  Who
 * writes what, and when:
 *
 *	slots, execs   The handler adds to the sample counters marked "written
 *				   by the signal handler" in JpSlot and JpExec, while flushing
 *				   is clear (deferred_samples while it is set).  The main code
 *				   (sampler_profile.c) fills and frees the rest of a slot or
 *				   an execution, and reads and zeroes the counters at a flush.
 *	current        main code (sampler_profile.c): when the hooks layer
 *				   enters and leaves a hook of an execution's query, and when
 *				   an execution opens or ends.  The handler charges to it.
 *	flushing       main code (take_handler_counts in sampler_profile.c),
 *				   around the read and reset of the counters.
 *	side_samples, counts
 *				   handler: one add per sample; main code reads and zeroes
 *				   them at a flush (side_samples only while flushing is clear).
 *	flush_after    main code (sampler_profile.c), when an execution starts;
 *				   read by the handler to see that a mid-query flush is due.
 *	flush_armed    set by the handler when it arms the flush; cleared by the
 *				   main code once the flush has run or been given up
 *				   (sampler_profile.c, sampler_nodes.c).
 *	disarming      main code (sampler_profile.c) while it puts the watched
 *				   nodes' ExecProcNode back: the handler must not arm then.
 *	arm, narm      main code (sampler_profile.c) at ExecutorRun, entries
 *				   before the count; the handler reads them to arm the
 *				   watched nodes.
 *	node_exec      main code (sampler_nodes.c) when a plan is wrapped or
 *				   unwrapped; read by the handler, which then asks
 *				   sampler_nodes.c for the running node (jp_nodes_running:
 *				   the frame slots that each node call stores to).
 *	compile_exec, compile_node
 *				   main code (sampler_nodes.c), around a compile_expr call;
 *				   read by the handler to charge compile time to the node.
 *	flush_pending  set by the handler when a flush is due while plan nodes
 *				   are wrapped (and the nodes on their entries pointed at the
 *				   wrapper); cleared by sampler_nodes.c when it flushes.
 *	ticks          handler: one add per sample, whatever runs; main code
 *				   (tiering's timing, through jp_sampler_ticks) only reads it.
 *	nopen, forward_fallbacks
 *				   main code only (sampler_profile.c): here because they
 *				   describe the executions above.
 */
typedef struct JpSamplerShared
{
	JpSlot		slots[JP_MAX_SLOTS];
	JpExec		execs[JP_MAX_EXECS];
	JpExec	   *volatile current;
	volatile sig_atomic_t flushing;
	volatile uint32 side_samples;
	JpHandlerCounts counts;
	volatile uint32 flush_after;	/* samples; 0: no mid-query flush */
	volatile sig_atomic_t flush_armed;
	volatile sig_atomic_t disarming;
	JpWatchEntry *arm[JP_MAX_WATCHED];
	volatile int narm;
	volatile uint32 node_exec;	/* JpExec.id whose plan is wrapped */
	volatile uint32 compile_exec;	/* JpExec.id compiling for ... */
	volatile int32 compile_node;	/* ... this plan node, or -1 */
	volatile sig_atomic_t flush_pending;
	volatile uint32 ticks;
	int			nopen;			/* executions in state OPEN */
	uint32		forward_fallbacks;
} JpSamplerShared;

/*
 * jitprof.so's own (the build hides every definition): declared so, code
 * addresses it from the PC instead of loading its address from the GOT
 * first, one instruction and one register less in each plan node's entry
 * (sampler_nodes.c), which runs at every node call.
 */
#pragma GCC visibility push(hidden)
extern JpSamplerShared jp_sig;
#pragma GCC visibility pop

/* sampler_signal.c: the range table */
typedef struct JpRangeTable JpRangeTable;
extern void jp_sig_publish_table(JpRangeTable *table);
extern JpRangeTable *jp_sig_new_table(int nranges);
extern int	jp_sig_table_size(const JpRangeTable *table);
extern JpRangeTable *jp_sig_current_table(void);
extern void jp_sig_table_add(JpRangeTable *table, uintptr_t start,
							 uintptr_t end, int slot);
extern void jp_sig_table_copy_except(JpRangeTable *to,
									 const JpRangeTable *from,
									 uint64 object_key);
extern void jp_sig_table_sort(JpRangeTable *table);
extern void jp_sig_set_rate(int rate);

/* sampler_profile.c (jp_sampler_rate shows the rate to other folders) */
extern int	jitprof_sample_rate;
extern double jitprof_flush_interval;
extern JpExec *jp_exec_open(const QueryDesc *owner, int64 queryid,
							bool count_at_end);
extern void jp_exec_fail(JpExec *exec);
extern void jp_exec_finish(JpExec *exec, bool count_execution);
extern void jp_exec_flush(JpExec *exec, bool count_execution, bool final);
extern void jp_flush_due(void);
extern void jp_recycle_dead_slots(void);
extern void jp_profile_register_sink(void);
extern TupleTableSlot *jp_flush_trampoline(PlanState *node);
extern TupleTableSlot *jp_run_node_itself(PlanState *node);
extern void jp_watch_forget_all(void);

static inline JpExec *
jp_exec_of(const QueryDesc *queryDesc)
{
	if (jp_sig.nopen == 0)
		return NULL;
	for (int i = 0; i < JP_MAX_EXECS; i++)
		if (jp_sig.execs[i].state == JP_EXEC_OPEN &&
			jp_sig.execs[i].owner == queryDesc)
			return &jp_sig.execs[i];
	return NULL;
}

/* sampler_nodes.c: the running plan node the handler reads */
extern bool jitprof_plan_nodes;
extern bool jp_nodes_install(QueryDesc *queryDesc, JpExec *exec,
							 uintptr_t top);
extern int	jp_nodes_running(uintptr_t sp, uintptr_t fp, uintptr_t stack_end);
extern uintptr_t jp_nodes_nested_begin(uintptr_t at);
extern void jp_nodes_nested_end(uintptr_t old);
extern void jp_nodes_uninstall(bool capture);
extern void jp_nodes_arm_flush(void);	/* the handler's */
extern void jp_nodes_reset_after_error(void);
extern void jp_nodes_forget_exec(JpExec *exec);
extern void jp_nodes_capture_shape(JpExec *exec);
extern void jp_nodes_define_gucs(void);

/* sampler_sites.c: which child of its parent a node call's site calls */
#define JP_SITE_OUTER	0
#define JP_SITE_INNER	1
#define JP_SITE_ROOT	2
extern bool jp_call_site_learn(uintptr_t ret, ExecProcNodeMtd parent_fn,
							   int position);
extern int	jp_call_site_position(uintptr_t ret, ExecProcNodeMtd parent_fn);
extern void jp_call_site_counts(uint64 *known, uint64 *ambiguous,
								uint64 *dropped);

/* sampler_tiering.c: tiered JIT's counts, flushed with their execution */
#define JP_TIER_MAX_NODES	64
extern bool jp_tiering_take(JpExec *exec, bool count_execution,
							JpStoreTiering *out, JpStoreTierNode *nodes);

/* sampler_steps.c */
extern JpStepProfile *jp_step_profile_make(const JitprofFunction *fn);
extern void jp_step_profile_free(JpStepProfile *profile);
extern int	jp_step_profile_take(JpStepProfile *profile,
								 const JitprofOrigin *origin,
								 JpStoreStepDelta *out);

/*
 * Charge a sample to the step whose code holds "pc": a self sample, or one
 * in code called from there.  Runs in the signal handler: reads only the
 * profile, which does not change while the slot is published.
 */
static inline void
jp_step_profile_charge(JpStepProfile *profile, uintptr_t pc, uint32 weight,
					   bool self)
{
	uintptr_t	offset = pc - profile->start;
	int			lo = 0;
	int			hi = profile->nranges - 1;
	int			row = -1;
	int			index;

	/* the last row starting at or before the offset */
	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (profile->offsets[mid] <= offset)
		{
			row = mid;
			lo = mid + 1;
		}
		else
			hi = mid - 1;
	}
	index = row >= 0 ? profile->which[row] : profile->none_index;
	if (self)
		profile->self[index] += weight;
	profile->total[index] += weight;
}

/*
 * The frame record (saved frame pointer, return address) that the frame
 * pointer fp points at, if fp is aligned and the record lies wholly in
 * [lo, hi), part of the main stack, which is mapped; false, reading
 * nothing, otherwise.  Code that keeps no frame pointer may leave any value
 * in the register, so the bounds are compared without overflow.  The
 * handler's frame walks use it (sampler_signal.c, sampler_nodes.c).
 */
static pg_attribute_always_inline bool
jp_frame_read(uintptr_t fp, uintptr_t lo, uintptr_t hi,
			  uintptr_t *next, uintptr_t *ret)
{
	if (fp < lo || fp > hi || hi - fp < 2 * sizeof(uintptr_t) ||
		(fp & (sizeof(uintptr_t) - 1)) != 0)
		return false;
	*next = ((const uintptr_t *) fp)[0];
	*ret = ((const uintptr_t *) fp)[1];
	return true;
}

#endif							/* JITPROF_SAMPLER_SHARED_H */
