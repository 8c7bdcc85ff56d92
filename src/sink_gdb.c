/*-------------------------------------------------------------------------
 *
 * sink_gdb.c
 *	  GDB JIT interface sink: in-memory ELF objects registered with gdb.
 *
 *	  Not implemented yet.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jitprof.h"

void
jp_gdb_init(void)
{
}
