/*-------------------------------------------------------------------------
 *
 * sink_perf_map.c
 *	  perf map sink: /tmp/perf-<pid>.map for perf top and perf report.
 *
 * Contract: one "START SIZE name" line per function the registry reports,
 * written once (range_set.c), never retracted; the file is opened lazily
 * without following links, must be a regular file of ours, and is capped
 * at jitprof.perf_map_max_size.  At exit the map is kept within the bounds
 * of the ledger pg_stat/jitprof_perf_maps (jitprof.perf_map_keep_files and
 * _keep_size), which removes only files it recorded.  Callbacks run inside
 * LLVM's call stack: no ERROR, no palloc; a failed write is one WARNING and
 * turns the sink off.  The long story: doc/perf.md.
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
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "sinks/sinks.h"

/* GUC variables */
static bool jitprof_perf_map = true;
static bool jitprof_perf_map_keep = false;
static int	jitprof_perf_map_max_size = 4096;	/* kB */
static int	jitprof_perf_map_keep_files = 64;
static int	jitprof_perf_map_keep_size = 64 * 1024; /* kB */

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

/* ---- perf maps kept after exit: the ledger (see the file header) ---- */

#define KEPT_LEDGER		PGSTAT_STAT_PERMANENT_DIRECTORY "/jitprof_perf_maps"
#define KEPT_MAGIC		0x4A504B4D	/* "JPKM" */
#define KEPT_VERSION	1
#define KEPT_MAX_FILES	1000	/* jitprof.perf_map_keep_files' maximum */

typedef struct KeptHeader
{
	uint32		magic;
	uint32		version;
	int32		nmaps;
	int32		padding;		/* zero */
	uint64		removed;		/* maps removed to stay within the bound */
} KeptHeader;

/* one kept map: its pid, and the identity of the file as it was left */
typedef struct KeptMap
{
	int32		pid;
	int32		padding;		/* zero */
	uint64		dev;
	uint64		ino;
	int64		size;
	int64		mtime_sec;
	int64		mtime_nsec;
} KeptMap;

/* the ledger while one backend holds it, at exit: one more than the cap */
static KeptMap kept[KEPT_MAX_FILES + 1];

/*
 * Open the ledger and lock it (LOCK_EX or LOCK_SH).  It lives in the data
 * directory, which only the server's user may write, but is still opened
 * without following a symbolic link and must be a regular file.  Returns
 * -1 when it cannot be used.
 */
static int
kept_open(int how)
{
	int			fd;
	struct stat st;

	fd = open(KEPT_LEDGER, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			  S_IRUSR | S_IWUSR);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		st.st_uid != geteuid() || flock(fd, how) != 0)
	{
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Read the ledger into kept[]; returns the number of maps.  A ledger that
 * is empty, short or of another format counts as empty: its maps are then
 * left in /tmp, never removed on a guess.
 */
static int
kept_read(int fd, KeptHeader *header)
{
	ssize_t		got;

	memset(header, 0, sizeof(*header));
	got = pread(fd, header, sizeof(*header), 0);
	if (got != sizeof(*header) || header->magic != KEPT_MAGIC ||
		header->version != KEPT_VERSION || header->nmaps < 0 ||
		header->nmaps > KEPT_MAX_FILES)
	{
		memset(header, 0, sizeof(*header));
		return 0;
	}
	got = pread(fd, kept, sizeof(KeptMap) * header->nmaps, sizeof(*header));
	if (got != (ssize_t) (sizeof(KeptMap) * header->nmaps))
	{
		header->nmaps = 0;
		return 0;
	}
	return header->nmaps;
}

/*
 * Remove a kept map if the file at its path is still the one that was
 * left: a regular file of ours (lstat: a symbolic link is never followed)
 * with the recorded identity.  Returns whether it removed it.
 */
static bool
kept_remove(const KeptMap *k)
{
	char		path[MAXPGPATH];
	struct stat st;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int) k->pid);
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
		st.st_uid != geteuid() || st.st_nlink != 1 ||
		(uint64) st.st_dev != k->dev || (uint64) st.st_ino != k->ino ||
		(int64) st.st_size != k->size ||
		(int64) st.st_mtim.tv_sec != k->mtime_sec ||
		(int64) st.st_mtim.tv_nsec != k->mtime_nsec)
		return false;
	return unlink(path) == 0;
}

/*
 * Add this backend's map, "st" as it is left, to the ledger, then remove
 * the oldest maps until the ledger is within jitprof.perf_map_keep_files
 * and jitprof.perf_map_keep_size (this map too, if it alone is bigger).
 * Returns false when the ledger cannot be used: the caller removes the map.
 */
