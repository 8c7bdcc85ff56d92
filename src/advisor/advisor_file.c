/*-------------------------------------------------------------------------
 *
 * advisor_file.c
 *	  The JIT advisor's table saved at a clean shutdown and loaded at the
 *	  next start, so that enforce mode's decisions survive a restart.
 *
 * With jitprof.save on, the postmaster writes the table to
 * pg_stat/jitprof_advisor.stat at a clean shutdown and reads it back, then
 * removes it, at start.
 *
 * Contract: both run in the postmaster when no backend is there, so with no
 * lock; advisor.c hands over and takes back the table as plain arrays.  A
 * file that fails any check (header, size before any allocation, checksum,
 * each entry's values) is removed with one LOG line and the advisor starts
 * empty.  The format and checks: doc/jit_advisor.md, "The saved table".
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/advisor/advisor_file.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_perm.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "advisor/advisor.h"

#define ADVISOR_FILE		PGSTAT_STAT_PERMANENT_DIRECTORY "/jitprof_advisor.stat"
#define ADVISOR_TMP_FILE	ADVISOR_FILE ".tmp"
#define ADVISOR_MAGIC		0x4A504144	/* "JPAD" */
#define ADVISOR_VERSION		2	/* 2: the tiered level, six per entry */

typedef struct AdvisorFileHeader
{
	uint32		magic;
	uint32		version;
	uint32		entry_size;
	uint32		nlevels;
	int64		nentries;
} AdvisorFileHeader;

/* Report a saved file that cannot be used, and remove it. */
static void
file_bad(const char *detail)
{
	ereport(LOG,
			(errmsg("ignoring JIT advisor file \"%s\" because it is corrupt or was written by another version of jitprof",
					ADVISOR_FILE),
			 errdetail_internal("%s", _(detail))));
	unlink(ADVISOR_FILE);
}

/* could the advisor have written this entry? */
static bool
entry_valid(const JpAdvisorEntry *e)
{
	if (!e->used || e->pg_level < 0 || e->pg_level >= JP_NUM_LEVELS ||
		e->enforce_level < -1 || e->enforce_level >= JP_NUM_LEVELS ||
		!isfinite(e->plan_cost) || !isfinite(e->explore_loss) ||
		e->explore_loss < 0)
		return false;
	for (int l = 0; l < JP_NUM_LEVELS; l++)
	{
		const JpLevelStats *s = &e->level[l];

		if (s->executions < 0 || !isfinite(s->cpu_mean) ||
			!isfinite(s->cpu_m2) || s->cpu_m2 < 0 ||
			!isfinite(s->wall_sum) || !isfinite(s->generation_sum) ||
			!isfinite(s->inlining_sum) || !isfinite(s->optimization_sum) ||
			!isfinite(s->emission_sum))
			return false;
	}
	return true;
}

static int64
entry_executions(const JpAdvisorEntry *e)
{
	int64		n = 0;

	for (int l = 0; l < JP_NUM_LEVELS; l++)
		n += e->level[l].executions;
	return n;
}

/* most executions first */
static int
cmp_executions(const void *a, const void *b)
{
	int64		na = entry_executions((const JpAdvisorEntry *) a);
	int64		nb = entry_executions((const JpAdvisorEntry *) b);

	return na > nb ? -1 : na < nb ? 1 : 0;
}

/*
 * Read the file saved at the last clean shutdown: the entries (palloc'd, at
 * most max_entries of them, *nentries set) and the counters, or NULL and
 * zero counters when there is no usable file.
 */
