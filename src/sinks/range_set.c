/*-------------------------------------------------------------------------
 *
 * range_set.c
 *	  Address ranges a file sink has already written, for deduplication.
 *
 * The code arena (code_arena.cpp) gives a function the addresses of an
 * earlier copy of itself, so the perf map and jitdump sinks see the same
 * function at the same address over and over.  Each sink keeps the ranges
 * it has written, with a hash of the name (and, for jitdump, of the code
 * bytes), and writes a line or record only for what is new.  The set also
 * lets the perf map sink refuse a line that would overlap one of another
 * name.
 *
 * A set is an array of non-overlapping ranges sorted by start address,
 * searched by bisection.  It holds at most one entry per line or record the
 * sink wrote, so its size is bounded by the sink's file size cap.  Memory
 * comes from malloc: the sinks run inside LLVM's call stack and must not
 * throw.  Single-threaded, like every sink.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sinks/range_set.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "sinks/sinks.h"

/* index of the first range that ends after "start" */
static int
first_ending_after(const JitprofRangeSet *set, uint64 start)
{
	int			lo = 0;
	int			hi = set->n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (set->items[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the range [start, end) itself, if the set holds it */
JitprofRange *
jp_range_exact(JitprofRangeSet *set, uint64 start, uint64 end)
{
	int			i = first_ending_after(set, start);

	if (i < set->n && set->items[i].start == start && set->items[i].end == end)
		return &set->items[i];
	return NULL;
}

/* does any range of the set share an address with [start, end)? */
bool
jp_range_overlaps(const JitprofRangeSet *set, uint64 start, uint64 end)
{
	int			i = first_ending_after(set, start);

	return i < set->n && set->items[i].start < end;
}

/*
 * Add [start, end), replacing every range it overlaps.  Returns false when
 * out of memory; the set is unchanged then.
 */
bool
jp_range_add(JitprofRangeSet *set, uint64 start, uint64 end,
			 uint64 name_hash, uint64 code_hash)
{
	int			i = first_ending_after(set, start);
	int			j = i;

	while (j < set->n && set->items[j].start < end)
		j++;
	if (j == i && set->n == set->max)
	{
		int			newmax = Max(64, set->max * 2);
		JitprofRange *items = realloc(set->items, newmax * sizeof(JitprofRange));

		if (items == NULL)
			return false;
		set->items = items;
		set->max = newmax;
	}
	/* items[i .. j-1] overlap: make room for exactly one entry there */
	memmove(&set->items[i + 1], &set->items[j],
			(set->n - j) * sizeof(JitprofRange));
	set->n += 1 - (j - i);
	set->items[i].start = start;
	set->items[i].end = end;
	set->items[i].name_hash = name_hash;
	set->items[i].code_hash = code_hash;
	return true;
}

/* forget every range (the file was started afresh) */
void
jp_range_reset(JitprofRangeSet *set)
{
	set->n = 0;
}
