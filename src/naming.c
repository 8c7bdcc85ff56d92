/*-------------------------------------------------------------------------
 *
 * naming.c
 *	  Readable, stable names for JIT-compiled functions.
 *
 * llvmjit names its functions evalexpr_<module>_<n> and deform_<module>_<n>,
 * from per-backend counters: the same name means different code in every
 * backend and every query.  When an expression is compiled, this file works
 * out where it comes from (query ID, plan node, the expression's role in the
 * node) and builds a name from that:
 *
 *		q<queryid>#<plan_node_id>_<NodeType>_<role>[_<n>]
 *
 * <n> numbers the functions of one node and role within one query execution,
 * starting at 2 for the second; compile order is fixed by the plan, so the
 * same query gets the same names every time it runs.
 *
 * The origin is kept, keyed by llvmjit's name, until the linker reports the
 * function (jp_naming_take) or the JIT context is released without emitting
 * it (EXPLAIN without ANALYZE compiles but never emits).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/execExpr.h"
#include "executor/nodeAgg.h"
#include "executor/tuptable.h"
#include "nodes/plannodes.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "jitprof.h"

/* a generated function, in the order llvmjit generated it */
typedef struct NamedFunction
{
	char		llvm_name[JP_LLVM_NAME_LEN];
	ExprState  *state;			/* expression it was generated for */
	const char *deform_role;	/* NULL for the expression's own function */
	JitprofOrigin origin;		/* role and symbol set once resolved */
} NamedFunction;

/* the functions one JIT context (one query execution) generated */
typedef struct ContextNames
{
	JitContext *context;
	NamedFunction *functions;	/* in TopMemoryContext */
	int			nfunctions;
	int			maxfunctions;
	int			nresolved;		/* functions[0 .. nresolved-1] have names */
	struct ContextNames *next;
} ContextNames;

/* where to find a generated function's entry, by llvmjit's name */
typedef struct PendingName
{
	char		llvm_name[JP_LLVM_NAME_LEN];	/* hash key */
	ContextNames *names;
	int			index;
} PendingName;

static HTAB *pending_names = NULL;
static ContextNames *all_contexts = NULL;

