/*-------------------------------------------------------------------------
 *
 * jitdump_unwind.h
 *	  Inside the sinks folder: what sink_jitdump.c and jitdump_unwind.c
 *	  share, the record header of the jitdump format and the functions of an
 *	  object as the sink selects them.  Other folders include sinks/sinks.h
 *	  only.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sinks/jitdump_unwind.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_SINKS_JITDUMP_UNWIND_H
#define JITPROF_SINKS_JITDUMP_UNWIND_H

#include "core/core.h"

typedef struct JitdumpRecordHeader
{
	uint32		id;
	uint32		total_size;
	uint64		timestamp;
} JitdumpRecordHeader;

/*
 * A function of a linked object that has code, with the hashes its
 * dump_written entry compares, computed once.
 */
typedef struct DumpCandidate
{
	const JitprofFunction *fn;
	uint64		name_hash;
	uint64		code_hash;
	bool		todo;			/* gets its records written */
} DumpCandidate;

/*
 * The unwinding data shared by the records of one object: every function's
 * CIE + FDE, a terminator and the .eh_frame_hdr, to be placed at "base" (a
 * process address).  malloc'd; NULL if the object cannot have it.
 */
typedef struct UnwindShared
{
	uint8	   *data;
	size_t		size;
	size_t		hdr_size;
	uint64		base;
} UnwindShared;

/* jitdump_unwind.c: the JIT_CODE_UNWINDING_INFO records (never throw) */
extern bool jp_unwind_build(const DumpCandidate *cands, int n,
							UnwindShared *sh);
extern size_t jp_unwind_record_size(const JitprofFunction *fn,
									const UnwindShared *sh);
extern char *jp_unwind_record(const JitprofFunction *fn,
							  const UnwindShared *sh, size_t size, uint64 now);

#endif							/* JITPROF_SINKS_JITDUMP_UNWIND_H */
