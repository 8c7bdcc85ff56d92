/*-------------------------------------------------------------------------
 *
 * roles.c
 *	  What a generated function's expression is in its plan node: the
 *	  node's type name and the expression's role (doc/names.md).
 *
 * The executor keeps each ExprState it builds in a field of the plan
 * node's state, or builds it from a field of the plan; finding the
 * expression there says what it was compiled for.  node_role() and the
 * functions it dispatches to are doc/names.md's table of roles as code.
 *
 * Contract: it only reads, and never throws (naming.c calls it while the
 * linker waits for names); an expression found nowhere we look is "expr",
 * never a guess.  This is the code that reads executor-state fields, so it
 * is where the names follow PostgreSQL's versions (core/compat.h).
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/names/roles.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/execExpr.h"
#include "executor/nodeAgg.h"
#include "executor/tuptable.h"
#include "nodes/plannodes.h"
#include "utils/rel.h"

#include "names/names.h"
#include "names/roles.h"


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


static inline bool
found(ExprRole *out, const char *role)
{
	out->role = role;
	return true;
}

static inline bool
found_nth(ExprRole *out, const char *role, int ordinal)
{
	out->role = role;
	out->ordinal = ordinal;
	return true;
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

static inline bool
is_projection_of(ExprState *state, ProjectionInfo *proj)
{
	return proj != NULL && &proj->pi_state == state;
}

/*
 * Plan-tree tests.  The executor builds an ExprState from a plan expression
 * and keeps that expression in state->expr, so a pointer match with a field
 * of the plan says with certainty what the ExprState was built for, even
 * while its plan node is still being initialized.
 */
static inline bool
built_from(ExprState *state, const void *plan_expr)
{
	return plan_expr != NULL && (const void *) state->expr == plan_expr;
}

static bool
built_from_member(ExprState *state, List *plan_exprs)
{
	ListCell   *lc;

	if (state->expr == NULL)
		return false;
	foreach(lc, plan_exprs)
	{
		if (lfirst(lc) == (void *) state->expr)
			return true;
	}
	return false;
}

/* an argument of one of the operator clauses in "quals" */
static bool
built_from_clause_arg(ExprState *state, List *quals)
{
	ListCell   *lc;

	foreach(lc, quals)
	{
		Node	   *qual = lfirst(lc);

		if (IsA(qual, OpExpr) &&
			built_from_member(state, ((OpExpr *) qual)->args))
			return true;
		if (IsA(qual, ScalarArrayOpExpr) &&
			built_from_member(state, ((ScalarArrayOpExpr *) qual)->args))
			return true;
	}
	return false;
}

/* an expression of one of the pruning steps in "steps" */
static bool
built_from_step(ExprState *state, List *steps)
{
	ListCell   *lc;

	foreach(lc, steps)
	{
		PartitionPruneStepOp *step = lfirst(lc);

		if (IsA(step, PartitionPruneStepOp) &&
			built_from_member(state, step->exprs))
			return true;
	}
	return false;
}

/* run-time partition pruning steps of an Append or MergeAppend */
static bool
pruning_role(ExprState *state, PartitionPruneInfo *pruneinfo, ExprRole *out)
{
	ListCell   *lc1;

	if (pruneinfo == NULL || state->expr == NULL)
		return false;
	foreach(lc1, pruneinfo->prune_infos)
	{
		ListCell   *lc2;

		foreach(lc2, (List *) lfirst(lc1))
		{
			PartitionedRelPruneInfo *pinfo = lfirst(lc2);

			if (built_from_step(state, pinfo->initial_pruning_steps))
				return found(out, "initial_pruning");
			if (built_from_step(state, pinfo->exec_pruning_steps))
				return found(out, "exec_pruning");
		}
	}
	return false;
}

/*
 * Expressions a SubPlan in "host"'s expressions compiled with "host" as their
 * parent: its combining expression, its arguments, and for a hashed SubPlan
 * the left-hand projection and the comparisons used with the hash tables.
 * The two tables' comparators are compiled when the SubPlan first runs, so
 * they are numbered by the SubPlan's place in the host, not by compile order.
 */
