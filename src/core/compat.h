/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Differences between PostgreSQL versions that jitprof papers over.
 *
 * This is jitprof's only PostgreSQL compatibility header: a logic file never
 * tests PG_VERSION_NUM, it calls a function or uses a macro defined here,
 * one definition per version.  jitprof is built against PostgreSQL 15, 17
 * and 18 (README, "Platforms").
 *
 * jitprof is built with -fvisibility=hidden, so that it exports only what
 * PostgreSQL looks up by name.  PostgreSQL 16 marks SQL-callable functions
 * PGDLLEXPORT in PG_FUNCTION_INFO_V1; PostgreSQL 15 marks only their info
 * functions, so a hidden build would hide the functions themselves.  This
 * defines the macro as 16 does.  (The Makefile defines PGDLLEXPORT as
 * default visibility, which 15 leaves empty on ELF platforms.)
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/core/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_COMPAT_H
#define JITPROF_COMPAT_H

#include "fmgr.h"
#include "nodes/execnodes.h"

/* IsQueryIdEnabled(), EnableQueryId(), compute_query_id: moved in 16 */
#if PG_VERSION_NUM >= 160000
#include "nodes/queryjumble.h"
#else
#include "utils/queryjumble.h"
#endif

#if PG_VERSION_NUM < 160000
#undef PG_FUNCTION_INFO_V1
#define PG_FUNCTION_INFO_V1(funcname) \
extern PGDLLEXPORT Datum funcname(PG_FUNCTION_ARGS); \
extern PGDLLEXPORT const Pg_finfo_record * CppConcat(pg_finfo_,funcname)(void); \
const Pg_finfo_record * \
CppConcat(pg_finfo_,funcname) (void) \
{ \
	static const Pg_finfo_record my_finfo = { 1 }; \
	return &my_finfo; \
} \
extern int no_such_variable
#endif

/*
 * A result relation's MERGE actions, as lists of MergeActionState: 17 keeps
 * one list per match kind (WHEN MATCHED, NOT MATCHED BY SOURCE, NOT MATCHED
 * BY TARGET), 15 two (matched, not matched).  jp_merge_actions(rri, kind)
 * for kind in 0 .. JP_MERGE_ACTION_KINDS - 1.
 */
#if PG_VERSION_NUM >= 170000
#define JP_MERGE_ACTION_KINDS NUM_MERGE_MATCH_KINDS
static inline List *
jp_merge_actions(ResultRelInfo *rri, int kind)
{
	return rri->ri_MergeActions[kind];
}
#else
#define JP_MERGE_ACTION_KINDS 2
static inline List *
jp_merge_actions(ResultRelInfo *rri, int kind)
{
	return kind == 0 ? rri->ri_matchedMergeAction :
		rri->ri_notMatchedMergeAction;
}
#endif

/*
 * 17's MERGE ... WHEN NOT MATCHED BY SOURCE: the executor tells MATCHED from
 * NOT MATCHED BY SOURCE rows with the result relation's join condition,
 * ri_MergeJoinCondition (NULL when there is no such action).  15 has none.
 */
#if PG_VERSION_NUM >= 170000
static inline bool
jp_is_merge_join_condition(ResultRelInfo *rri, ExprState *state)
{
	return rri->ri_MergeJoinCondition != NULL &&
		rri->ri_MergeJoinCondition == state;
}
#else
static inline bool
jp_is_merge_join_condition(ResultRelInfo *rri, ExprState *state)
{
	return false;
}
#endif

/*
 * 17's JSON_TABLE keeps two lists of expressions in TableFuncScanState that
 * XMLTABLE leaves empty: the PASSING arguments (passingvalexprs) and each
 * column's value expression (colvalexprs).  15 has neither field.
 */
#if PG_VERSION_NUM >= 170000
#define jp_tablefunc_passing(tfs) ((tfs)->passingvalexprs)
#define jp_tablefunc_column_values(tfs) ((tfs)->colvalexprs)
#else
#define jp_tablefunc_passing(tfs) NIL
#define jp_tablefunc_column_values(tfs) NIL
#endif

/*
 * This backend's slot among the regular backends, and its parallel leader's,
 * 1-based as 15's BackendId (0 for none): 17 numbers processes from 0
 * (ProcNumber, INVALID_PROC_NUMBER = -1), below MaxBackends for backends.
 */
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#define JP_MY_BACKEND_SLOT (MyProcNumber + 1)
#define JP_LEADER_BACKEND_SLOT (ParallelLeaderProcNumber + 1)
#else
#include "storage/backendid.h"
#define JP_MY_BACKEND_SLOT MyBackendId
#define JP_LEADER_BACKEND_SLOT ParallelLeaderBackendId
#endif

