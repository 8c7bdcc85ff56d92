/*-------------------------------------------------------------------------
 *
 * sink_io.c
 *	  File output shared by the sinks that write files (perf map, jitdump).
 *
 * Sinks run inside LLVM's call stack, so these use plain system calls and
 * report failure through their result and errno, never through ereport.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "jitprof.h"

/* write() all of buf, resuming after short writes and EINTR */
bool
jp_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0)
	{
		ssize_t		n = write(fd, p, len);

		if (n < 0)
		{
			if (errno == EINTR)
				continue;
			return false;
		}
		p += n;
		len -= n;
	}
	return true;
}