static bool
subplan_host_role(ExprState *state, PlanState *host, ExprRole *out)
{
	ListCell   *lc;
	int			nhashed = 0;
	int			nwithnulls = 0;

	foreach(lc, host->initPlan)
	{
		SubPlanState *sstate = lfirst(lc);

		if (sstate->testexpr == state)
			return found(out, "subplan_test");
		if (jp_is_subplan_arg(sstate, state))
			return found(out, "subplan_args");
	}
	foreach(lc, host->subPlan)
	{
		SubPlanState *sstate = lfirst(lc);
		SubPlan    *subplan = sstate->subplan;

		if (subplan->useHashTable)
		{
			nhashed++;
			if (!subplan->unknownEqFalse)
				nwithnulls++;
		}
		if (sstate->testexpr == state)
			return found(out, "subplan_test");
		if (jp_is_subplan_arg(sstate, state))
			return found(out, "subplan_args");
		if (is_projection_of(state, sstate->projLeft))
			return found(out, "subplan_hash_left");
		if (sstate->cur_eq_comp == state)
			return found(out, "subplan_hash_equal");
		if (jp_is_subplan_left_hash(sstate, state))
			return found(out, "subplan_left_hash");
		if (sstate->hashtable && sstate->hashtable->tab_eq_func == state)
			return found_nth(out, "subplan_table_equal", nhashed);
		if (sstate->hashnulls && sstate->hashnulls->tab_eq_func == state)
			return found_nth(out, "subplan_nulls_equal", nwithnulls);
		if (jp_is_table_hash(sstate->hashtable, state))
			return found_nth(out, "subplan_table_hash", nhashed);
		if (jp_is_table_hash(sstate->hashnulls, state))
			return found_nth(out, "subplan_nulls_hash", nwithnulls);
	}
	return false;
}

/*
 * A hashed SubPlan's right-hand projection runs on the output of the
 * subquery's top plan node, and is compiled with that node as its parent.
 * The SubPlanState lives in the host's list, so look in the lists of every
 * plan node this JIT context compiled expressions for.
 */
static bool
subplan_right_role(ExprState *state, const NamedFunction *functions,
				   int nfunctions, ExprRole *out)
{
	PlanState  *ps = state->parent;

	if (!list_member_ptr(ps->state->es_subplanstates, ps))
		return false;
	for (int i = 0; i < nfunctions; i++)
	{
		PlanState  *host = functions[i].parent;
		ListCell   *lc;

		foreach(lc, host->subPlan)
		{
			SubPlanState *sstate = lfirst(lc);

			if (sstate->planstate == ps &&
				is_projection_of(state, sstate->projRight))
				return found(out, "subplan_hash_right");
		}
	}
	return false;
}

/* an array coercion's per-element expression, kept in a step of its host */
static bool
array_coerce_role(ExprState *state, const NamedFunction *functions,
				  int nfunctions, ExprRole *out)
{
	for (int i = 0; i < nfunctions; i++)
	{
		ExprState  *host = functions[i].state;

		if (functions[i].parent != state->parent ||
			functions[i].deform_role != NULL || host == state)
			continue;
		for (int j = 0; j < host->steps_len; j++)
		{
			ExprEvalStep *op = &host->steps[j];

			if (ExecEvalStepOp(host, op) == EEOP_ARRAYCOERCE &&
				op->d.arraycoerce.elemexprstate == state)
				return found(out, "array_coerce");
		}
	}
	return false;
}

/*
 * The expressions of one result relation of a ModifyTable.  "index" is its
 * place in the node's result relations (1-based), or 0 for a relation
 * opened by tuple routing.  The projection that forms the new tuple is
 * compiled on the relation's first row, so it is numbered by the relation.
 */
static bool
result_rel_role(ExprState *state, ResultRelInfo *rri, int index,
				ExprRole *out)
{
	if (is_projection_of(state, rri->ri_projectReturning))
		return found_nth(out, "returning", index);
	if (rri->ri_onConflict)
	{
		if (is_projection_of(state, rri->ri_onConflict->oc_ProjInfo))
			return found_nth(out, "onconflict_set", index);
		if (rri->ri_onConflict->oc_WhereClause == state)
			return found_nth(out, "onconflict_where", index);
	}
	if (is_projection_of(state, rri->ri_projectNew))
		return found_nth(out, "new_tuple", index);
	if (list_member_ptr(rri->ri_WithCheckOptionExprs, state))
		return found(out, "check_option");
	if (jp_is_merge_join_condition(rri, state))
		return found(out, "merge_join_condition");

	for (int kind = 0; kind < JP_MERGE_ACTION_KINDS; kind++)
	{
		ListCell   *lc;

		foreach(lc, jp_merge_actions(rri, kind))
		{
			MergeActionState *mas = lfirst(lc);

			if (mas->mas_whenqual == state)
				return found(out, "merge_when");
			if (is_projection_of(state, mas->mas_proj))
				return found(out, mas->mas_action->commandType == CMD_INSERT ?
							 "merge_insert" : "merge_update");
		}
	}
	return false;
}

