/*-------------------------------------------------------------------------
 *
 * sampler_nodes.c
 *	  The plan-node profile: which plan node of a JIT execution is running
 *	  when the sampler's signal arrives, and the shape of its plan.
 *
 * Contract (see sampler_shared.h): a wrapped node's call makes one store
 * of its plan_node_id into jp_sig.node_running on entry and one of what it
 * replaced on return; the handler reads that int, so it always sees a
 * whole id.  The wrapper forwards to the pointer it replaced, whatever
 * wrapper sits above or below it; a node that runs its own dispatch gets
 * a copy of the wrapper's fast path made for its id instead (its entry).
 * A statement that does not JIT is never wrapped, nor anything with
 * jitprof.plan_nodes off.  Hash, SubPlan and Bitmap nodes, composition and
 * flushes: doc/plan_nodes.md.
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


/* the wrapper's per-node state, indexed by plan_node_id */
typedef struct JpNodeEntry
{
	PlanState  *node;			/* the wrapped node; NULL if none */
	ExecProcNodeMtd saved;		/* what the wrapper forwards to */
	bool		in_call;		/* forwarding for fwd_node */
	int32		implicit;		/* a Hash parent's id | JP_NODE_IMPLICIT, or 0 */
	int32		parent;			/* parent's plan_node_id, -1 */
	PlanState  *fwd_node;		/* a node left wrapped after its run */
	int			rewraps;
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
 * unless the node is instrumented) and no Hash build runs between its calls.
 */
static inline bool
entry_fits(PlanState *node, int id, ExecProcNodeMtd fn)
{
	return fn == node->ExecProcNodeReal && node_table[id].implicit == 0;
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

		if (e->node->ExecProcNode == jp_node_wrapper &&
			entry_fits(e->node, id, e->saved))
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
		PlanState  *ps = node_table[id].node;

		if (ps != NULL && ps->ExecProcNode == node_entry[id])
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
	if (entry_fits(node, id, fn))
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
 * What runs once a node returns, when the node is a Hash's child or a Hash
 * was building (running is then its id | JP_NODE_IMPLICIT, see the wrapper).
 */
static pg_noinline int32
after_hash(int32 running, JpNodeEntry *e)
{
	if (e->implicit != 0)
		return e->implicit;
	/* the Hash's parent calls its other child: the build is over */
	if (e->parent >= 0 &&
		node_table[running & JP_NODE_ID_MASK].parent == e->parent)
		return e->parent;
	return running;
}

/* What runs once a Hash's child has returned its last tuple: the Hash Join. */
static pg_noinline int32
hash_built(JpNodeEntry *e, int32 running)
{
	int32		hash = e->implicit & JP_NODE_ID_MASK;

	if (node_table[hash].parent < 0)
		return running;
	return node_table[hash].parent;
}

/*
 * Stands in for a wrapped node's ExecProcNode: marks the node as running
 * while it runs.  Its per-call work is meant to stay a few loads and two
 * stores to jp_sig.node_running, with little to keep across the call: it
 * runs for every tuple of every node.
 */
static TupleTableSlot *
jp_node_wrapper(PlanState *node)
{
	int			id = node->plan->plan_node_id;
	JpNodeEntry *e;
	ExecProcNodeMtd fn;
	TupleTableSlot *result;
	int32		outer;

	if (unlikely((unsigned) id >= JP_MAX_PLAN_NODES))
		return wrapper_slow(node, NULL);
	e = &node_table[id];
	outer = jp_sig.node_running;

	/*
	 * Not this plan's node, or the node already running: no node calls
	 * itself, so that is a chain of wrappers leading back here.
	 */
	if (unlikely(e->node != node || outer == id))
		return wrapper_slow(node, e);

	/*
	 * What runs once this node returns is its caller, except under a Hash:
	 * the Hash goes on building (hashing and inserting the tuple) between its
	 * child's calls, until its parent calls its other child.
	 */
	if (unlikely(((outer | e->implicit) & JP_NODE_IMPLICIT) != 0))
		outer = after_hash(outer, e);
	fn = e->saved;
	jp_sig.node_running = id;
	if (unlikely(jp_sig.flush_pending))
		flush_now();

	result = fn(node);
	if (unlikely(!points_here(node, id)))
		rewrap(node);

	/*
	 * A Hash builds until its child returns no tuple; then what runs is the
	 * Hash Join, so that no node's entry meets a Hash's mark.
	 */
	if (unlikely(e->implicit != 0) && TupIsNull(result))
		outer = hash_built(e, outer);

	jp_sig.node_running = outer;
	return result;
}

/*
 * A node's entry: the wrapper's fast path for one plan_node_id, for a node
 * that runs its own dispatch (ours_for), with the id and its table row
 * known when compiled.  It tests only that the node is this plan's, and
 * keeps no frame pointer: nine instructions with gcc 12 at -O2, against
 * the wrapper's 43 (doc/plan_nodes.md, "Cost").  What it leaves out is
 * done elsewhere: a Hash's child clears the Hash's mark when the build ends
 * (jp_node_wrapper), and when a flush falls due the handler points the
 * nodes at the wrapper, which flushes (jp_nodes_arm_flush).
 */
#if defined(__GNUC__) && !defined(__clang__)
#define ENTRY_ATTRIBUTES __attribute__((optimize("omit-frame-pointer")))
#else
#define ENTRY_ATTRIBUTES
#endif

static pg_attribute_always_inline TupleTableSlot *
entry_body(PlanState *node, int id)
{
	int32		outer;
	TupleTableSlot *result;

	if (unlikely(node_table[id].node != node))
		return jp_node_wrapper(node);
	outer = jp_sig.node_running;
	jp_sig.node_running = id;
	result = node->ExecProcNodeReal(node);
	jp_sig.node_running = outer;
	return result;
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
		/* before ours_for, which reads it */
		e->implicit = (parent != NULL && IsA(parent, HashState) &&
					   pid >= 0 && pid < JP_MAX_PLAN_NODES) ?
			(pid | JP_NODE_IMPLICIT) : 0;
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
		e->parent = pid;
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

/*
 * Wrap the plan of queryDesc, run by exec, for the plan-node profile.
 * Returns whether it did (then jp_nodes_uninstall must follow).
 */
bool
jp_nodes_install(QueryDesc *queryDesc, JpExec *exec)
{
	InstallContext cxt;

	if (!jitprof_plan_nodes || jp_sig.node_exec != 0 || exec == NULL ||
		exec->owner != queryDesc || queryDesc->planstate == NULL)
		return false;
	cxt.parent = NULL;
	ninstalled = 0;
	install_walker(queryDesc->planstate, &cxt);
	installed_query = queryDesc;
	installed_exec = exec;
	exec->nodes_tracked = true;
	jp_sig.node_running = JP_NODE_NONE;
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
	jp_sig.node_running = JP_NODE_NONE;
	for (int i = 0; i < ninstalled; i++)
	{
		JpNodeEntry *e = &node_table[installed[i]];
		PlanState  *ps = e->node;

		e->node = NULL;
		e->in_call = false;
		if (points_here(ps, installed[i]))
		{
			ps->ExecProcNode = e->saved;
			e->fwd_node = NULL;
		}
		else
			e->fwd_node = ps;	/* someone else's chain leads here */
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