/*
 * 18 adds strict function-call steps specialised for one and two arguments
 * (EEOP_FUNCEXPR_STRICT_1, _2), with the same d.func data as the others.
 * For files that include executor/execExpr.h.
 */
#if PG_VERSION_NUM >= 180000
#define JP_EEOP_IS_STRICT_CALL_N(opcode) \
	((opcode) == EEOP_FUNCEXPR_STRICT_1 || (opcode) == EEOP_FUNCEXPR_STRICT_2)
#else
#define JP_EEOP_IS_STRICT_CALL_N(opcode) false
#endif

/* JumbleQuery() lost its query text in 16, which jumbles utility trees */
#if PG_VERSION_NUM >= 160000
#define jp_jumble_query(query, query_string) JumbleQuery(query)
#else
#define jp_jumble_query(query, query_string) JumbleQuery(query, query_string)
#endif

/*
 * PostgreSQL 18.
 *
 * The executor hook lost its execute_once argument.  JP_EXECUTOR_RUN_PARAMS
 * declares a hook's parameters (queryDesc, direction, count and, before 18,
 * execute_once) and JP_EXECUTOR_RUN_ARGS passes them on.
 */
#if PG_VERSION_NUM >= 180000
#define JP_EXECUTOR_RUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count
#define JP_EXECUTOR_RUN_ARGS queryDesc, direction, count
#else
#define JP_EXECUTOR_RUN_PARAMS \
	QueryDesc *queryDesc, ScanDirection direction, uint64 count, \
	bool execute_once
#define JP_EXECUTOR_RUN_ARGS queryDesc, direction, count, execute_once
#endif

/*
 * Where the run-time pruning of an Append or MergeAppend is described: 18
 * keeps every node's PartitionPruneInfo in one list of the EState, and the
 * node holds its index there (-1 for none).
 */
#if PG_VERSION_NUM >= 180000
static inline PartitionPruneInfo *
jp_prune_info_at(EState *estate, int index)
{
	if (index < 0 || index >= list_length(estate->es_part_prune_infos))
		return NULL;
	return list_nth_node(PartitionPruneInfo, estate->es_part_prune_infos,
						 index);
}
#define jp_part_prune_info(ps, node) \
	jp_prune_info_at((ps)->state, (node)->part_prune_index)
#else
#define jp_part_prune_info(ps, node) ((node)->part_prune_info)
#endif

/*
 * Hashing became compiled expressions in 18 (ExecBuildHash32Expr and
 * ExecBuildHash32FromAttrs): a hash join's outer side and its Hash node each
 * compute all their keys' hash in one ExprState, where 15 and 17 compiled one
 * ExprState per key and hashed with function calls; a TupleHashTable hashes
 * with tab_hash_expr, and a hashed SubPlan its left-hand row with
 * lhs_hash_expr.  These say whether "state" is one of those; before 18 the
 * last three never are.
 */
#if PG_VERSION_NUM >= 180000
static inline bool
jp_is_outer_hash(HashJoinState *hj, ExprState *state)
{
	return hj->hj_OuterHash == state;
}

static inline bool
jp_is_inner_hash(HashState *hs, ExprState *state)
{
	return hs->hash_expr == state;
}

static inline bool
jp_is_table_hash(TupleHashTable table, ExprState *state)
{
	return table != NULL && table->tab_hash_expr == state;
}

static inline bool
jp_is_subplan_left_hash(SubPlanState *sstate, ExprState *state)
{
	return sstate->lhs_hash_expr == state;
}
#else
static inline bool
jp_is_outer_hash(HashJoinState *hj, ExprState *state)
{
	return list_member_ptr(hj->hj_OuterHashKeys, state);
}

static inline bool
jp_is_inner_hash(HashState *hs, ExprState *state)
{
	return list_member_ptr(hs->hashkeys, state);
}

static inline bool
jp_is_table_hash(TupleHashTable table, ExprState *state)
{
	return false;
}

static inline bool
jp_is_subplan_left_hash(SubPlanState *sstate, ExprState *state)
{
	return false;
}
#endif

/*
 * Expressions 18 no longer compiles on their own: a SubPlan's arguments are
 * steps of its host's expression (ExecInitSubPlanExpr), and a sorted SetOp
 * compares its rows with sort support functions.
 */
#if PG_VERSION_NUM >= 180000
static inline bool
jp_is_subplan_arg(SubPlanState *sstate, ExprState *state)
{
	return false;
}

static inline bool
jp_is_setop_equal(SetOpState *ss, ExprState *state)
{
	return false;
}
#else
static inline bool
jp_is_subplan_arg(SubPlanState *sstate, ExprState *state)
{
	return list_member_ptr(sstate->args, state);
}

static inline bool
jp_is_setop_equal(SetOpState *ss, ExprState *state)
{
	return ss->eqfunction == state;
}
#endif

#endif							/* JITPROF_COMPAT_H */
