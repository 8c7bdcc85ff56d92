/*-------------------------------------------------------------------------
 *
 * sampler_steps.c
 *	  The sampler's per-step counters: which expression step each self
 *	  sample of a JIT function lands in (jitprof.steps).
 *
 * A function linked with a step table (PC offset -> step, from its DWARF
 * line table) gets a JpStepProfile in its slot: two counters per distinct
 * step, charged by the handler for self samples at the interrupted PC and
 * for samples whose stack walk finds a call in the function.
 *
 * Contract: jp_step_profile_make runs inside LLVM's call stack (a sink
 * callback) and never throws; jp_step_profile_take runs while
 * jp_sig.flushing is set and only reads and zeroes counters.  A profile
 * belongs to its slot, then to the function's pending counts, and is freed
 * after the flush that reports it; one that cannot be allocated is counted.
 * Bounds and counters: doc/steps.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler_steps.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "sampler/sampler_shared.h"

static int
int32_cmp(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/* index of "step" in the sorted array steps[0..n-1]; it is there */
static int
distinct_index(const int32 *steps, int n, int32 step)
{
	const int32 *found = bsearch(&step, steps, n, sizeof(int32), int32_cmp);

	return (int) (found - steps);
}

/*
 * A profile for "fn", or NULL if it has no step table or there is no
 * memory.  Never throws.
 */
JpStepProfile *
jp_step_profile_make(const JitprofFunction *fn)
{
	int			nranges = fn->nsteps;
	int			nlabels = fn->step_labels ? fn->step_labels->nlabels : 0;
	int32	   *distinct;
	int			ndistinct = 0;
	Size		size;
	Size		labels_size;
	char	   *p;
	JpStepProfile *profile;
	uint32	   *offsets;
	uint16	   *which;
	int32	   *step;

	if (fn->steps == NULL || nranges <= 0 || nranges > JP_MAX_STEP_RANGES)
		return NULL;

	/* the distinct steps, JP_STEP_NONE included, sorted */
	distinct = malloc((nranges + 1) * sizeof(int32));
	if (distinct == NULL)
	{
		jp_steps_count_profile_dropped();
		return NULL;
	}
	for (int i = 0; i < nranges; i++)
		distinct[i] = fn->steps[i].step;
	distinct[nranges] = JP_STEP_NONE;
	qsort(distinct, nranges + 1, sizeof(int32), int32_cmp);
	for (int i = 0; i <= nranges; i++)
		if (ndistinct == 0 || distinct[ndistinct - 1] != distinct[i])
			distinct[ndistinct++] = distinct[i];

	labels_size = nlabels > 0 ?
		offsetof(JitprofStepLabels, labels) + nlabels * sizeof(JitprofStepLabel) : 0;
	size = MAXALIGN(sizeof(JpStepProfile)) +
		MAXALIGN(nranges * sizeof(uint32)) +
		MAXALIGN(nranges * sizeof(uint16)) +
		MAXALIGN(ndistinct * sizeof(int32)) +
		2 * MAXALIGN(ndistinct * sizeof(uint32)) +
		labels_size;
	p = malloc(size);
	if (p == NULL)
	{
		free(distinct);
		jp_steps_count_profile_dropped();
		return NULL;
	}
	memset(p, 0, size);

	profile = (JpStepProfile *) p;
	p += MAXALIGN(sizeof(JpStepProfile));
	offsets = (uint32 *) p;
	p += MAXALIGN(nranges * sizeof(uint32));
	which = (uint16 *) p;
	p += MAXALIGN(nranges * sizeof(uint16));
	step = (int32 *) p;
	p += MAXALIGN(ndistinct * sizeof(int32));
	profile->self = (volatile uint32 *) p;
	p += MAXALIGN(ndistinct * sizeof(uint32));
	profile->total = (volatile uint32 *) p;
	p += MAXALIGN(ndistinct * sizeof(uint32));
	if (labels_size > 0)
	{
		memcpy(p, fn->step_labels, labels_size);
		profile->labels = (JitprofStepLabels *) p;
	}

	memcpy(step, distinct, ndistinct * sizeof(int32));
	for (int i = 0; i < nranges; i++)
	{
		offsets[i] = fn->steps[i].offset;
		which[i] = (uint16) distinct_index(step, ndistinct,
										   fn->steps[i].step);
	}
	free(distinct);

	profile->start = (uintptr_t) fn->address;
	profile->nranges = nranges;
	profile->ndistinct = ndistinct;
	profile->none_index = distinct_index(step, ndistinct, JP_STEP_NONE);
	profile->offsets = offsets;
	profile->which = which;
	profile->step = step;
	profile->bytes = size;
	profile->next = NULL;

	jp_steps_count_profile(1, size);
	return profile;
}

void
jp_step_profile_free(JpStepProfile *profile)
{
	if (profile == NULL)
		return;
	jp_steps_count_profile(-1, profile->bytes);
	free(profile);
}

/*
 * Move the profile's counts into "out" (room for profile->ndistinct
 * deltas), one delta per step with samples, and zero them.  Returns the
 * number of deltas.  Called while the handler leaves the counters alone
 * (jp_sig.flushing set, or the code gone).
 */
int
jp_step_profile_take(JpStepProfile *profile, const JitprofOrigin *origin,
					 JpStoreStepDelta *out)
{
	int			n = 0;

	for (int i = 0; i < profile->ndistinct; i++)
	{
		/* self samples count in total too */
		if (profile->total[i] == 0)
			continue;
		out[n].origin = origin;
		out[n].step = profile->step[i];
		out[n].self_samples = profile->self[i];
		out[n].total_samples = profile->total[i];
		out[n].label = jp_steps_find_label(profile->labels, profile->step[i]);
		profile->self[i] = 0;
		profile->total[i] = 0;
		n++;
	}
	return n;
}
