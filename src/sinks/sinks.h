/*-------------------------------------------------------------------------
 *
 * sinks.h
 *	  The sinks layer (doc/architecture.md): the file sinks that register
 *	  with the registry (link layer) and write what it hands them.
 *
 *	  sink_perf_map.c  /tmp/perf-<pid>.map (doc/perf.md)
 *	  sink_jitdump.c   perf's jitdump file, with debug and unwinding
 *	                   information (doc/perf.md, doc/steps.md)
 *	  jitdump_unwind.c the bytes of its unwinding records; shares
 *	                   jitdump_unwind.h, the folder's inner header, with it
 *	  range_set.c      the ranges a file sink has written, used by both
 *
 * The gdb sink needs libelf and lives in jitprof_llvm.so (src/llvm).
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sinks/sinks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_SINKS_H
#define JITPROF_SINKS_H

#include "core/core.h"
#include "link/link.h"
#include "names/names.h"

/* range_set.c: ranges a file sink has written (never throws) */
typedef struct JitprofRange
{
	uint64		start;
	uint64		end;
	uint64		name_hash;
	uint64		code_hash;
} JitprofRange;

typedef struct JitprofRangeSet
{
	JitprofRange *items;		/* malloc'd, sorted by start, disjoint */
	int			n;
	int			max;
} JitprofRangeSet;

extern JitprofRange *jp_range_exact(JitprofRangeSet *set, uint64 start,
									uint64 end);
extern bool jp_range_overlaps(const JitprofRangeSet *set, uint64 start,
							  uint64 end);
extern bool jp_range_add(JitprofRangeSet *set, uint64 start, uint64 end,
						 uint64 name_hash, uint64 code_hash);
extern void jp_range_reset(JitprofRangeSet *set);

/* sink_perf_map.c, sink_jitdump.c: what the file sinks wrote and dropped */
typedef struct JitprofFileCounters
{
	uint64		bytes;			/* size of the file */
	uint64		records;		/* lines or records written */
	uint64		dropped;		/* not written: the file reached its cap */
	uint64		conflicts;		/* not written: overlaps another name */
} JitprofFileCounters;

/* sink_jitdump.c: JIT_CODE_UNWINDING_INFO records (issue 12) */
typedef struct JitprofUnwindCounters
{
	uint64		records;		/* written */
	uint64		missing;		/* functions without: no usable FDE */
	uint64		no_room;		/* not written: no free space after code */
} JitprofUnwindCounters;

/* GUCs and sink registration; the counters jitprof_status reports */
extern void jp_perf_map_init(void);
extern const JitprofFileCounters *jp_perf_map_counters(void);
extern void jp_perf_map_kept(uint64 *maps, uint64 *bytes, uint64 *removed);
extern void jp_jitdump_init(void);
extern const JitprofFileCounters *jp_jitdump_counters(void);
extern const JitprofUnwindCounters *jp_jitdump_unwind_counters(void);
extern bool jp_jitdump_unwind_wanted(void);

#endif							/* JITPROF_SINKS_H */
