/*-------------------------------------------------------------------------
 *
 * sampler_nodes.c
 *	  The plan-node profile: which plan node of a JIT execution is running
 *	  when the sampler's signal arrives, and the shape of its plan.
 *
 * A node its parent calls from a call site that tells it apart (its
 * parent's outer or inner child, or the plan's root) learns that site on
 * the wrapper for its first calls, then runs unwrapped (sampler_sites.c).
 * Any other wrapped node's call makes one store: its return address and
 * plan_node_id, in the frame slot of its call's frame.  At a sample the
 * handler asks jp_nodes_running, which reads the interrupted frame
 * pointers up to the hook's frame and follows them down: by call site from
 * the executor's call of the root, and by a slot that holds its frame's
 * own return address.  The wrapper forwards to the pointer it
 * replaced, whatever wrapper sits above or below it; a node that runs its
 * own dispatch gets an entry made for its id instead, which stores and
 * jumps to the node.  A statement that does not JIT is never wrapped, nor
 * anything with jitprof.plan_nodes off.  Hash, SubPlan and Bitmap nodes,
 * composition and flushes: doc/plan_nodes.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler_nodes.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <link.h>

#include "access/parallel.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "sampler/sampler_shared.h"

bool		jitprof_plan_nodes = false;

/*
 * The frame slots: a word for every 16 bytes of stack, found from a call's
 * CFA (its stack pointer before the call), each holding the return address
 * and plan_node_id that the last node call with that CFA stored.  2 MB of
 * address space for 2 MB of stack (PostgreSQL's default max_stack_depth);
 * a deeper stack reuses slots, which costs a miss, never a wrong node,
 * since a slot is taken only when it holds the frame's own return address.
 * Only the pages of the depths where nodes run are ever touched.  A slot
 * lies 2 kB away from its CFA modulo 4 kB: a load of the node's own stack
 * soon after the store then never matches the store's low 12 address bits,
 * which stalls it (4K aliasing; doc/plan_nodes.md, "Cost").
 */
#define FRAME_SLOT_SPAN		0x200000
#define FRAME_SLOT(cfa) \
	(*(volatile uintptr_t *) ((char *) frame_slots + \
							  (((cfa) + 0x800) & (FRAME_SLOT_SPAN - 16))))
#define FRAME_RECORD(id) \
	(FRAME_SLOT((uintptr_t) __builtin_dwarf_cfa()) = \
	 ((uintptr_t) __builtin_return_address(0) << 8) | (uintptr_t) (id))
/* frames the handler follows from the interrupted one, at most */
#define MAX_NODE_FRAMES	128
/*
 * When the interrupted code keeps no frame pointer: how far above the stack
 * pointer the handler looks for a frame, and how many words that could be
 * one (stack addresses) it follows at most, so that a sample costs at most
 * 2,048 word reads and 64 walks
 */
#define STACK_SCAN_BYTES	16384
#define STACK_SCAN_WALKS	64

StaticAssertDecl(JP_MAX_PLAN_NODES <= 256,
				 "a frame slot keeps a plan_node_id in 8 bits");

static uintptr_t frame_slots[FRAME_SLOT_SPAN / sizeof(uintptr_t)] pg_attribute_aligned(4096);

/*
 * The wrapped run's frames lie below node_top (the ExecutorRun hook's
 * frame); while a query it does not wrap runs inside it (a function's SQL),
 * that query's frames lie below nested_floor and are passed over, so that
 * its samples go to the node that called it.  0 when unset.
 */
static volatile uintptr_t node_top = 0;
static volatile uintptr_t nested_floor = 0;

/* a Hash Join's Hash child, plus 1, by the join's plan_node_id; else 0 */
static volatile uint16 hash_child[JP_MAX_PLAN_NODES];

/*
 * The wrapped plan's shape, for the handler to follow call sites down it:
 * each node's ExecProcNodeReal, its outer and inner children's
 * plan_node_ids (-1 for none), and the root's.
 */
static ExecProcNodeMtd node_fn[JP_MAX_PLAN_NODES];
static int16 node_child[JP_MAX_PLAN_NODES][2];
static int	root_id = -1;

/* a node's calls the wrapper learns sites from before it runs unwrapped */
#define LEARN_CALLS		16

/* the frames of one walk, innermost first (the handler is not reentered) */
static uintptr_t walk_fp[MAX_NODE_FRAMES];
static uintptr_t walk_ret[MAX_NODE_FRAMES];

/* the executable segment holding MultiExecProcNode, looked for once */
static uintptr_t text_lo = 0;
static uintptr_t text_hi = 0;
static bool text_looked_for = false;


