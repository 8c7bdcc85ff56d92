/*-------------------------------------------------------------------------
 *
 * plan_copy.c
 *	  Hand the executor a copy of its PlannedStmt with other JIT flags: the
 *	  JIT advisor's explored and enforced levels and tiering's plans both
 *	  change a plan's flags this way.
 *
 * Contract: the copy is shallow, made in the QueryDesc's own memory context
 * before ExecutorStart's next hook, so it lives as long as the QueryDesc;
 * the plan it copies (a cached plan's too) is never written.  Out of memory,
 * nothing changes and the caller says why.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/core/plan_copy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/execdesc.h"
#include "utils/memutils.h"

#include "core/core.h"

/* false, with the QueryDesc untouched, if no memory was left for the copy */
bool
jp_plan_with_jit_flags(QueryDesc *queryDesc, int jit_flags)
{
	PlannedStmt *copy;

	copy = MemoryContextAllocExtended(GetMemoryChunkContext(queryDesc),
									  sizeof(PlannedStmt), MCXT_ALLOC_NO_OOM);
	if (copy == NULL)
		return false;
	memcpy(copy, queryDesc->plannedstmt, sizeof(PlannedStmt));
	copy->jitFlags = jit_flags;
	queryDesc->plannedstmt = copy;
	return true;
}
