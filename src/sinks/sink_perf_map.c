/*-------------------------------------------------------------------------
 *
 * sink_perf_map.c
 *	  perf map sink: /tmp/perf-<pid>.map for perf top and perf report.
 *
 * perf resolves samples in anonymous executable memory through a text file
 * /tmp/perf-<pid>.map with one "START SIZE name" line (hex) per function.
 * This sink appends a line for every function of every object the registry
 * reports, so perf shows jitprof's names (naming.c) instead of raw addresses.
 *
 * The file is opened lazily, by the backend, when its first object is
 * linked: the postmaster never JIT-compiles, so it never creates a file that
 * its children would inherit.  /tmp is world-writable, so the file is opened
 * without following symlinks and without truncating, then checked with
 * fstat(): it must be a regular file owned by our effective user with a
 * single link.  Anything else gets one WARNING naming the path, and the sink
 * stays off for the rest of the backend's life.  A file that passes the
 * checks is ours, left over from an earlier process with the same pid, and
 * is truncated; if others may read or write it, its mode is reset to 0600
 * first, with a WARNING.
 *
 * perf map files cannot retract a line, so nothing happens when code is
 * freed, and a line is written only once: the sink keeps the ranges it has
 * written (range_set.c) and skips a function whose address, size and name
 * are already in the file.  jitprof's code arena (code_arena.cpp) gives an
 * address again only to a function of the same name, size and offset, so
 * the same query run again adds nothing; the file grows with distinct
 * functions, not executions.  A line that would overlap a line of another
 * name is not written (counted as a conflict): that can only happen with
 * code RuntimeDyld linked, which reuses addresses freely.
 *
 * The file is capped at jitprof.perf_map_max_size: past it the sink stops
 * appending, with one WARNING, and counts the lines it dropped.
 *
 * The file is removed at backend exit unless jitprof.perf_map_keep is on.
 *
 * Callbacks run inside LLVM's call stack: no ERROR, no palloc; a failed
 * write is reported as a WARNING and turns the sink off.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sinks/sink_perf_map.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "sinks/sinks.h"

/* GUC variables */
static bool jitprof_perf_map = true;
static bool jitprof_perf_map_keep = false;
static int	jitprof_perf_map_max_size = 4096;	/* kB */

static JitprofFileCounters map_counters;

static JitprofRangeSet map_written; /* lines in the file */
static bool map_cap_warned = false;

static int	map_fd = -1;
static pid_t map_pid = 0;		/* process that opened map_fd */
static bool map_failed = false; /* gave up for the rest of this process */
static char map_path[MAXPGPATH];
static bool map_opened = false; /* map_path was created or checked by us */
static struct stat map_stat;	/* identity of the file we write */

/*
 * Turn the sink off for this process.  The caller reports why, once, with a
 * WARNING (map_refuse, map_failed_open, map_failed_io, or its own).
 */
static void
map_stop(void)
{
	map_failed = true;
	if (map_fd >= 0)
		close(map_fd);
	map_fd = -1;
}

/*
 * The file at map_path is not one jitprof may write (a symbolic link, a
 * FIFO, another user's file...): say which, and how to get perf maps back.
 */
static void
map_refuse(const char *reason_msg)
{
	map_stop();
	ereport(WARNING,
			(errmsg(reason_msg, map_path),
			 errdetail("perf map output is off for this backend."),
			 errhint("Remove \"%s\" unless a process of the server's OS user uses it.",
					 map_path)));
}

/* a system call on the perf map failed: report errno */
static void
map_failed_io(void)
{
	int			save_errno = errno;

	map_stop();
	errno = save_errno;
	ereport(WARNING,
			(errcode_for_file_access(),
			 errmsg("could not write perf map file \"%s\": %m", map_path),
			 errdetail("perf map output is off for this backend.")));
}

/* opening or checking the perf map failed: report errno */
static void
map_failed_open(void)
{
	int			save_errno = errno;

	map_stop();
	errno = save_errno;
	ereport(WARNING,
			(errcode_for_file_access(),
			 errmsg("could not open perf map file \"%s\": %m", map_path),
			 errdetail("perf map output is off for this backend.")));
}

/* at backend exit: remove the map, if it still is the file we wrote */
static void
map_at_exit(int code, Datum arg)
{
	struct stat st;

	if (!map_opened || map_pid != getpid())
		return;
	if (!jitprof_perf_map_keep &&
		lstat(map_path, &st) == 0 &&
		st.st_dev == map_stat.st_dev && st.st_ino == map_stat.st_ino)
		unlink(map_path);
	if (map_fd >= 0)
		close(map_fd);
	map_fd = -1;
}

/*
 * Open /tmp/perf-<pid>.map safely.  Returns false (after a WARNING) when the
 * sink must stay off.
 */