/* the wrapper's per-node state, indexed by plan_node_id */
typedef struct JpNodeEntry
{
	PlanState  *node;			/* the wrapped node; NULL if none */
	ExecProcNodeMtd saved;		/* what the wrapper forwards to */
	bool		in_call;		/* running node through the wrapper */
	PlanState  *fwd_node;		/* a node left wrapped after its run */
	int			rewraps;
	ExecProcNodeMtd parent_fn;	/* its parent's ExecProcNodeReal */
	int			position;		/* JP_SITE_*, or -1: no site can tell it */
	bool		learning;		/* on the wrapper, learning its sites */
	int			learn_calls;
	bool		by_site;		/* unwrapped: its sites tell its frames */
} JpNodeEntry;

static JpNodeEntry node_table[JP_MAX_PLAN_NODES];
static int	installed[JP_MAX_PLAN_NODES];
static int	ninstalled = 0;
static QueryDesc *installed_query = NULL;
static JpExec *installed_exec = NULL;
static JpNodeWrapCounters wrap_counters;

static TupleTableSlot *jp_node_wrapper(PlanState *node);
static const ExecProcNodeMtd node_entry[JP_MAX_PLAN_NODES];

/*
 * Whether a node whose ExecProcNode we replaced with fn can run through its
 * entry: fn is the node's own dispatch (what ExecProcNodeFirst installs
 * unless the node is instrumented).
 */
static inline bool
entry_fits(PlanState *node, ExecProcNodeMtd fn)
{
	return fn == node->ExecProcNodeReal;
}

/* whether node's ExecProcNode is one of ours: the wrapper or its entry */
static inline bool
points_here(PlanState *node, int id)
{
	return node->ExecProcNode == jp_node_wrapper ||
		node->ExecProcNode == node_entry[id];
}

/*
 * The flush the handler asked for (jp_nodes_arm_flush), then each node it
 * sent to the wrapper back to its entry.  flush_armed stays set until
 * then, so the handler does not arm again meanwhile.
 */
static pg_noinline void
flush_now(void)
{
	jp_sig.flush_pending = false;
	jp_flush_due();
	for (int i = 0; i < ninstalled; i++)
	{
		int			id = installed[i];
		JpNodeEntry *e = &node_table[id];

		if (e->node->ExecProcNode != jp_node_wrapper)
			continue;
		if (e->by_site)
			e->node->ExecProcNode = e->saved;
		else if (!e->learning && entry_fits(e->node, e->saved))
			e->node->ExecProcNode = node_entry[id];
	}
	pg_compiler_barrier();
	jp_sig.flush_armed = false;
}

/* a call that is not the fast path: forwarding, or a stale node */
static pg_noinline TupleTableSlot *
wrapper_slow(PlanState *node, JpNodeEntry *e)
{
	TupleTableSlot *result;

	if (e == NULL || e->fwd_node != node || e->saved == NULL || e->in_call)
		return jp_run_node_itself(node);
	e->in_call = true;
	result = e->saved(node);
	e->in_call = false;
	return result;
}

/*
 * Called by the signal handler when a flush of the wrapped plan falls due:
 * every node that runs through its entry goes to the wrapper, whose next
 * call flushes (flush_now), so that the entries need not test for it.
 * Pointer stores only.  The handler calls this only while node_exec is
 * set, which jp_nodes_install does after the table is filled and
 * jp_nodes_uninstall undoes before it empties it.
 */
void
jp_nodes_arm_flush(void)
{
	for (int i = 0; i < ninstalled; i++)
	{
		int			id = installed[i];
		JpNodeEntry *e = &node_table[id];
		PlanState  *ps = e->node;

		if (ps != NULL && (ps->ExecProcNode == node_entry[id] ||
						   (e->by_site && ps->ExecProcNode == e->saved)))
			ps->ExecProcNode = jp_node_wrapper;
	}
}

/*
 * What a node whose ExecProcNode went from ours to fn gets: its entry when
 * it fits (entry_fits), else the wrapper.
 */
static inline ExecProcNodeMtd
ours_for(PlanState *node, int id, ExecProcNodeMtd fn)
{
	if (!node_table[id].learning && entry_fits(node, fn))
	{
		wrap_counters.entries++;
		return node_entry[id];
	}
	wrap_counters.wrappers++;
	return jp_node_wrapper;
}

const JpNodeWrapCounters *
jp_sampler_node_counters(void)
{
	jp_call_site_counts(&wrap_counters.sites, &wrap_counters.sites_ambiguous,
						&wrap_counters.sites_dropped);
	return &wrap_counters;
}

static pg_noinline void
rewrap(PlanState *node)
{
	int			id = node->plan->plan_node_id;
	JpNodeEntry *e = &node_table[id];

	if (e->rewraps >= 2 || node->ExecProcNode == NULL)
		return;
	e->rewraps++;
	e->saved = node->ExecProcNode;
	node->ExecProcNode = ours_for(node, id, e->saved);
}

