/*-------------------------------------------------------------------------
 *
 * sampler.c
 *	  Per-backend CPU-time sampler that attributes samples to JIT functions.
 *
 *	  Not implemented yet.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jitprof.h"

void
jp_sampler_init(void)
{
}