static bool
modify_table_role(ExprState *state, ModifyTableState *mts, ExprRole *out)
{
	ListCell   *lc;

	for (int i = 0; i < mts->mt_nrels; i++)
		if (result_rel_role(state, &mts->resultRelInfo[i], i + 1, out))
			return true;
	if (mts->rootResultRelInfo &&
		(mts->mt_nrels == 0 || mts->rootResultRelInfo != &mts->resultRelInfo[0]) &&
		result_rel_role(state, mts->rootResultRelInfo, 0, out))
		return true;

	/* partitions opened by tuple routing, in the order rows reached them */
	foreach(lc, mts->ps.state->es_tuple_routing_result_relations)
	{
		ResultRelInfo *rri = lfirst(lc);

		if (result_rel_role(state, rri, 0, out))
		{
			out->ordinal = 0;
			out->relid = RelationGetRelid(rri->ri_RelationDesc);
			return true;
		}
	}
	return false;
}

static bool
agg_role(ExprState *state, AggState *as, ExprRole *out)
{
	/* the transition code variants hashagg_recompile_expressions() builds */
	static const char *const variants[2][2] = {
		{"transition", "transition_spill"},
		{"transition_minslot", "transition_refill"}
	};

	for (int i = 0; i < as->numphases; i++)
	{
		AggStatePerPhase phase = &as->phases[i];

		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 2; k++)
				if (phase->evaltrans_cache[j][k] == state)
					return found(out, variants[j][k]);
		if (phase->evaltrans == state)
			return found(out, "transition");
		if (phase->aggnode &&
			in_exprstate_array(state, phase->eqfunctions,
							   phase->aggnode->numCols))
			return found(out, "group_equal");
	}
	for (int i = 0; i < as->num_hashes; i++)
	{
		TupleHashTable ht = as->perhash[i].hashtable;

		if (ht && ht->tab_eq_func == state)
			return found(out, "hash_equal");
		if (jp_is_table_hash(ht, state))
			return found(out, "hash_value");
	}
	for (int i = 0; i < as->numaggs; i++)
		if (list_member_ptr(as->peragg[i].aggdirectargs, state))
			return found(out, "direct_args");
	for (int i = 0; i < as->numtrans; i++)
		if (as->pertrans[i].equalfnMulti == state)
			return found(out, "distinct_equal");
	return false;
}

static bool
window_agg_role(ExprState *state, WindowAggState *ws, ExprRole *out)
{
	ListCell   *lc;

	if (ws->partEqfunction == state)
		return found(out, "partition_equal");
	if (ws->ordEqfunction == state)
		return found(out, "order_equal");
	if (ws->runcondition == state)
		return found(out, "run_condition");
	if (ws->startOffset == state)
		return found(out, "frame_start_offset");
	if (ws->endOffset == state)
		return found(out, "frame_end_offset");
	foreach(lc, ws->funcs)
	{
		WindowFuncExprState *wfs = lfirst(lc);

		if (list_member_ptr(wfs->args, state))
			return found(out, "window_args");
		if (wfs->aggfilter == state)
			return found(out, "window_filter");
	}
	return false;
}

/*
 * A join's expressions: its join quals, and a Hash Join's hash clauses and
 * outer keys or a Merge Join's merge keys (those live in a struct private
 * to nodeMergejoin.c, so they are matched against the plan's clauses).
 */