/*
 * A call of a node that is learning its call sites, or that runs unwrapped
 * and came to the wrapper for a flush: the call returns to ret.  A node
 * whose LEARN_CALLS calls all came from known sites runs unwrapped; one
 * called from a site that cannot tell it goes to its entry.
 */
static pg_noinline void
learn_call(PlanState *node, JpNodeEntry *e, int id, uintptr_t ret)
{
	bool		known = jp_call_site_learn(ret, e->parent_fn, e->position);

	if (e->by_site)
	{
		if (!known)
		{
			e->by_site = false;
			pg_compiler_barrier();
			node->ExecProcNode = ours_for(node, id, e->saved);
		}
		return;
	}
	if (known && ++e->learn_calls < LEARN_CALLS)
		return;
	e->learning = false;
	if (known && entry_fits(node, e->saved))
	{
		e->by_site = true;
		wrap_counters.by_site++;
		pg_compiler_barrier();
		node->ExecProcNode = e->saved;
	}
	else
		node->ExecProcNode = ours_for(node, id, e->saved);
}

/*
 * Stands in for a wrapped node's ExecProcNode where no entry fits: records
 * the call's frame as the entry does, then forwards to what it replaced,
 * and puts the node back on its entry when a flush has run.
 */
static TupleTableSlot *
jp_node_wrapper(PlanState *node)
{
	int			id = node->plan->plan_node_id;
	JpNodeEntry *e;
	TupleTableSlot *result;

	if (unlikely((unsigned) id >= JP_MAX_PLAN_NODES))
		return wrapper_slow(node, NULL);
	e = &node_table[id];

	/*
	 * Not this plan's node, or the node already running: no node calls
	 * itself, so that is a chain of wrappers leading back here.
	 */
	if (unlikely(e->node != node || e->in_call))
		return wrapper_slow(node, e);
	FRAME_RECORD(id);
	if (unlikely(jp_sig.flush_pending))
		flush_now();
	if (unlikely(e->learning || e->by_site))
		learn_call(node, e, id, (uintptr_t) __builtin_return_address(0));
	e->in_call = true;
	result = e->saved(node);
	e->in_call = false;
	if (unlikely(!points_here(node, id)) &&
		!(e->by_site && node->ExecProcNode == e->saved))
		rewrap(node);
	return result;
}

/*
 * A node's entry, for a node that runs its own dispatch (ours_for): the
 * one store, then a jump to the node, which returns to the entry's caller.
 * Nine instructions with gcc 12 at -O2 and no frame of its own
 * (doc/plan_nodes.md, "Cost").  When a flush falls due the handler points
 * the nodes at the wrapper, which flushes (jp_nodes_arm_flush).  A node of
 * another plan that reaches an entry (a chain of someone else's wrappers
 * left after a run) stores an id for a frame that the handler never
 * follows: it is outside the wrapped run, or inside a query it runs, which
 * the handler passes over.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define ENTRY_ATTRIBUTES __attribute__((optimize("omit-frame-pointer")))
#else
#define ENTRY_ATTRIBUTES
#endif

static pg_attribute_always_inline TupleTableSlot *
entry_body(PlanState *node, int id)
{
	FRAME_RECORD(id);
	return node->ExecProcNodeReal(node);
}

#define NODE_ENTRY(h, l) \
static ENTRY_ATTRIBUTES TupleTableSlot * \
node_entry_##h##l(PlanState *node) \
{ \
	return entry_body(node, 0x##h##l); \
}
#define NODE_ENTRY_ROW(h) \
	NODE_ENTRY(h, 0) NODE_ENTRY(h, 1) NODE_ENTRY(h, 2) NODE_ENTRY(h, 3) \
	NODE_ENTRY(h, 4) NODE_ENTRY(h, 5) NODE_ENTRY(h, 6) NODE_ENTRY(h, 7) \
	NODE_ENTRY(h, 8) NODE_ENTRY(h, 9) NODE_ENTRY(h, a) NODE_ENTRY(h, b) \
	NODE_ENTRY(h, c) NODE_ENTRY(h, d) NODE_ENTRY(h, e) NODE_ENTRY(h, f)

NODE_ENTRY_ROW(0) NODE_ENTRY_ROW(1) NODE_ENTRY_ROW(2) NODE_ENTRY_ROW(3)
NODE_ENTRY_ROW(4) NODE_ENTRY_ROW(5) NODE_ENTRY_ROW(6) NODE_ENTRY_ROW(7)
NODE_ENTRY_ROW(8) NODE_ENTRY_ROW(9) NODE_ENTRY_ROW(a) NODE_ENTRY_ROW(b)
NODE_ENTRY_ROW(c) NODE_ENTRY_ROW(d) NODE_ENTRY_ROW(e) NODE_ENTRY_ROW(f)

#define NODE_ENTRY_REF(h, l) node_entry_##h##l,
#define NODE_ENTRY_REF_ROW(h) \
	NODE_ENTRY_REF(h, 0) NODE_ENTRY_REF(h, 1) NODE_ENTRY_REF(h, 2) \
	NODE_ENTRY_REF(h, 3) NODE_ENTRY_REF(h, 4) NODE_ENTRY_REF(h, 5) \
	NODE_ENTRY_REF(h, 6) NODE_ENTRY_REF(h, 7) NODE_ENTRY_REF(h, 8) \
	NODE_ENTRY_REF(h, 9) NODE_ENTRY_REF(h, a) NODE_ENTRY_REF(h, b) \
	NODE_ENTRY_REF(h, c) NODE_ENTRY_REF(h, d) NODE_ENTRY_REF(h, e) \
	NODE_ENTRY_REF(h, f)

StaticAssertDecl(JP_MAX_PLAN_NODES == 256,
				 "node_entry has one entry per plan_node_id below 0x100");

static const ExecProcNodeMtd node_entry[JP_MAX_PLAN_NODES] = {
	NODE_ENTRY_REF_ROW(0) NODE_ENTRY_REF_ROW(1) NODE_ENTRY_REF_ROW(2)
	NODE_ENTRY_REF_ROW(3) NODE_ENTRY_REF_ROW(4) NODE_ENTRY_REF_ROW(5)
	NODE_ENTRY_REF_ROW(6) NODE_ENTRY_REF_ROW(7) NODE_ENTRY_REF_ROW(8)
	NODE_ENTRY_REF_ROW(9) NODE_ENTRY_REF_ROW(a) NODE_ENTRY_REF_ROW(b)
	NODE_ENTRY_REF_ROW(c) NODE_ENTRY_REF_ROW(d) NODE_ENTRY_REF_ROW(e)
	NODE_ENTRY_REF_ROW(f)
};

/* a child's plan_node_id, for node_child; -1 for none or too high */
static int16
child_id(PlanState *ps)
{
	if (ps == NULL || ps->plan->plan_node_id < 0 ||
		ps->plan->plan_node_id >= JP_MAX_PLAN_NODES)
		return -1;
	return (int16) ps->plan->plan_node_id;
}

