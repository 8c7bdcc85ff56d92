/*-------------------------------------------------------------------------
 *
 * sink_perf_map.c
 *	  perf map sink: /tmp/perf-<pid>.map for perf top and perf report.
 *
 *	  Not implemented yet.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jitprof.h"

void
jp_perf_map_init(void)
{
}