static bool
join_role(ExprState *state, PlanState *ps, ExprRole *out)
{
	Plan	   *plan = ps->plan;

	switch (nodeTag(ps))
	{
		case T_NestLoopState:
		case T_MergeJoinState:
		case T_HashJoinState:
			if (((JoinState *) ps)->joinqual == state ||
				built_from(state, ((Join *) plan)->joinqual))
				return found(out, "joinqual");
			if (IsA(ps, HashJoinState))
			{
				HashJoinState *hj = (HashJoinState *) ps;

				if (hj->hashclauses == state ||
					built_from(state, ((HashJoin *) plan)->hashclauses))
					return found(out, "hashclauses");
				if (jp_is_outer_hash(hj, state) ||
					built_from_member(state, ((HashJoin *) plan)->hashkeys))
					return found(out, "outer_hashkeys");
			}
			if (IsA(ps, MergeJoinState))
			{
				/* merge keys live in a struct private to nodeMergejoin.c */
				ListCell   *lc;

				foreach(lc, ((MergeJoin *) plan)->mergeclauses)
				{
					OpExpr	   *clause = lfirst(lc);

					if (!IsA(clause, OpExpr) || list_length(clause->args) != 2)
						continue;
					if (built_from(state, linitial(clause->args)))
						return found(out, "merge_outer_key");
					if (built_from(state, lsecond(clause->args)))
						return found(out, "merge_inner_key");
				}
			}
			break;
		default:
			break;
	}
	return false;
}

/*
 * The equality and hash functions of grouping nodes: Group, Unique, SetOp
 * and Recursive Union.
 */
static bool
equality_role(ExprState *state, PlanState *ps, ExprRole *out)
{
	switch (nodeTag(ps))
	{
		case T_GroupState:
			if (((GroupState *) ps)->eqfunction == state)
				return found(out, "group_equal");
			break;
		case T_UniqueState:
			if (((UniqueState *) ps)->eqfunction == state)
				return found(out, "group_equal");
			break;
		case T_SetOpState:
			if (jp_is_setop_equal((SetOpState *) ps, state))
				return found(out, "group_equal");
			if (((SetOpState *) ps)->hashtable &&
				((SetOpState *) ps)->hashtable->tab_eq_func == state)
				return found(out, "hash_equal");
			if (jp_is_table_hash(((SetOpState *) ps)->hashtable, state))
				return found(out, "hash_value");
			break;
		case T_RecursiveUnionState:
			if (((RecursiveUnionState *) ps)->hashtable &&
				((RecursiveUnionState *) ps)->hashtable->tab_eq_func == state)
				return found(out, "hash_equal");
			if (jp_is_table_hash(((RecursiveUnionState *) ps)->hashtable, state))
				return found(out, "hash_value");
			break;
		default:
			break;
	}
	return false;
}

/*
 * Expressions of scans that look keys up: index, index-only and bitmap scans
 * (rechecks, ORDER BY, run-time and array keys) and TID scans.
 */
static bool
index_scan_role(ExprState *state, PlanState *ps, ExprRole *out)
{
	Plan	   *plan = ps->plan;

	switch (nodeTag(ps))
	{
		case T_IndexScanState:
			{
				IndexScanState *is = (IndexScanState *) ps;

				if (is->indexqualorig == state ||
					built_from(state, ((IndexScan *) plan)->indexqualorig))
					return found(out, "recheck");
				if (list_member_ptr(is->indexorderbyorig, state) ||
					built_from_member(state, ((IndexScan *) plan)->indexorderbyorig))
					return found(out, "orderby");
				if (is_runtime_key(state, is->iss_RuntimeKeys,
								   is->iss_NumRuntimeKeys))
					return found(out, "runtime_key");
			}
			break;
		case T_IndexOnlyScanState:
			{
				IndexOnlyScanState *ios = (IndexOnlyScanState *) ps;

				if (ios->recheckqual == state ||
					built_from(state, ((IndexOnlyScan *) plan)->recheckqual))
					return found(out, "recheck");
				if (is_runtime_key(state, ios->ioss_RuntimeKeys,
								   ios->ioss_NumRuntimeKeys))
					return found(out, "runtime_key");
			}
			break;
		case T_BitmapIndexScanState:
			{
				BitmapIndexScanState *bis = (BitmapIndexScanState *) ps;

				if (is_runtime_key(state, bis->biss_RuntimeKeys,
								   bis->biss_NumRuntimeKeys))
					return found(out, "runtime_key");
				for (int i = 0; i < bis->biss_NumArrayKeys; i++)
					if (bis->biss_ArrayKeys[i].array_expr == state)
						return found(out, "array_key");
			}
			break;
		case T_BitmapHeapScanState:
			if (((BitmapHeapScanState *) ps)->bitmapqualorig == state ||
				built_from(state, ((BitmapHeapScan *) plan)->bitmapqualorig))
				return found(out, "recheck");
			break;
		case T_TidScanState:
			/* kept in a struct private to nodeTidscan.c */
			if (built_from_clause_arg(state, ((TidScan *) plan)->tidquals))
				return found(out, "tid_key");
			break;
		case T_TidRangeScanState:
			if (built_from_clause_arg(state, ((TidRangeScan *) plan)->tidrangequals))
				return found(out, "tid_key");
			break;
		default:
			break;
	}
	return false;
}