typedef struct InstallContext
{
	PlanState  *parent;
} InstallContext;

static bool
install_walker(PlanState *ps, void *context)
{
	InstallContext *cxt = (InstallContext *) context;
	PlanState  *parent = cxt->parent;
	int			id;

	if (ps == NULL)
		return false;
	id = ps->plan->plan_node_id;
	if (id >= 0 && id < JP_MAX_PLAN_NODES && node_table[id].node == NULL &&
		ps->ExecProcNode != NULL)
	{
		JpNodeEntry *e = &node_table[id];
		int			pid = parent != NULL ? parent->plan->plan_node_id : -1;
		bool		left_wrapped = points_here(ps, id);
		ExecProcNodeMtd ours;

		/* left wrapped, but not as this node's forwarder: leave it be */
		if (left_wrapped && e->fwd_node != ps)
			goto children;
		if (IsA(ps, HashState) && parent != NULL &&
			IsA(parent, HashJoinState) && pid >= 0 && pid < JP_MAX_PLAN_NODES)
			hash_child[pid] = (uint16) (id + 1);
		node_fn[id] = ps->ExecProcNodeReal;
		node_child[id][JP_SITE_OUTER] = child_id(outerPlanState(ps));
		node_child[id][JP_SITE_INNER] = child_id(innerPlanState(ps));
		e->parent_fn = NULL;
		e->position = -1;
		if (parent == NULL)
		{
			e->position = JP_SITE_ROOT;
			root_id = id;
		}
		else if (parent->ExecProcNodeReal != NULL && pid >= 0 &&
				 pid < JP_MAX_PLAN_NODES)
		{
			e->parent_fn = parent->ExecProcNodeReal;
			if (ps == outerPlanState(parent))
				e->position = JP_SITE_OUTER;
			else if (ps == innerPlanState(parent))
				e->position = JP_SITE_INNER;
		}
		e->learning = e->position >= 0 && !left_wrapped;
		e->learn_calls = 0;
		e->by_site = false;
		if (left_wrapped)
		{
			/* left wrapped by an earlier run: forward as then */
			ours = jp_node_wrapper;
			wrap_counters.wrappers++;
		}
		else
		{
			e->saved = ps->ExecProcNode;
			ours = ours_for(ps, id, e->saved);
		}
		e->fwd_node = NULL;
		e->rewraps = 0;
		e->in_call = false;
		e->node = ps;
		pg_compiler_barrier();
		ps->ExecProcNode = ours;
		installed[ninstalled++] = id;
	}
children:
	cxt->parent = ps;
	planstate_tree_walker(ps, install_walker, context);
	cxt->parent = parent;
	return false;
}