static bool
map_open(void)
{
	int			fd;
	struct stat st;
	int			flags;

	map_pid = getpid();
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int) map_pid);

	/*
	 * No O_TRUNC before the checks; O_NONBLOCK so that a FIFO planted there
	 * cannot block the backend.
	 */
	fd = open(map_path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			  S_IRUSR | S_IWUSR);
	if (fd < 0)
	{
		if (errno == ELOOP)
			map_refuse(gettext_noop("perf map file \"%s\" is a symbolic link"));
		else if (errno == EISDIR || errno == ENXIO)
			map_refuse(gettext_noop("perf map file \"%s\" is not a regular file"));
		else if (errno == EACCES)
			map_refuse(gettext_noop("perf map file \"%s\" cannot be opened by the server's OS user"));
		else
			map_failed_open();
		return false;
	}
	map_fd = fd;

	if (fstat(fd, &st) != 0)
	{
		map_failed_open();
		return false;
	}
	if (!S_ISREG(st.st_mode))
	{
		map_refuse(gettext_noop("perf map file \"%s\" is not a regular file"));
		return false;
	}
	if (st.st_uid != geteuid())
	{
		map_stop();
		ereport(WARNING,
				(errmsg("perf map file \"%s\" belongs to another user", map_path),
				 errdetail("The file belongs to user ID %d, the server runs as user ID %d; perf map output is off for this backend.",
						   (int) st.st_uid, (int) geteuid()),
				 errhint("Remove \"%s\" unless a process of that user uses it.",
						 map_path)));
		return false;
	}
	if (st.st_nlink != 1)
	{
		map_refuse(gettext_noop("perf map file \"%s\" has more than one hard link"));
		return false;
	}

	/*
	 * Ours, but others may read or write it: a leftover made by hand or with
	 * another umask.  The lines name the server's code, so make it private
	 * again before writing any.
	 */
	if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
	{
		if (fchmod(fd, S_IRUSR | S_IWUSR) != 0)
		{
			map_failed_io();
			return false;
		}
		ereport(WARNING,
				(errmsg("permissions of perf map file \"%s\" were reset to 0600",
						map_path),
				 errdetail("The file, left over from an earlier process, had mode %04o, which lets other users read or write it.",
						   (unsigned int) (st.st_mode & 07777))));
		st.st_mode = (st.st_mode & ~07777) | S_IRUSR | S_IWUSR;
	}

	/* ours: a leftover of an earlier process with this pid, start afresh */
	if (ftruncate(fd, 0) != 0 ||
		(flags = fcntl(fd, F_GETFL)) < 0 ||
		fcntl(fd, F_SETFL, (flags & ~O_NONBLOCK) | O_APPEND) != 0)
	{
		map_failed_io();
		return false;
	}

	map_stat = st;
	map_opened = true;
	jp_range_reset(&map_written);
	memset(&map_counters, 0, sizeof(map_counters));
	map_cap_warned = false;
	on_proc_exit(map_at_exit, (Datum) 0);
	return true;
}

static bool
perf_map_enabled(void)
{
	return jitprof_perf_map && !map_failed;
}

static void
perf_map_object_linked(const JitprofObject *object)
{
	char		buf[8192];
	size_t		len = 0;

	if (map_fd < 0 || map_pid != getpid())
	{
		if (!map_open())
			return;
	}

	for (int i = 0; i < object->nfunctions; i++)
	{
		const JitprofFunction *fn = &object->functions[i];
		int			n;

		const char *name = fn->origin.symbol;
		uint64		end = fn->address + fn->size;
		uint64		name_hash;
		JitprofRange *written;

		if (fn->size == 0)
			continue;

		/* already in the file, or would contradict a line in it? */
		name_hash = hash_bytes_extended((const unsigned char *) name,
										strlen(name), 0);
		written = jp_range_exact(&map_written, fn->address, end);
		if (written != NULL && written->name_hash == name_hash)
			continue;
		if (written != NULL || jp_range_overlaps(&map_written, fn->address, end))
		{
			map_counters.conflicts++;
			continue;
		}

		/* a line is at most 2 * 16 + 3 + JP_SYMBOL_LEN bytes */
		if (len + 40 + JP_SYMBOL_LEN > sizeof(buf))
		{
			if (!jp_write_all(map_fd, buf, len))
			{
				map_failed_io();
				return;
			}
			len = 0;
		}
		n = snprintf(buf + len, sizeof(buf) - len,
					 "%" PRIx64 " %" PRIx64 " %s\n",
					 fn->address, fn->size, name);
		if (n <= 0)
			continue;
		n = Min((size_t) n, sizeof(buf) - len - 1);
		if (map_counters.bytes + n >
			(uint64) jitprof_perf_map_max_size * 1024)
		{
			map_counters.dropped++;
			if (!map_cap_warned)
			{
				map_cap_warned = true;
				ereport(WARNING,
						(errmsg("perf map \"%s\" reached jitprof.perf_map_max_size (%d kB)",
								map_path, jitprof_perf_map_max_size),
						 errdetail("No more functions of this backend are added to it."),
						 errhint("Raise jitprof.perf_map_max_size to name more JIT functions in perf.")));
			}
			continue;
		}
		if (!jp_range_add(&map_written, fn->address, end, name_hash, 0))
		{
			errno = ENOMEM;
			map_failed_io();
			return;
		}
		len += n;
		map_counters.bytes += n;
		map_counters.records++;
	}
	if (len > 0 && !jp_write_all(map_fd, buf, len))
		map_failed_io();
}

/* nothing to do: a line stays valid, see the file header */
static void
perf_map_object_freed(const JitprofObject *object)
{
}

static const JitprofSink perf_map_sink = {
	.enabled = perf_map_enabled,
	.object_linked = perf_map_object_linked,
	.object_freed = perf_map_object_freed,
};

void
jp_perf_map_init(void)
{
	DefineCustomBoolVariable("jitprof.perf_map",
							 "Writes /tmp/perf-<pid>.map so that perf shows JIT functions by name.",
							 "Lines are added for code linked while this is on.",
							 &jitprof_perf_map,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("jitprof.perf_map_keep",
							 "Keeps /tmp/perf-<pid>.map when the backend exits.",
							 "Needed to run perf report after the backend has exited.",
							 &jitprof_perf_map_keep,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("jitprof.perf_map_max_size",
							"Sets the size at which a backend stops adding to its perf map.",
							"Each distinct JIT function takes one line of about 100 bytes.",
							&jitprof_perf_map_max_size,
							4096,
							64,
							INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	jp_registry_register_sink(&perf_map_sink);
}

/* what the sink wrote and dropped, for jitprof_status */
const JitprofFileCounters *
jp_perf_map_counters(void)
{
	return &map_counters;
}