/*
 * Expressions of the other scans that keep some of their own: TABLESAMPLE,
 * function, table function (XMLTABLE, JSON_TABLE), foreign and custom scans.
 */
static bool
other_scan_role(ExprState *state, PlanState *ps, ExprRole *out)
{
	Plan	   *plan = ps->plan;

	switch (nodeTag(ps))
	{
		case T_SampleScanState:
			if (list_member_ptr(((SampleScanState *) ps)->args, state))
				return found(out, "tablesample_args");
			if (((SampleScanState *) ps)->repeatable == state)
				return found(out, "tablesample_repeatable");
			break;
		case T_FunctionScanState:
			{
				/* kept in a struct private to nodeFunctionscan.c */
				ListCell   *lc;

				foreach(lc, ((FunctionScan *) plan)->functions)
				{
					Node	   *funcexpr = ((RangeTblFunction *) lfirst(lc))->funcexpr;

					if (IsA(funcexpr, FuncExpr) &&
						built_from_member(state, ((FuncExpr *) funcexpr)->args))
						return found(out, "function_args");
					if (built_from(state, funcexpr))
						return found(out, "function_expr");
				}
			}
			break;
		case T_TableFuncScanState:
			{
				TableFuncScanState *tfs = (TableFuncScanState *) ps;

				if (tfs->docexpr == state)
					return found(out, "tablefunc_document");
				if (tfs->rowexpr == state)
					return found(out, "tablefunc_row");
				if (list_member_ptr(tfs->colexprs, state))
					return found(out, "tablefunc_column");
				if (list_member_ptr(tfs->coldefexprs, state))
					return found(out, "tablefunc_default");
				if (list_member_ptr(tfs->ns_uris, state))
					return found(out, "tablefunc_namespace");
				if (list_member_ptr(jp_tablefunc_passing(tfs), state))
					return found(out, "tablefunc_passing");
				if (list_member_ptr(jp_tablefunc_column_values(tfs), state))
					return found(out, "tablefunc_column_value");
			}
			break;
		case T_ForeignScanState:
			if (((ForeignScanState *) ps)->fdw_recheck_quals == state ||
				built_from(state, ((ForeignScan *) plan)->fdw_recheck_quals))
				return found(out, "recheck");
			if (built_from_member(state, ((ForeignScan *) plan)->fdw_exprs))
				return found(out, "fdw_expr");
			break;
		case T_CustomScanState:
			if (built_from_member(state, ((CustomScan *) plan)->custom_exprs))
				return found(out, "custom_expr");
			break;
		default:
			break;
	}
	return false;
}

/*
 * Expressions a plan node keeps in fields of its own: one case per node
 * type, or a function per family of them.  This is where a role is decided,
 * so its contract is the naming rule's: a role is returned only when the
 * expression is found in the field that role names (by pointer, or by the
 * plan expression it was built from); anything else is false, and the
 * caller names the expression "expr", never a guess.
 */