#if defined(__x86_64__)
static int
find_text_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t	target = (uintptr_t) data;

	for (int i = 0; i < info->dlpi_phnum; i++)
	{
		const		ElfW(Phdr) * ph = &info->dlpi_phdr[i];
		uintptr_t	lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) != 0 &&
			target >= lo && target < lo + ph->p_memsz)
		{
			text_lo = lo;
			text_hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}
#endif

/*
 * Is ret the return address of a call to MultiExecProcNode?  A Hash Join
 * builds its Hash there, in MultiExecHash, which MultiExecProcNode reaches
 * by a jump: no node call records it, so the walk recognises the frame that
 * returns from that call, below the Hash Join's (or below the wrapper's
 * frames, on the join's first call).  Reads the five bytes of the call only
 * inside the executable segment, which is mapped.  x86-64 only.
 */
static pg_attribute_always_inline bool
returns_from_multi_exec(uintptr_t ret)
{
#if defined(__x86_64__)
	int32		rel;

	if (ret < text_lo + 5 || ret > text_hi)
		return false;
	if (*(const volatile uint8 *) (ret - 5) != 0xE8)	/* call rel32 */
		return false;
	memcpy(&rel, (const void *) (ret - 4), sizeof(rel));
	return ret + (intptr_t) rel == (uintptr_t) MultiExecProcNode;
#else
	return false;
#endif
}

/* what walk_frames found besides a node's plan_node_id */
#define WALK_OUTSIDE	(-1)	/* a whole chain up to node_top, no node */
#define WALK_BROKEN		(-2)	/* no chain of frames from fp to node_top */

/*
 * The running node of the chain of frames from fp up to node_top, or
 * WALK_OUTSIDE, or WALK_BROKEN when fp leads to no such chain.  The frames
 * are read innermost first, then followed down from the top: a frame whose
 * return address is a call site known for the node found so far (the
 * executor's call of the root, at first) is that node's outer or inner
 * child's; else a frame whose slot holds its own return address is the
 * node that stored it, entered through its entry or the wrapper, and still
 * running, since a later call at the same depth could only have come
 * after it returned.  The node found last is the running one.  Frames
 * below nested_floor belong to a query run inside the wrapped one, and are
 * passed over.  Reads only inside [sp, top), which is mapped main stack
 * below the hook's frame (top is node_top), whatever fp holds: code
 * without frame pointers may leave any value there.
 */
static pg_attribute_always_inline int
walk_frames(uintptr_t sp, uintptr_t fp, uintptr_t top, uintptr_t stack_end)
{
	uintptr_t	floor = nested_floor;
	int			n = 0;
	int			found = WALK_OUTSIDE;

	for (;;)
	{
		uintptr_t	next;
		uintptr_t	ret;

		if (!jp_frame_read(fp, sp, top, &next, &ret))
		{
			/* a frame at or above the hook's, reached by a link: the end */
			if (n > 0 && fp > top - 2 * sizeof(uintptr_t) && fp < stack_end)
				break;
			return WALK_BROKEN;
		}
		if (n == MAX_NODE_FRAMES || next <= fp)
			return WALK_BROKEN;
		walk_fp[n] = fp;
		walk_ret[n] = ret;
		n++;
		fp = next;
	}
	while (--n >= 0)
	{
		uintptr_t	ret = walk_ret[n];
		uintptr_t	v;
		int			position;

		if (walk_fp[n] < floor)
			break;
		position = jp_call_site_position(ret, found >= 0 ? node_fn[found] :
										 NULL);
		if (position == JP_SITE_ROOT && found == WALK_OUTSIDE && root_id >= 0)
		{
			found = root_id;
			continue;
		}
		if ((position == JP_SITE_OUTER || position == JP_SITE_INNER) &&
			found >= 0 && node_child[found][position] >= 0)
		{
			found = node_child[found][position];
			continue;
		}
		v = FRAME_SLOT(walk_fp[n] + 2 * sizeof(uintptr_t));
		if ((v >> 8) == ret)
			found = (int) (v & 0xFF);
		else if (found >= 0 && hash_child[found] != 0 &&
				 returns_from_multi_exec(ret))
			found = hash_child[found] - 1;
	}
	return found;
}

/*
 * The wrapped plan's running node at a sample, for the signal handler, or
 * -1 for none; sp and fp are the interrupted registers, sp on the main
 * stack, which ends at stack_end.  Code that keeps no frame pointer and
 * uses the register for something else (ICU's collation, OpenSSL's
 * digests, parts of glibc) breaks the chain at the first frame.  Such code
 * saves the frame pointer of the function that called it on the stack, so
 * the words above sp are tried in turn as frames; the first from which a
 * whole chain leads up to node_top is taken.  A dead frame's leftover word
 * rarely leads to one: the frames it linked to have been overwritten.
 */