static bool
kept_add(const struct stat *st)
{
	KeptHeader	header;
	int			fd;
	int			n;
	int			m = 0;
	int			first = 0;
	int64		total = 0;
	int64		max_bytes = (int64) jitprof_perf_map_keep_size * 1024;
	size_t		len;

	fd = kept_open(LOCK_EX);
	if (fd < 0)
		return false;
	n = kept_read(fd, &header);

	/* an entry with our pid is stale: that file is ours now */
	for (int i = 0; i < n; i++)
		if (kept[i].pid != (int32) map_pid)
			kept[m++] = kept[i];
	n = m;
	memset(&kept[n], 0, sizeof(KeptMap));
	kept[n].pid = (int32) map_pid;
	kept[n].dev = (uint64) st->st_dev;
	kept[n].ino = (uint64) st->st_ino;
	kept[n].size = (int64) st->st_size;
	kept[n].mtime_sec = (int64) st->st_mtim.tv_sec;
	kept[n].mtime_nsec = (int64) st->st_mtim.tv_nsec;
	n++;

	for (int i = 0; i < n; i++)
		total += kept[i].size;
	while (first < n &&
		   (n - first > jitprof_perf_map_keep_files || total > max_bytes))
	{
		if (kept_remove(&kept[first]))
			header.removed++;
		total -= kept[first].size;
		first++;
	}
	n -= first;
	memmove(kept, kept + first, sizeof(KeptMap) * n);

	header.magic = KEPT_MAGIC;
	header.version = KEPT_VERSION;
	header.nmaps = n;
	header.padding = 0;
	len = sizeof(KeptMap) * n;
	if (pwrite(fd, &header, sizeof(header), 0) != sizeof(header) ||
		(len > 0 && pwrite(fd, kept, len, sizeof(header)) != (ssize_t) len) ||
		ftruncate(fd, sizeof(header) + len) != 0)
	{
		/* the maps listed may stay in /tmp; never remove on a guess */
		close(fd);
		return true;
	}
	close(fd);
	return true;
}

/* at backend exit: keep the map within the bound, or remove it */
static void
map_at_exit(int code, Datum arg)
{
	struct stat st;

	if (!map_opened || map_pid != getpid())
		return;
	if (map_fd >= 0)
		close(map_fd);
	map_fd = -1;

	/* only if it still is the file we wrote */
	if (jitprof_perf_map_keep ||
		lstat(map_path, &st) != 0 || !S_ISREG(st.st_mode) ||
		st.st_dev != map_stat.st_dev || st.st_ino != map_stat.st_ino)
		return;
	if (jitprof_perf_map_keep_files > 0 && jitprof_perf_map_keep_size > 0 &&
		st.st_size > 0 && kept_add(&st))
		return;
	unlink(map_path);
}

/*
 * The maps of exited backends that the ledger lists, their bytes, and how
 * many maps were removed to stay within the bound, for jitprof_status.
 * Zeros when there is no ledger.
 */
void
jp_perf_map_kept(uint64 *maps, uint64 *bytes, uint64 *removed)
{
	KeptHeader	header;
	int			fd;
	int			n;

	*maps = *bytes = *removed = 0;
	if (access(KEPT_LEDGER, F_OK) != 0)
		return;
	fd = kept_open(LOCK_SH);
	if (fd < 0)
		return;
	n = kept_read(fd, &header);
	close(fd);
	*maps = n;
	for (int i = 0; i < n; i++)
		*bytes += kept[i].size;
	*removed = header.removed;
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
							 "Keeps /tmp/perf-<pid>.map for good when the backend exits.",
							 "Off, the map is kept within jitprof.perf_map_keep_files and jitprof.perf_map_keep_size.",
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

	DefineCustomIntVariable("jitprof.perf_map_keep_files",
							"Sets how many perf maps of exited backends are kept for perf report.",
							"When more are kept, an exiting backend removes the oldest. 0 removes a map when its backend exits.",
							&jitprof_perf_map_keep_files,
							64,
							0,
							KEPT_MAX_FILES,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("jitprof.perf_map_keep_size",
							"Sets the total size of the perf maps of exited backends that are kept for perf report.",
							"When they are bigger, an exiting backend removes the oldest. 0 removes a map when its backend exits.",
							&jitprof_perf_map_keep_size,
							64 * 1024,
							0,
							INT_MAX,
							PGC_SIGHUP,
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