JpAdvisorEntry *
jp_advisor_file_load(int64 max_entries, int64 *nentries,
					 JpAdvisorSavedCounts *counts)
{
	int			fd;
	struct stat st;
	AdvisorFileHeader header;
	JpAdvisorSavedCounts saved;
	JpAdvisorEntry *entries = NULL;
	pg_crc32c	crc;
	pg_crc32c	file_crc;
	uint64		expected;
	int64		n;

	*nentries = 0;
	memset(counts, 0, sizeof(*counts));

	/* only the postmaster writes it, at shutdown: a leftover of a kill */
	if (lstat(ADVISOR_TMP_FILE, &st) == 0 && S_ISREG(st.st_mode) &&
		unlink(ADVISOR_TMP_FILE) == 0)
		ereport(LOG,
				(errmsg("removed incomplete JIT advisor file \"%s\" left by an interrupted save",
						ADVISOR_TMP_FILE)));

	fd = OpenTransientFile(ADVISOR_FILE,
						   O_RDONLY | O_NONBLOCK | O_NOFOLLOW | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ELOOP)
			ereport(LOG,
					(errmsg("ignoring JIT advisor file \"%s\" because it is a symbolic link",
							ADVISOR_FILE),
					 errdetail("The JIT advisor starts empty."),
					 errhint("Remove the symbolic link.")));
		else if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not open JIT advisor file \"%s\": %m",
							ADVISOR_FILE),
					 errdetail("The JIT advisor starts empty.")));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
	{
		ereport(LOG,
				(errmsg("ignoring JIT advisor file \"%s\" because it is not a regular file",
						ADVISOR_FILE),
				 errdetail("The JIT advisor starts empty."),
				 errhint("Remove \"%s\"; jitprof writes a regular file there at the next clean shutdown.",
						 ADVISOR_FILE)));
		CloseTransientFile(fd);
		return NULL;
	}

	if (!jp_read_all(fd, &header, sizeof(header)))
	{
		file_bad(gettext_noop("The file is shorter than its header. It has been removed, and the JIT advisor starts empty."));
		goto fail;
	}
	if (header.magic == ADVISOR_MAGIC && header.version < ADVISOR_VERSION)
	{
		ereport(LOG,
				(errmsg("ignoring JIT advisor file \"%s\" because it is corrupt or was written by another version of jitprof",
						ADVISOR_FILE),
				 errdetail("The file has format %u, written by an earlier version of jitprof, and this version reads format %d only. It has been removed, and the JIT advisor starts empty.",
						   header.version, ADVISOR_VERSION)));
		unlink(ADVISOR_FILE);
		goto fail;
	}
	if (header.magic != ADVISOR_MAGIC || header.version != ADVISOR_VERSION ||
		header.entry_size != sizeof(JpAdvisorEntry) ||
		header.nlevels != JP_NUM_LEVELS)
	{
		file_bad(gettext_noop("The file header has the wrong magic number, version or entry size. It has been removed, and the JIT advisor starts empty."));
		goto fail;
	}
	expected = sizeof(header) + sizeof(saved) + sizeof(pg_crc32c);
	if (header.nentries < 0 ||
		header.nentries > (int64) ((PG_INT64_MAX / 4) / sizeof(JpAdvisorEntry)) ||
		(uint64) st.st_size != expected +
		(uint64) header.nentries * sizeof(JpAdvisorEntry))
	{
		file_bad(gettext_noop("The file's size does not match the number of entries its header announces. It has been removed, and the JIT advisor starts empty."));
		goto fail;
	}

	entries = palloc_extended(Max(header.nentries, 1) * sizeof(JpAdvisorEntry),
							  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (entries == NULL)
	{
		file_bad(gettext_noop("There is not enough memory to read it. It has been removed, and the JIT advisor starts empty."));
		goto fail;
	}
	if (!jp_read_all(fd, &saved, sizeof(saved)) ||
		!jp_read_all(fd, entries, header.nentries * sizeof(JpAdvisorEntry)) ||
		!jp_read_all(fd, &file_crc, sizeof(file_crc)))
	{
		file_bad(gettext_noop("The file could not be read completely. It has been removed, and the JIT advisor starts empty."));
		goto fail;
	}
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &header, sizeof(header));
	COMP_CRC32C(crc, &saved, sizeof(saved));
	COMP_CRC32C(crc, entries, header.nentries * sizeof(JpAdvisorEntry));
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, file_crc))
	{
		file_bad(gettext_noop("The file's checksum does not match its contents. It has been removed, and the JIT advisor starts empty."));
		goto fail;
	}
	for (n = 0; n < header.nentries; n++)
	{
		if (!entry_valid(&entries[n]))
		{
			file_bad(gettext_noop("An entry holds values the JIT advisor cannot have written. The file has been removed, and the JIT advisor starts empty."));
			goto fail;
		}
	}

	n = header.nentries;
	if (n > max_entries)
	{
		qsort(entries, n, sizeof(JpAdvisorEntry), cmp_executions);
		saved.dropped += n - max_entries;
		ereport(LOG,
				(errmsg("dropped %lld of %lld saved JIT advisor entries because jitprof.advisor_max_queries is %lld",
						(long long) (n - max_entries), (long long) n,
						(long long) max_entries),
				 errdetail("The entries with the fewest executions were dropped.")));
		n = max_entries;
	}
	*nentries = n;
	*counts = saved;
	CloseTransientFile(fd);
	unlink(ADVISOR_FILE);
	return entries;

fail:
	if (entries)
		pfree(entries);
	CloseTransientFile(fd);
	return NULL;
}

/*
 * Write the table at postmaster shutdown (the caller checks that the
 * shutdown is clean and jitprof.save is on).  The temporary file is created
 * afresh (O_EXCL, no symbolic links), so that nothing left at its path can
 * make shutdown wait; a failure is one LOG line, and the file is not there.
 */
void
jp_advisor_file_save(const JpAdvisorEntry *entries, int64 nentries,
					 const JpAdvisorSavedCounts *counts)
{
	int			fd;
	AdvisorFileHeader header;
	pg_crc32c	crc;

	(void) unlink(ADVISOR_TMP_FILE);
	fd = OpenTransientFilePerm(ADVISOR_TMP_FILE,
							   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | PG_BINARY,
							   pg_file_create_mode);
	if (fd < 0)
		goto error;

	memset(&header, 0, sizeof(header));
	header.magic = ADVISOR_MAGIC;
	header.version = ADVISOR_VERSION;
	header.entry_size = sizeof(JpAdvisorEntry);
	header.nlevels = JP_NUM_LEVELS;
	header.nentries = nentries;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &header, sizeof(header));
	COMP_CRC32C(crc, counts, sizeof(*counts));
	COMP_CRC32C(crc, entries, nentries * sizeof(JpAdvisorEntry));
	FIN_CRC32C(crc);
	if (!jp_write_all(fd, &header, sizeof(header)) ||
		!jp_write_all(fd, counts, sizeof(*counts)) ||
		!jp_write_all(fd, entries, nentries * sizeof(JpAdvisorEntry)) ||
		!jp_write_all(fd, &crc, sizeof(crc)))
		goto error;
	if (CloseTransientFile(fd) != 0)
	{
		fd = -1;
		goto error;
	}
	jp_replace_file(ADVISOR_TMP_FILE, ADVISOR_FILE);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write JIT advisor file \"%s\": %m",
					ADVISOR_TMP_FILE)));
	if (fd >= 0)
		CloseTransientFile(fd);
	unlink(ADVISOR_TMP_FILE);
}