int
jp_nodes_running(uintptr_t sp, uintptr_t fp, uintptr_t stack_end)
{
	uintptr_t	top;
	uintptr_t	end;
	int			walks = 0;
	int			found;

	top = node_top;
	if (top < sp + 2 * sizeof(uintptr_t) || top > stack_end)
		return -1;
	found = walk_frames(sp, fp, top, stack_end);
	if (found != WALK_BROKEN)
		return found;
	end = Min(sp + STACK_SCAN_BYTES, top);
	for (uintptr_t at = sp; at < end; at += sizeof(uintptr_t))
	{
		uintptr_t	word = *(const uintptr_t *) at;

		if (word <= at || word >= top)
			continue;
		if (++walks > STACK_SCAN_WALKS)
			break;
		found = walk_frames(at, word, top, stack_end);
		if (found != WALK_BROKEN)
		{
			wrap_counters.samples_by_scan++;
			return found;
		}
	}
	wrap_counters.samples_unplaced++;
	return -1;
}

/*
 * A query that is not the wrapped one starts running inside it, its frames
 * below "at": the handler passes over them (nested_floor).  Returns what
 * jp_nodes_nested_end must be given back.
 */
uintptr_t
jp_nodes_nested_begin(uintptr_t at)
{
	uintptr_t	old = nested_floor;

	if (jp_sig.node_exec != 0 && old == 0)
		nested_floor = at;
	return old;
}

void
jp_nodes_nested_end(uintptr_t old)
{
	nested_floor = old;
}

/*
 * Wrap the plan of queryDesc, run by exec, for the plan-node profile; its
 * nodes run in frames below "top".  Returns whether it did (then
 * jp_nodes_uninstall must follow).
 */
bool
jp_nodes_install(QueryDesc *queryDesc, JpExec *exec, uintptr_t top)
{
	InstallContext cxt;

	if (!jitprof_plan_nodes || jp_sig.node_exec != 0 || exec == NULL ||
		exec->owner != queryDesc || queryDesc->planstate == NULL)
		return false;
#if defined(__x86_64__)
	if (!text_looked_for)
	{
		text_looked_for = true;
		dl_iterate_phdr(find_text_segment, (void *) MultiExecProcNode);
	}
#endif
	cxt.parent = NULL;
	ninstalled = 0;
	/* an earlier plan's shape must not lead this plan's walks */
	root_id = -1;
	memset(node_fn, 0, sizeof(node_fn));
	memset(node_child, 0xFF, sizeof(node_child));
	memset((void *) hash_child, 0, sizeof(hash_child));
	install_walker(queryDesc->planstate, &cxt);
	installed_query = queryDesc;
	installed_exec = exec;
	exec->nodes_tracked = true;
	node_top = top;
	nested_floor = 0;
	jp_sig.flush_pending = false;
	pg_compiler_barrier();
	jp_sig.node_exec = exec->id;
	return true;
}

/*
 * Put back the pointers that are still the wrapper.  "capture" records the
 * plan's shape for the execution first, if it was sampled (not in error
 * recovery: that reads the catalogs).
 */
void
jp_nodes_uninstall(bool capture)
{
	JpExec	   *exec = installed_exec;

	if (capture && exec != NULL && exec->node_sampled && exec->shape == NULL)
		jp_nodes_capture_shape(exec);

	jp_sig.node_exec = 0;
	pg_compiler_barrier();
	node_top = 0;
	nested_floor = 0;
	memset((void *) hash_child, 0, sizeof(hash_child));
	for (int i = 0; i < ninstalled; i++)
	{
		JpNodeEntry *e = &node_table[installed[i]];
		PlanState  *ps = e->node;

		e->node = NULL;
		e->in_call = false;
		e->learning = false;
		if (points_here(ps, installed[i]))
		{
			ps->ExecProcNode = e->saved;
			e->fwd_node = NULL;
		}
		else if (e->by_site && ps->ExecProcNode == e->saved)
			e->fwd_node = NULL; /* unwrapped already */
		else
			e->fwd_node = ps;	/* someone else's chain leads here */
		e->by_site = false;
	}
	ninstalled = 0;
	installed_query = NULL;
	installed_exec = NULL;
	if (jp_sig.flush_pending)
	{
		/* due, but no node call came: the next run flushes */
		jp_sig.flush_pending = false;
		jp_sig.flush_armed = false;
	}
}

void
jp_nodes_reset_after_error(void)
{
	jp_sig.compile_exec = 0;
	jp_sig.compile_node = -1;
}

/* An execution ends: forget its shape. */
void
jp_nodes_forget_exec(JpExec *exec)
{
	if (exec->shape != NULL)
		pfree(exec->shape);
	exec->shape = NULL;
	exec->nshape = 0;
	exec->shape_sent = false;
	if (jp_sig.compile_exec == exec->id)
		jp_nodes_reset_after_error();
}

