/*-------------------------------------------------------------------------
 *
 * store.c
 *	  Shared-memory store of hotspot statistics.
 *
 *	  Not implemented yet.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jitprof.h"

void
jp_store_init(void)
{
}
