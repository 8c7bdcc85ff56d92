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
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_COMPAT_H
#define JITPROF_COMPAT_H

#include "common/hashfn.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"

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
 * The query ID the core gives utility statement pstmt (whose queryId
 * pg_stat_statements may have zeroed), as pg_stat_statements keys it: 15
 * hashes the statement's text, 16 and later jumble its parse tree as a
 * utility Query, the tree that parse analysis jumbled.
 */
#if PG_VERSION_NUM >= 160000
static inline uint64
jp_utility_query_id(PlannedStmt *pstmt, const char *query_string)
{
	Query	   *query = makeNode(Query);
	JumbleState *jstate;
	uint64		queryid;

	query->commandType = CMD_UTILITY;
	query->utilityStmt = pstmt->utilityStmt;
	query->stmt_location = pstmt->stmt_location;
	query->stmt_len = pstmt->stmt_len;
#if PG_VERSION_NUM >= 170000
	jstate = JumbleQuery(query);
#else
	jstate = JumbleQuery(query, query_string);
#endif
	queryid = query->queryId;
	pfree(jstate->jumble);
	pfree(jstate->clocations);
	pfree(jstate);
	pfree(query);
	return queryid;
}
#else
static inline uint64
jp_utility_query_id(PlannedStmt *pstmt, const char *query_string)
{
	int			location = pstmt->stmt_location;
	int			len = pstmt->stmt_len;
	const char *sql = CleanQuerytext(query_string, &location, &len);
	uint64		queryid;

	queryid = DatumGetUInt64(hash_any_extended((const unsigned char *) sql,
											   len, 0));
	return queryid != 0 ? queryid : UINT64CONST(2);
}
#endif

#endif							/* JITPROF_COMPAT_H */