/* ---- plan shape and EXPLAIN-like labels ---- */

static const char *
rel_name(EState *estate, Index rti)
{
	RangeTblEntry *rte;
	char	   *name;

	if (rti == 0 || estate->es_range_table == NIL ||
		rti > list_length(estate->es_range_table))
		return NULL;
	rte = rt_fetch(rti, estate->es_range_table);
	if (rte->rtekind == RTE_RELATION)
	{
		name = get_rel_name(rte->relid);
		if (name != NULL)
			return name;
	}
	if (rte->eref != NULL)
		return rte->eref->aliasname;
	return NULL;
}

static const char *
join_suffix(JoinType jt)
{
	switch (jt)
	{
		case JOIN_INNER:
			return " Join";
		case JOIN_LEFT:
			return " Left Join";
		case JOIN_FULL:
			return " Full Join";
		case JOIN_RIGHT:
			return " Right Join";
		case JOIN_SEMI:
			return " Semi Join";
		case JOIN_ANTI:
			return " Anti Join";
		default:
			return " ??? Join";
	}
}

/* The first line EXPLAIN prints for a node, in short. */
static void
node_label(PlanState *ps, char *buf, size_t len)
{
	Plan	   *plan = ps->plan;
	EState	   *estate = ps->state;
	const char *par = plan->parallel_aware ? "Parallel " : "";
	const char *rel = NULL;
	const char *name = NULL;

	switch (nodeTag(plan))
	{
		case T_SeqScan:
			rel = rel_name(estate, ((Scan *) plan)->scanrelid);
			snprintf(buf, len, "%sSeq Scan on %s", par, rel ? rel : "?");
			return;
		case T_IndexScan:
			name = get_rel_name(((IndexScan *) plan)->indexid);
			rel = rel_name(estate, ((Scan *) plan)->scanrelid);
			snprintf(buf, len, "%sIndex Scan using %s on %s", par,
					 name ? name : "?", rel ? rel : "?");
			return;
		case T_IndexOnlyScan:
			name = get_rel_name(((IndexOnlyScan *) plan)->indexid);
			rel = rel_name(estate, ((Scan *) plan)->scanrelid);
			snprintf(buf, len, "%sIndex Only Scan using %s on %s", par,
					 name ? name : "?", rel ? rel : "?");
			return;
		case T_BitmapIndexScan:
			name = get_rel_name(((BitmapIndexScan *) plan)->indexid);
			snprintf(buf, len, "Bitmap Index Scan on %s", name ? name : "?");
			return;
		case T_BitmapHeapScan:
			rel = rel_name(estate, ((Scan *) plan)->scanrelid);
			snprintf(buf, len, "%sBitmap Heap Scan on %s", par, rel ? rel : "?");
			return;
		case T_SubqueryScan:
		case T_FunctionScan:
		case T_CteScan:
		case T_ValuesScan:
		case T_TidScan:
		case T_SampleScan:
			rel = rel_name(estate, ((Scan *) plan)->scanrelid);
			name = IsA(plan, SubqueryScan) ? "Subquery Scan" :
				IsA(plan, FunctionScan) ? "Function Scan" :
				IsA(plan, CteScan) ? "CTE Scan" :
				IsA(plan, ValuesScan) ? "Values Scan" :
				IsA(plan, TidScan) ? "Tid Scan" : "Sample Scan";
			snprintf(buf, len, "%s on %s", name, rel ? rel : "?");
			return;
		case T_NestLoop:
			snprintf(buf, len, "Nested Loop%s",
					 ((Join *) plan)->jointype == JOIN_INNER ? "" :
					 join_suffix(((Join *) plan)->jointype));
			return;
		case T_HashJoin:
		case T_MergeJoin:
			snprintf(buf, len, "%s%s%s", par,
					 IsA(plan, HashJoin) ? "Hash" : "Merge",
					 join_suffix(((Join *) plan)->jointype));
			return;
		case T_Agg:
			{
				Agg		   *agg = (Agg *) plan;
				const char *prefix = "";

				if (DO_AGGSPLIT_SKIPFINAL(agg->aggsplit))
					prefix = "Partial ";
				else if (DO_AGGSPLIT_COMBINE(agg->aggsplit))
					prefix = "Finalize ";
				name = agg->aggstrategy == AGG_HASHED ? "HashAggregate" :
					agg->aggstrategy == AGG_SORTED ? "GroupAggregate" :
					agg->aggstrategy == AGG_MIXED ? "MixedAggregate" :
					"Aggregate";
				snprintf(buf, len, "%s%s", prefix, name);
				return;
			}
		case T_ModifyTable:
			{
				ModifyTable *mt = (ModifyTable *) plan;

				rel = rel_name(estate, mt->nominalRelation);
				name = mt->operation == CMD_INSERT ? "Insert" :
					mt->operation == CMD_UPDATE ? "Update" :
					mt->operation == CMD_DELETE ? "Delete" : "Merge";
				snprintf(buf, len, "%s on %s", name, rel ? rel : "?");
				return;
			}
		case T_Sort:
			name = "Sort";
			break;
		case T_IncrementalSort:
			name = "Incremental Sort";
			break;
		case T_Material:
			name = "Materialize";
			break;
		case T_Memoize:
			name = "Memoize";
			break;
		case T_GatherMerge:
			name = "Gather Merge";
			break;
		case T_MergeAppend:
			name = "Merge Append";
			break;
		case T_RecursiveUnion:
			name = "Recursive Union";
			break;
		case T_WorkTableScan:
			name = "WorkTable Scan";
			break;
		case T_ProjectSet:
			name = "ProjectSet";
			break;
		case T_LockRows:
			name = "LockRows";
			break;
		case T_SetOp:
			name = "SetOp";
			break;
		case T_WindowAgg:
			name = "WindowAgg";
			break;
		case T_ForeignScan:
			name = "Foreign Scan";
			break;
		case T_CustomScan:
			name = "Custom Scan";
			break;
		default:
			/* Result, Append, Gather, Hash, Limit, Unique, Group... */
			name = jp_plan_node_name(plan);
			break;
	}
	strlcpy(buf, name, len);
}