static bool
node_role(ExprState *state, PlanState *ps, ExprRole *out)
{
	Plan	   *plan = ps->plan;

	switch (nodeTag(ps))
	{
		case T_NestLoopState:
		case T_MergeJoinState:
		case T_HashJoinState:
			return join_role(state, ps, out);
		case T_HashState:
			if (jp_is_inner_hash((HashState *) ps, state) ||
				built_from_member(state, ((Hash *) plan)->hashkeys))
				return found(out, "hashkeys");
			break;
		case T_AggState:
			return agg_role(state, (AggState *) ps, out);
		case T_GroupState:
		case T_UniqueState:
		case T_SetOpState:
		case T_RecursiveUnionState:
			return equality_role(state, ps, out);
		case T_WindowAggState:
			return window_agg_role(state, (WindowAggState *) ps, out);
		case T_ResultState:
			if (((ResultState *) ps)->resconstantqual == state ||
				built_from(state, ((Result *) plan)->resconstantqual))
				return found(out, "constqual");
			break;
		case T_ProjectSetState:
			{
				ProjectSetState *pss = (ProjectSetState *) ps;

				for (int i = 0; i < pss->nelems; i++)
				{
					Node	   *elem = pss->elems[i];

					if (elem == (Node *) state)
						return found(out, "target");
					if (IsA(elem, SetExprState) &&
						list_member_ptr(((SetExprState *) elem)->args, state))
						return found(out, "srf_args");
				}
			}
			break;
		case T_ModifyTableState:
			return modify_table_role(state, (ModifyTableState *) ps, out);
		case T_AppendState:
			return pruning_role(state, jp_part_prune_info(ps, (Append *) plan),
								out);
		case T_MergeAppendState:
			return pruning_role(state,
								jp_part_prune_info(ps, (MergeAppend *) plan),
								out);
		case T_IndexScanState:
		case T_IndexOnlyScanState:
		case T_BitmapIndexScanState:
		case T_BitmapHeapScanState:
		case T_TidScanState:
		case T_TidRangeScanState:
			return index_scan_role(state, ps, out);
		case T_SampleScanState:
		case T_FunctionScanState:
		case T_TableFuncScanState:
		case T_ForeignScanState:
		case T_CustomScanState:
			return other_scan_role(state, ps, out);
		case T_MemoizeState:
			{
				MemoizeState *ms = (MemoizeState *) ps;

				if (ms->cache_eq_expr == state)
					return found(out, "cache_equal");
				if (in_exprstate_array(state, ms->param_exprs, ms->nkeys) ||
					built_from_member(state, ((Memoize *) plan)->param_exprs))
					return found(out, "cache_key");
			}
			break;
		case T_LimitState:
			{
				LimitState *ls = (LimitState *) ps;

				/* OFFSET first, then the count, as nodeLimit.c builds them */
				if (ls->limitOffset == state || ls->limitCount == state ||
					built_from(state, ((Limit *) plan)->limitOffset) ||
					built_from(state, ((Limit *) plan)->limitCount))
					return found(out, "limit");
				if (ls->eqfunction == state)
					return found(out, "ties_equal");
			}
			break;
		default:
			break;
	}
	return false;
}

/*
 * The role an expression plays in its plan node: which field of the node's
 * state (or of its plan) it was compiled for.  "expr" when it is none of
 * those we know, or not stored where we look yet: never a guess.
 */
ExprRole
jp_expr_role(ExprState *state, const NamedFunction *functions,
			 int nfunctions)
{
	PlanState  *ps = state->parent;
	ExprRole	out = {"expr", 0, InvalidOid};

	if (ps->qual == state)
		out.role = "qual";
	else if (is_projection_of(state, ps->ps_ProjInfo))
		out.role = "projection";
	else if (node_role(state, ps, &out) ||
			 subplan_host_role(state, ps, &out) ||
			 subplan_right_role(state, functions, nfunctions, &out) ||
			 array_coerce_role(state, functions, nfunctions, &out))
		;

	/*
	 * Not stored in its node yet: code emitted while the plan was still being
	 * initialized (initial partition pruning runs then).  The node's own qual
	 * and projection are built from the plan's qual and target list into the
	 * node's result slot.  A ModifyTable's target list is only for EXPLAIN;
	 * the executor never projects it.
	 */
	else if (ps->qual == NULL && (state->flags & EEO_FLAG_IS_QUAL) &&
			 built_from(state, ps->plan->qual))
		out.role = "qual";
	else if (ps->ps_ProjInfo == NULL && !IsA(ps, ModifyTableState) &&
			 state->resultslot != NULL &&
			 state->resultslot == ps->ps_ResultTupleSlot &&
			 built_from(state, ps->plan->targetlist))
		out.role = "projection";
	return out;
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
int
jp_deform_roles(ExprState *state, JitContext *context, const char **roles,
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
