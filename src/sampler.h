/*-------------------------------------------------------------------------
 *
 * sampler.h
 *	  What the three parts of jitprof's hotspot sampler share.
 *
 *	  sampler_signal.c   the SIGPROF handler, its CPU-time timer, the range
 *	                     table of live JIT code and the stack bounds: the
 *	                     only code that runs in signal context.
 *	  sampler_profile.c  executions, per-function slots, the pending table
 *	                     and the flush of an execution's counts to the store.
 *	  sampler_steps.c    per-step counters of a function with a step table
 *	                     (jitprof.steps): made at link time, read at flush.
 *	  sampler_hooks.c    executor and ProcessUtility hooks: nesting as
 *	                     pg_stat_statements counts it, which execution a
 *	                     statement belongs to, cursor query IDs, and the
 *	                     composable mid-query flush trampoline.
 *
 * Signal-safety contract.  The handler runs on the backend's only thread
 * (the timer signals that thread), so it never runs concurrently with the
 * main code, only in between two of its instructions.  Hence:
 *	- Everything the handler reads or writes is declared volatile here, and
 *	  the main code orders its stores with pg_compiler_barrier().
 *	- The handler only increments counters, stores pointers into plan nodes'
 *	  ExecProcNode while a flush is due (see sampler_hooks.c), and reads the
 *	  range table and the stack.  It allocates nothing, takes no lock,
 *	  touches no shared memory and calls no function.
 *	- Counters the main code reads and zeroes (an execution's samples, the
 *	  slots' counts, the health counters) are protected by jp_flushing, not
 *	  by blocking the signal: while it is set, the handler adds a sample to
 *	  jp_side_samples and to the execution's deferred_samples only, and the
 *	  main code reads those two only while jp_flushing is clear.
 *	- The range table is replaced, never modified in place (one pointer
 *	  store); the old one is freed after the store.
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_SAMPLER_H
#define JITPROF_SAMPLER_H

#include <signal.h>

#include "executor/execdesc.h"
#include "nodes/execnodes.h"

#include "jitprof.h"
#include "store.h"

/* how many JIT functions one backend can attribute samples to at once */
#define JP_MAX_SLOTS		4096
/* how many executions (statements, open cursors) can be tracked at once */
#define JP_MAX_EXECS		32
/* how many plan nodes of a running statement can serve as flush points */
#define JP_MAX_WATCHED		256
/* plan nodes with a plan_node_id below this get a plan-node profile */
#define JP_MAX_PLAN_NODES	256
/* how deep the running-node stack goes (deeper calls are not pushed) */
#define JP_NODE_DEPTH		128
/* marks a node-stack entry pushed for a parent that works outside
 * ExecProcNode (a Hash node's build); the low 16 bits are the node's id */
#define JP_NODE_IMPLICIT	0x10000
#define JP_NODE_ID_MASK		0xFFFF

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
	/* written by the signal handler while jp_flushing is clear */
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
 * sample taken while it is jp_current belongs to it.
 */
typedef struct JpExec
{
	/* written by the signal handler */
	volatile uint32 query_samples;	/* while jp_flushing is clear */
	volatile uint32 deferred_samples;	/* while jp_flushing is set */
	volatile uint32 since_flush;
	/* per plan_node_id, while jp_flushing is clear (sampler_nodes.c) */
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

/* sampler_signal.c: state shared with the handler */
extern JpSlot jp_slots[JP_MAX_SLOTS];
extern JpExec *volatile jp_current;
extern volatile sig_atomic_t jp_flushing;
extern volatile uint32 jp_side_samples;
extern JpHandlerCounts jp_counts;
extern volatile uint32 jp_flush_after;	/* samples; 0: no mid-query flush */
extern volatile sig_atomic_t jp_flush_armed;
extern volatile sig_atomic_t jp_disarming;
extern JpWatchEntry *jp_arm[JP_MAX_WATCHED];
extern volatile int jp_narm;

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

/* sampler_profile.c */
extern double jitprof_flush_interval;
extern int	jp_nopen;
extern JpExec jp_execs[JP_MAX_EXECS];
extern uint32 jp_forward_fallbacks;
extern JpExec *jp_exec_open(const QueryDesc *owner, int64 queryid,
							bool count_at_end);
extern void jp_exec_fail(JpExec *exec);
extern void jp_exec_finish(JpExec *exec, bool count_execution);
extern void jp_exec_flush(JpExec *exec, bool count_execution, bool final);
extern void jp_flush_due(void);
extern void jp_recycle_dead_slots(void);
extern void jp_profile_register_sink(void);

static inline JpExec *
jp_exec_of(const QueryDesc *queryDesc)
{
	if (jp_nopen == 0)
		return NULL;
	for (int i = 0; i < JP_MAX_EXECS; i++)
		if (jp_execs[i].state == JP_EXEC_OPEN &&
			jp_execs[i].owner == queryDesc)
			return &jp_execs[i];
	return NULL;
}

/* sampler_nodes.c: the running-node stack the handler reads */
extern bool jitprof_plan_nodes;
extern volatile uint32 jp_node_exec;	/* JpExec.id whose plan is wrapped */
extern volatile int32 jp_node_stack[JP_NODE_DEPTH];
extern volatile int jp_node_depth;
extern volatile uint32 jp_compile_exec; /* JpExec.id compiling for ... */
extern volatile int32 jp_compile_node;	/* ... this plan node, or -1 */
extern volatile sig_atomic_t jp_flush_pending;
extern bool jp_nodes_install(QueryDesc *queryDesc, JpExec *exec);
extern void jp_nodes_uninstall(bool capture);
extern void jp_nodes_reset_after_error(void);
extern void jp_nodes_forget_exec(JpExec *exec);
extern void jp_nodes_capture_shape(JpExec *exec);
extern void jp_nodes_define_gucs(void);

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

/* sampler_hooks.c */
extern TupleTableSlot *jp_flush_trampoline(PlanState *node);
extern TupleTableSlot *jp_run_node_itself(PlanState *node);
extern void jp_watch_forget_all(void);

#endif							/* JITPROF_SAMPLER_H */