typedef struct ShapeContext
{
	JpNodeShape *shape;
	int			n;
	int32		parent;
} ShapeContext;

static bool
shape_walker(PlanState *ps, void *context)
{
	ShapeContext *cxt = (ShapeContext *) context;
	int32		parent = cxt->parent;
	int			id;

	if (ps == NULL)
		return false;
	id = ps->plan->plan_node_id;
	if (id >= 0 && id < JP_MAX_PLAN_NODES && cxt->n < JP_MAX_PLAN_NODES)
	{
		JpNodeShape *s = &cxt->shape[cxt->n++];

		s->plan_node_id = id;
		s->parent = parent;
		strlcpy(s->node_type, jp_plan_node_name(ps->plan), JP_NODE_TYPE_LEN);
		node_label(ps, s->label, JP_LABEL_LEN);
	}
	cxt->parent = id;
	planstate_tree_walker(ps, shape_walker, context);
	cxt->parent = parent;
	return false;
}

/*
 * Record the shape of the plan exec is running, once per execution, in the
 * leader only (a worker sees part of the plan).  Runs while the plan is
 * alive: at the end of a run, or at a mid-query flush.
 */
void
jp_nodes_capture_shape(JpExec *exec)
{
	ShapeContext cxt;
	QueryDesc  *qd = installed_query;

	if (exec->shape != NULL || IsParallelWorker() || qd == NULL ||
		exec != installed_exec || qd->planstate == NULL)
		return;
	cxt.shape = MemoryContextAlloc(TopMemoryContext,
								   sizeof(JpNodeShape) * JP_MAX_PLAN_NODES);
	cxt.n = 0;
	cxt.parent = -1;
	shape_walker(qd->planstate, &cxt);
	exec->shape = cxt.shape;
	exec->nshape = cxt.n;
	exec->shape_sent = false;
}

/* ---- JIT compilation, charged to the node whose expression caused it ---- */

/*
 * provider.c calls these around llvmjit's compile_expr (IR generation at
 * ExecInitNode time) and around an expression's first evaluation (where
 * llvmjit optimises and emits the module).  begin returns what end must be
 * given back, so that the calls nest.
 */
int32
jp_sampler_compile_begin(PlanState *ps)
{
	int32		old = jp_sig.compile_node;
	JpExec	   *exec = jp_sig.current;
	int			id;

	if (!jitprof_plan_nodes || exec == NULL || ps == NULL || ps->plan == NULL ||
		exec->owner == NULL || exec->owner->estate != ps->state)
		return old;
	id = ps->plan->plan_node_id;
	if (id < 0 || id >= JP_MAX_PLAN_NODES)
		return old;
	jp_sig.compile_exec = exec->id;
	pg_compiler_barrier();
	jp_sig.compile_node = id;
	return old;
}

void
jp_sampler_compile_end(int32 old)
{
	jp_sig.compile_node = old;
	if (old < 0)
		jp_sig.compile_exec = 0;
}

void
jp_nodes_define_gucs(void)
{
	DefineCustomBoolVariable("jitprof.plan_nodes",
							 "Charges the sampler's samples of JIT queries to the plan node that was running.",
							 "Wraps each plan node of a JIT query; takes effect at the next JIT query.",
							 &jitprof_plan_nodes,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
}
