/*-------------------------------------------------------------------------
 *
 * sink_jitdump.c
 *	  perf jitdump sink: jit-<pid>.dump for perf inject --jit.
 *
 *	  Not implemented yet.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jitprof.h"

void
jp_jitdump_init(void)
{
}
