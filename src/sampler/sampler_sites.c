/*-------------------------------------------------------------------------
 *
 * sampler_sites.c
 *	  The call sites of plan nodes: which child a return address calls.
 *
 * A parent node calls each child from a few places in its own code (a
 * Nested Loop its outer child from one, its inner child from another), and
 * every node of that type calls from the same places.  The plan-node
 * profile learns them from a wrapper's first calls: a return address, the
 * parent's ExecProcNodeReal and the child's position.  Once a node's
 * calls all came from known sites, it runs unwrapped, and at a sample the
 * handler tells its frame from the return address alone
 * (sampler_nodes.c).  A site seen for two different positions or parents
 * is ambiguous and never used.  Code addresses do not change in a backend,
 * so the table is kept for the backend's life.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sampler/sampler_sites.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "sampler/sampler_shared.h"

/*
 * The table the handler reads.  An entry is written whole before its
 * return address, which publishes it; only "ambiguous" changes later, by
 * one store.
 */
typedef struct JpCallSite
{
	uintptr_t	ret;			/* the return address; 0: a free entry */
	ExecProcNodeMtd parent_fn;	/* NULL: the executor calls the root */
	int			position;		/* JP_SITE_OUTER, _INNER or _ROOT */
	bool		ambiguous;		/* seen for two parents or positions */
}			JpCallSite;

#define JP_MAX_CALL_SITES	256

static volatile JpCallSite sites[JP_MAX_CALL_SITES];
static int	nsites = 0;
static uint64 sites_dropped = 0;
static uint64 sites_ambiguous = 0;

static inline uint32
site_hash(uintptr_t ret)
{
	return (uint32) (((uint64) ret * UINT64CONST(0x9E3779B97F4A7C15)) >> 56);
}

/*
 * Record that a call returning to ret was made by a node whose
 * ExecProcNodeReal is parent_fn (NULL for the executor's call of the
 * plan's root) to its child at position.  Returns whether the site is now
 * known and unambiguous.
 */
bool
jp_call_site_learn(uintptr_t ret, ExecProcNodeMtd parent_fn, int position)
{
	uint32		i = site_hash(ret);

	for (int probe = 0; probe < JP_MAX_CALL_SITES; probe++)
	{
		volatile	JpCallSite *site = &sites[i];

		if (site->ret == ret)
		{
			if (site->ambiguous)
				return false;
			if (site->parent_fn != parent_fn || site->position != position)
			{
				site->ambiguous = true;
				sites_ambiguous++;
				return false;
			}
			return true;
		}
		if (site->ret == 0)
		{
			/* keep a quarter free, so that probes stay short */
			if (nsites >= JP_MAX_CALL_SITES * 3 / 4)
			{
				sites_dropped++;
				return false;
			}
			site->parent_fn = parent_fn;
			site->position = position;
			site->ambiguous = false;
			pg_compiler_barrier();
			site->ret = ret;
			nsites++;
			return true;
		}
		i = (i + 1) & (JP_MAX_CALL_SITES - 1);
	}
	sites_dropped++;
	return false;
}

/*
 * The position of the child a call returning to ret was made to, if its
 * parent's ExecProcNodeReal is parent_fn; else -1.  For the signal
 * handler: reads the table only.
 */
int
jp_call_site_position(uintptr_t ret, ExecProcNodeMtd parent_fn)
{
	uint32		i = site_hash(ret);

	for (int probe = 0; probe < JP_MAX_CALL_SITES; probe++)
	{
		volatile	JpCallSite *site = &sites[i];
		uintptr_t	key = site->ret;

		if (key == 0)
			return -1;
		if (key == ret)
		{
			pg_compiler_barrier();
			if (site->ambiguous || site->parent_fn != parent_fn)
				return -1;
			return site->position;
		}
		i = (i + 1) & (JP_MAX_CALL_SITES - 1);
	}
	return -1;
}

void
jp_call_site_counts(uint64 *known, uint64 *ambiguous, uint64 *dropped)
{
	*known = (uint64) nsites;
	*ambiguous = sites_ambiguous;
	*dropped = sites_dropped;
}