static void
create_table(void)
{
	HASHCTL		ctl;

	ctl.keysize = JP_LLVM_NAME_LEN;
	ctl.entrysize = sizeof(PendingName);
	ctl.hcxt = TopMemoryContext;
	pending_names = hash_create("jitprof pending names", 256, &ctl,
								HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

/*
 * Name of a plan node type, as EXPLAIN spells it but without spaces.
 */
const char *
jp_plan_node_name(Plan *plan)
{
	switch (nodeTag(plan))
	{
#define PLAN_NAME(tag) case T_##tag: return #tag
			PLAN_NAME(Result);
			PLAN_NAME(ProjectSet);
			PLAN_NAME(ModifyTable);
			PLAN_NAME(Append);
			PLAN_NAME(MergeAppend);
			PLAN_NAME(RecursiveUnion);
			PLAN_NAME(BitmapAnd);
			PLAN_NAME(BitmapOr);
			PLAN_NAME(SeqScan);
			PLAN_NAME(SampleScan);
			PLAN_NAME(IndexScan);
			PLAN_NAME(IndexOnlyScan);
			PLAN_NAME(BitmapIndexScan);
			PLAN_NAME(BitmapHeapScan);
			PLAN_NAME(TidScan);
			PLAN_NAME(TidRangeScan);
			PLAN_NAME(SubqueryScan);
			PLAN_NAME(FunctionScan);
			PLAN_NAME(ValuesScan);
			PLAN_NAME(TableFuncScan);
			PLAN_NAME(CteScan);
			PLAN_NAME(NamedTuplestoreScan);
			PLAN_NAME(WorkTableScan);
			PLAN_NAME(ForeignScan);
			PLAN_NAME(CustomScan);
			PLAN_NAME(NestLoop);
			PLAN_NAME(MergeJoin);
			PLAN_NAME(HashJoin);
			PLAN_NAME(Material);
			PLAN_NAME(Memoize);
			PLAN_NAME(Sort);
			PLAN_NAME(IncrementalSort);
			PLAN_NAME(Group);
			PLAN_NAME(Agg);
			PLAN_NAME(WindowAgg);
			PLAN_NAME(Unique);
			PLAN_NAME(Gather);
			PLAN_NAME(GatherMerge);
			PLAN_NAME(Hash);
			PLAN_NAME(SetOp);
			PLAN_NAME(LockRows);
			PLAN_NAME(Limit);
#undef PLAN_NAME
		default:
			break;
	}
	return "Plan";
}

static bool
in_exprstate_array(ExprState *state, ExprState **array, int n)
{
	if (array == NULL)
		return false;
	for (int i = 0; i < n; i++)
		if (array[i] == state)
			return true;
	return false;
}

static bool
is_runtime_key(ExprState *state, IndexRuntimeKeyInfo *keys, int nkeys)
{
	for (int i = 0; i < nkeys; i++)
		if (keys[i].key_expr == state)
			return true;
	return false;
}

/* built as a qual or a projection, by its flags alone */
static bool
is_qual_or_projection(ExprState *state)
{
	return (state->flags & EEO_FLAG_IS_QUAL) != 0 || state->resultslot != NULL;
}

/*
 * The role an expression plays in its plan node: which field of the node's
 * state it was compiled for.  "expr" when it is none of those we know.
 */
static const char *
expr_role(ExprState *state)
{
	PlanState  *ps = state->parent;

	if (ps->qual == state)
		return "qual";
	if (ps->ps_ProjInfo && &ps->ps_ProjInfo->pi_state == state)
		return "projection";

	switch (nodeTag(ps))
	{
		case T_NestLoopState:
		case T_MergeJoinState:
		case T_HashJoinState:
			if (((JoinState *) ps)->joinqual == state)
				return "joinqual";
			if (IsA(ps, HashJoinState) &&
				((HashJoinState *) ps)->hashclauses == state)
				return "hashclauses";
			if (IsA(ps, HashJoinState) &&
				list_member_ptr(((HashJoinState *) ps)->hj_OuterHashKeys, state))
				return "outer_hashkeys";
			/* merge clauses live in a struct private to nodeMergejoin.c */
			if (IsA(ps, MergeJoinState) && !is_qual_or_projection(state))
				return "merge_key";
			break;
		case T_HashState:
			if (list_member_ptr(((HashState *) ps)->hashkeys, state))
				return "hashkeys";
			break;
		case T_AggState:
			{
				AggState   *as = (AggState *) ps;

				for (int i = 0; i < as->numphases; i++)
				{
					AggStatePerPhase phase = &as->phases[i];

					if (phase->evaltrans == state)
						return "transition";
					for (int j = 0; j < 2; j++)
						for (int k = 0; k < 2; k++)
							if (phase->evaltrans_cache[j][k] == state)
								return "transition";
					if (phase->aggnode &&
						in_exprstate_array(state, phase->eqfunctions,
										   phase->aggnode->numCols))
						return "group_equal";
				}
				for (int i = 0; i < as->num_hashes; i++)
				{
					TupleHashTable ht = as->perhash[i].hashtable;

					if (ht && (ht->tab_eq_func == state ||
							   ht->cur_eq_func == state))
						return "hash_equal";
				}
			}
			break;
		case T_GroupState:
			if (((GroupState *) ps)->eqfunction == state)
				return "group_equal";
			break;
		case T_UniqueState:
			if (((UniqueState *) ps)->eqfunction == state)
				return "group_equal";
			break;
		case T_SetOpState:
			if (((SetOpState *) ps)->eqfunction == state)
				return "group_equal";
			break;
		case T_WindowAggState:
			{
				WindowAggState *ws = (WindowAggState *) ps;
				ListCell   *lc;

				if (ws->partEqfunction == state)
					return "partition_equal";
				if (ws->ordEqfunction == state)
					return "order_equal";
				if (ws->runcondition == state)
					return "runcondition";
				if (ws->startOffset == state || ws->endOffset == state)
					return "frame_offset";
				foreach(lc, ws->funcs)
				{
					WindowFuncExprState *wfs = lfirst(lc);

					if (list_member_ptr(wfs->args, state))
						return "window_args";
					if (wfs->aggfilter == state)
						return "window_filter";
				}
			}
			break;
		case T_ResultState:
			if (((ResultState *) ps)->resconstantqual == state)
				return "constqual";
			break;
		case T_IndexScanState:
			{
				IndexScanState *is = (IndexScanState *) ps;

				if (is->indexqualorig == state)
					return "recheck";
				if (list_member_ptr(is->indexorderbyorig, state))
					return "orderby";
				if (is_runtime_key(state, is->iss_RuntimeKeys,
								   is->iss_NumRuntimeKeys))
					return "runtime_key";
			}
			break;
		case T_IndexOnlyScanState:
			{
				IndexOnlyScanState *ios = (IndexOnlyScanState *) ps;

				if (ios->recheckqual == state)
					return "recheck";
				if (is_runtime_key(state, ios->ioss_RuntimeKeys,
								   ios->ioss_NumRuntimeKeys))
					return "runtime_key";
			}
			break;
		case T_BitmapIndexScanState:
			{
				BitmapIndexScanState *bis = (BitmapIndexScanState *) ps;

				if (is_runtime_key(state, bis->biss_RuntimeKeys,
								   bis->biss_NumRuntimeKeys))
					return "runtime_key";
			}
			break;
		case T_BitmapHeapScanState:
			if (((BitmapHeapScanState *) ps)->bitmapqualorig == state)
				return "recheck";
			break;
		case T_MemoizeState:
			{
				MemoizeState *ms = (MemoizeState *) ps;

				if (ms->cache_eq_expr == state)
					return "cache_equal";
				if (in_exprstate_array(state, ms->param_exprs, ms->nkeys))
					return "cache_key";
			}
			break;

			/*
			 * Nodes whose remaining expressions are of one kind, kept in
			 * structs private to their executor file.
			 */
		case T_FunctionScanState:
			if (!is_qual_or_projection(state))
				return "function_args";
			break;
		case T_LimitState:
			if (((LimitState *) ps)->limitOffset == state ||
				((LimitState *) ps)->limitCount == state)
				return "limit";
			if (((LimitState *) ps)->eqfunction == state)
				return "ties_equal";
			break;
		default:
			break;
	}

	/*
	 * Not (yet) stored in its node: code emitted while the plan was still
	 * being initialized.  The expression's own flags still tell a qual from a
	 * projection.
	 */
	if (state->flags & EEO_FLAG_IS_QUAL)
		return "qual";
	if (state->resultslot != NULL)
		return "projection";
	return "expr";
}

/*
 * Does llvmjit generate a deform function for this fetch step?  Mirrors the
 * conditions of llvm_compile_expr() and slot_compile_deform(); when they
 * ever disagree the deform functions are simply named "deform".
 */
static bool
fetch_gets_deform(ExprEvalStep *op, JitContext *context)
{
	const TupleTableSlotOps *ops;

	if (!(context->flags & PGJIT_DEFORM) || !op->d.fetch.fixed ||
		op->d.fetch.known_desc == NULL)
		return false;
	ops = op->d.fetch.kind;
	return ops == &TTSOpsHeapTuple || ops == &TTSOpsBufferHeapTuple ||
		ops == &TTSOpsMinimalTuple;
}

/* roles of the deform functions of one expression, in generation order */
static int
deform_roles(ExprState *state, JitContext *context, const char **roles,
			 int max_roles)
{
	int			n = 0;

	for (int i = 0; i < state->steps_len && n < max_roles; i++)
	{
		ExprEvalStep *op = &state->steps[i];
		ExprEvalOp	opcode = ExecEvalStepOp(state, op);
		const char *role;

		if (opcode == EEOP_SCAN_FETCHSOME)
			role = "deform_scan";
		else if (opcode == EEOP_OUTER_FETCHSOME)
			role = "deform_outer";
		else if (opcode == EEOP_INNER_FETCHSOME)
			role = "deform_inner";
		else
			continue;
		if (fetch_gets_deform(op, context))
			roles[n++] = role;
	}
	return n;
}

static void
build_symbol(JitprofOrigin *origin, int ordinal)
{
	if (ordinal > 1)
		snprintf(origin->symbol, JP_SYMBOL_LEN, "q" INT64_FORMAT "#%d_%s_%s_%d",
				 origin->queryid, origin->plan_node_id, origin->node_type,
				 origin->role, ordinal);
	else
		snprintf(origin->symbol, JP_SYMBOL_LEN, "q" INT64_FORMAT "#%d_%s_%s",
				 origin->queryid, origin->plan_node_id, origin->node_type,
				 origin->role);
}

static ContextNames *
context_names(JitContext *context)
{
	ContextNames *names;

	for (names = all_contexts; names != NULL; names = names->next)
		if (names->context == context)
			return names;

	names = MemoryContextAllocZero(TopMemoryContext, sizeof(ContextNames));
	names->context = context;
	names->maxfunctions = 16;
	names->functions = MemoryContextAlloc(TopMemoryContext,
										  names->maxfunctions * sizeof(NamedFunction));
	names->next = all_contexts;
	all_contexts = names;
	return names;
}

/*
 * Remember the functions that llvmjit just generated for "state".
 * llvm_names lists them in generation order: the expression's own function
 * first, then its deform functions.
 *
 * Only the query and plan node are known now.  The role is found by looking
 * for the expression in its plan node's state, which the executor fills in
 * after compile_expr returns, so it is resolved when the code is linked.
 */
void
jp_naming_record_expr(ExprState *state, JitContext *context,
					  const char *const *llvm_names, const bool *is_deform,
					  int nfunctions)
{
	PlanState  *ps = state->parent;
	ContextNames *names;
	const char *roles[16];
	int			nroles;
	int			next_deform = 0;

	if (pending_names == NULL)
		create_table();
	names = context_names(context);

	nroles = deform_roles(state, context, roles, lengthof(roles));

	for (int i = 0; i < nfunctions; i++)
	{
		NamedFunction *fn;
		PendingName *entry;

		if (names->nfunctions == names->maxfunctions)
		{
			names->maxfunctions *= 2;
			names->functions = repalloc(names->functions,
										names->maxfunctions * sizeof(NamedFunction));
		}
		fn = &names->functions[names->nfunctions];
		memset(fn, 0, sizeof(NamedFunction));
		strlcpy(fn->llvm_name, llvm_names[i], JP_LLVM_NAME_LEN);
		fn->state = state;
		if (is_deform[i])
			fn->deform_role = next_deform < nroles ? roles[next_deform++] : "deform";
		fn->origin.queryid = jp_execution_queryid(ps->state);
		fn->origin.plan_node_id = ps->plan->plan_node_id;
		strlcpy(fn->origin.node_type, jp_plan_node_name(ps->plan),
				JP_NODE_TYPE_LEN);

		entry = hash_search(pending_names, fn->llvm_name, HASH_ENTER, NULL);
		entry->names = names;
		entry->index = names->nfunctions;
		names->nfunctions++;
	}
}

/*
 * Give roles and symbols to every function of "names" not resolved yet, in
 * generation order, so that the ordinals are the same on every execution.
 */
static void
resolve_names(ContextNames *names)
{
	for (int i = names->nresolved; i < names->nfunctions; i++)
	{
		NamedFunction *fn = &names->functions[i];
		int			ordinal = 1;

		strlcpy(fn->origin.role,
				fn->deform_role ? fn->deform_role : expr_role(fn->state),
				JP_ROLE_LEN);
		for (int j = 0; j < i; j++)
		{
			NamedFunction *other = &names->functions[j];

			if (other->origin.plan_node_id == fn->origin.plan_node_id &&
				strcmp(other->origin.role, fn->origin.role) == 0)
				ordinal++;
		}
		build_symbol(&fn->origin, ordinal);
	}
	names->nresolved = names->nfunctions;
}

/*
 * Hand over the origin of a function the linker reports.  Called from inside
 * LLVM, so it must not throw, and it does not: resolving only reads the plan
 * state, and finding or removing a hash entry allocates nothing.
 */
bool
jp_naming_take(const char *llvm_name, JitprofOrigin *origin)
{
	char		key[JP_LLVM_NAME_LEN];
	PendingName *entry;

	if (pending_names == NULL)
		return false;

	strlcpy(key, llvm_name, JP_LLVM_NAME_LEN);
	entry = hash_search(pending_names, key, HASH_FIND, NULL);
	if (entry == NULL)
		return false;
	if (entry->index >= entry->names->nresolved)
		resolve_names(entry->names);
	*origin = entry->names->functions[entry->index].origin;
	hash_search(pending_names, key, HASH_REMOVE, NULL);
	return true;
}

/*
 * Drop what is kept for a JIT context that is being released, including
 * functions that were never emitted.
 */
void
jp_naming_forget_context(JitContext *context)
{
	ContextNames **link;

	for (link = &all_contexts; *link != NULL; link = &(*link)->next)
	{
		ContextNames *names = *link;

		if (names->context != context)
			continue;
		for (int i = 0; i < names->nfunctions; i++)
			hash_search(pending_names, names->functions[i].llvm_name,
						HASH_REMOVE, NULL);
		*link = names->next;
		pfree(names->functions);
		pfree(names);
		return;
	}
}
