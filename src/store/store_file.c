/*-------------------------------------------------------------------------
 *
 * store_file.c
 *	  The hotspot store's statistics file: saved at a clean shutdown, loaded
 *	  at the next start.
 *
 * With jitprof.save on, the postmaster writes the store to
 * pg_stat/jitprof.stat at a clean shutdown (through jitprof.stat.tmp,
 * renamed over it) and reads it back, then removes it, at start.
 *
 * Contract: both run in the postmaster when no backend is there, so with no
 * lock.  Loading never fails the start nor waits: a file that fails any
 * check (see store_file_read_header) is a WARNING, removed, and the store
 * starts empty; nothing is allocated from the header before the file's size
 * agrees with it.  The format, crashes and interrupted saves:
 * doc/hotspots.md and doc/hardening.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/store/store_file.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_perm.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"

#include "store/store.h"
#include "store/store_shared.h"

#define STORE_FILE		PGSTAT_STAT_PERMANENT_DIRECTORY "/jitprof.stat"
#define STORE_TMP_FILE	STORE_FILE ".tmp"
#define STORE_MAGIC		0x4A505354	/* "JPST" */
/*
 * 7: summary rows count tiered JIT's executions, switches, functions and
 * expressions, plan-node rows its rounds and compile time (jitprof 1.4).
 * 6: summary rows count the executions and samples that had plan-node data
 * (JpStoreEntry.node_executions, node_samples).  5: function rows carry
 * their ordinal (JpStoreEntry.ordinal).  4 added the step rows, 3 was
 * jitprof 1.1's.
 */
#define STORE_VERSION	7

/*
 * The counters of StoreShared as a file holds them: data only.  "reserved"
 * is where files of jitprof 1.1 and early builds of format 4 held the lock's
 * address (they wrote StoreShared whole); the layout stayed.
 */
typedef struct StoreFileCounters
{
	uint64		reserved;		/* zero */
	JpSamplerHealth health;
	int64		evictions;
	TimestampTz stats_reset;
	int64		steps_dropped;
} StoreFileCounters;

/* a query's summary row in a saved file, found by its key */
typedef struct SavedSummary
{
	JpStoreKey	key;
	JpStoreEntry *entry;
} SavedSummary;

typedef struct StoreFileHeader
{
	uint32		magic;
	uint32		version;
	uint32		entry_size;
	uint32		max_symbol;
	int64		nentries;
	uint32		node_entry_size;
	uint32		padding;
	int64		nnodes;			/* plan-node rows after the entries */
	uint32		step_entry_size;
	uint32		padding2;
	int64		nsteps;			/* step rows after the plan-node rows */
} StoreFileHeader;

/*
 * Fill the empty store from the "n" entries of a saved file, keeping at most
 * jitprof.max_hotspots of them.  When the file has more (the setting was
 * lowered since it was written), the entries kept are the ones eviction
 * would keep: most samples first, most recently seen first among equals.
 * A function row is kept only together with its query's summary row, when
 * the file has one, so that jitprof_queries never shows a query's functions
 * without its executions.  Returns the number of entries dropped.
 */
static int64
store_fill(JpStoreEntry *entries, int64 n)
{
	JpStoreEntry **order;
	HTAB	   *summaries;
	HASHCTL		ctl;
	int64		kept = 0;

	order = palloc_extended(Max(n, 1) * sizeof(JpStoreEntry *),
							MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (order == NULL)
		return n;

	ctl.keysize = sizeof(JpStoreKey);
	ctl.entrysize = sizeof(SavedSummary);
	ctl.hcxt = CurrentMemoryContext;
	summaries = hash_create("jitprof saved summaries", 256, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	for (int64 i = 0; i < n; i++)
	{
		JpStoreEntry *e = &entries[i];

		e->node_type[JP_NODE_TYPE_LEN - 1] = '\0';
		e->role[JP_ROLE_LEN - 1] = '\0';
		e->symbol[JP_SYMBOL_LEN - 1] = '\0';
		order[i] = e;
		if (e->key.discriminator == 0)
		{
			SavedSummary *saved = hash_search(summaries, &e->key,
											  HASH_ENTER, NULL);

			saved->entry = e;
		}
	}

	/* the ones eviction would take last come first */
	qsort(order, n, sizeof(JpStoreEntry *), jp_store_keep_cmp);

	for (int64 i = 0; i < n && kept < jitprof_max_hotspots; i++)
	{
		JpStoreEntry *e = order[i];
		JpStoreEntry *entry;
		bool		found;

		if (hash_search(jp_hotspot_hash, &e->key, HASH_FIND, NULL) != NULL)
			continue;			/* a summary row taken with a function */

		if (e->key.discriminator != 0)
		{
			JpStoreKey	skey = e->key;
			SavedSummary *saved;

			skey.plan_node_id = -1;
			skey.discriminator = 0;
			saved = hash_search(summaries, &skey, HASH_FIND, NULL);
			if (saved != NULL &&
				hash_search(jp_hotspot_hash, &skey, HASH_FIND, NULL) == NULL)
			{
				if (kept + 2 > jitprof_max_hotspots)
					continue;	/* no room for both */
				entry = hash_search(jp_hotspot_hash, &skey, HASH_ENTER_NULL, &found);
				if (entry == NULL)
					break;
				*entry = *saved->entry;
				kept++;
			}
		}

		entry = hash_search(jp_hotspot_hash, &e->key, HASH_ENTER_NULL, &found);
		if (entry == NULL)
			break;
		*entry = *e;
		kept++;
	}

	hash_destroy(summaries);
	pfree(order);
	return n - kept;
}

/*
 * Make a saved plan-node row safe to use (its strings terminated); whether
 * its query's summary row was loaded.
 */
static bool
keep_node(void *row)
{
	JpStoreNodeEntry *e = row;

	e->node_type[JP_NODE_TYPE_LEN - 1] = '\0';
	e->label[JP_LABEL_LEN - 1] = '\0';
	return jp_store_node_query(&e->key) != NULL;
}

/* the same for a saved step row and its function's row */
static bool
keep_step(void *row)
{
	JpStoreStepEntry *e = row;

	e->opcode[JP_OPCODE_LEN - 1] = '\0';
	e->detail[JP_DETAIL_LEN - 1] = '\0';
	e->key.padding = 0;
	return jp_store_step_function(&e->key) != NULL;
}

/*
 * Fill "hash" from the "n" saved rows of "size" bytes each (the key first)
 * that "keep" keeps, the rows that go with the hotspot entries
 * store_fill() loaded, as many as "cap" allows; the rest count in
 * *dropped.  For the plan-node rows (jitprof.max_plan_nodes,
 * plan_nodes_dropped) and the step rows (jitprof.max_steps, steps_dropped).
 */
static void
fill_rows(char *rows, int64 n, Size size, bool (*keep) (void *row),
		  HTAB *hash, int cap, int64 *dropped)
{
	for (int64 i = 0; i < n; i++)
	{
		char	   *row = rows + i * size;
		void	   *entry;
		bool		found;

		if (!keep(row))
			continue;			/* gone with its owner */
		if (hash_get_num_entries(hash) >= cap ||
			(entry = hash_search(hash, row, HASH_ENTER_NULL, &found)) == NULL)
		{
			(*dropped)++;
			continue;
		}
		memcpy(entry, row, size);
	}
}

/*
 * Report a saved statistics file that cannot be used, and remove it.
 * "detail" says why, in full sentences marked with gettext_noop.
 */
static void
store_file_bad(const char *detail)
{
	ereport(WARNING,
			(errmsg("ignoring jitprof statistics file \"%s\" because it is corrupt or was written by another version of jitprof",
					STORE_FILE),
			 errdetail_internal("%s", _(detail))));
	unlink(STORE_FILE);
}

/*
 * Remove the temporary file of a save that did not finish (the postmaster
 * was killed while writing it), and say so: the statistics it was writing
 * are lost.  Only the postmaster writes it, at shutdown, so any regular file
 * there at start is such a leftover; anything else there is not jitprof's,
 * and the next save replaces it.  Returns whether there was one.
 */
static bool
remove_interrupted_save(void)
{
	struct stat st;

	if (lstat(STORE_TMP_FILE, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	if (unlink(STORE_TMP_FILE) != 0)
	{
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not remove incomplete jitprof statistics file \"%s\": %m",
						STORE_TMP_FILE)));
		return false;
	}
	return true;
}

/*
 * Open the saved statistics file for jp_store_load, or return -1 after
 * saying why not (a missing file is not worth a word).  It is opened without
 * following symbolic links and without blocking (a FIFO there would
 * otherwise block start-up until someone writes to it), and must be a
 * regular file; *st is its status.  "interrupted": a save's temporary file
 * was found and removed (remove_interrupted_save), which is logged here.
 */
static int
store_file_open(bool interrupted, struct stat *st)
{
	int			fd;
	int			open_errno;

	fd = OpenTransientFile(STORE_FILE,
						   O_RDONLY | O_NONBLOCK | O_NOFOLLOW | PG_BINARY);
	open_errno = errno;
	/* jitprof.stat is there only if the last start did not load it */
	if (interrupted)
		ereport(LOG,
				(errmsg("removed incomplete jitprof statistics file \"%s\" left by an interrupted save",
						STORE_TMP_FILE),
				 fd < 0 ?
				 errdetail("The statistics the server held when it last stopped were lost. Hotspot statistics start empty.") :
				 errdetail("The statistics the server held when it last stopped were lost. Hotspot statistics are read from the older file \"%s\".",
						   STORE_FILE)));
	if (fd < 0)
	{
		errno = open_errno;
		if (errno == ELOOP)
			ereport(WARNING,
					(errmsg("ignoring jitprof statistics file \"%s\" because it is a symbolic link",
							STORE_FILE),
					 errdetail("Hotspot statistics start empty."),
					 errhint("Remove the symbolic link.")));
		else if (errno != ENOENT)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not open jitprof statistics file \"%s\": %m",
							STORE_FILE),
					 errdetail("Hotspot statistics start empty.")));
		return -1;
	}
	if (fstat(fd, st) != 0)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not stat jitprof statistics file \"%s\": %m",
						STORE_FILE),
				 errdetail("Hotspot statistics start empty.")));
		CloseTransientFile(fd);
		return -1;
	}
	if (!S_ISREG(st->st_mode))
	{
		ereport(WARNING,
				(errmsg("ignoring jitprof statistics file \"%s\" because it is not a regular file",
						STORE_FILE),
				 errdetail("Hotspot statistics start empty."),
				 errhint("Remove \"%s\"; jitprof writes a regular file there at the next clean shutdown.",
						 STORE_FILE)));
		CloseTransientFile(fd);
		return -1;
	}

	return fd;
}

/*
 * Read and check the header of the saved statistics file, open as fd with
 * status *st.  This is where the file's own numbers are trusted, so it is
 * the dangerous part of loading: it returns true only when the header is
 * this version's, with this build's entry sizes, and the file's size is
 * exactly what its counts announce, so that the caller may size its
 * allocations and reads from them.  Otherwise the file has been reported
 * (a WARNING) and removed, and it returns false.
 */
static bool
store_file_read_header(int fd, const struct stat *st, StoreFileHeader *header)
{
	uint64		expected;

	/*
	 * A file of an earlier format starts with the same magic number and
	 * version field; its header may be shorter than today's.
	 */
	memset(header, 0, sizeof(*header));
	if (st->st_size < (off_t) offsetof(StoreFileHeader, entry_size) ||
		!jp_read_all(fd, header, offsetof(StoreFileHeader, entry_size)))
	{
		store_file_bad(gettext_noop("The file is shorter than its header. It has been removed, and hotspot statistics start empty."));
		return false;
	}
	if (header->magic == STORE_MAGIC && header->version < STORE_VERSION)
	{
		ereport(WARNING,
				(errmsg("ignoring jitprof statistics file \"%s\" because it is corrupt or was written by another version of jitprof",
						STORE_FILE),
				 errdetail("The file has format %u, written by an earlier version of jitprof, and this version reads format %d only. It has been removed, and hotspot statistics start empty.",
						   header->version, STORE_VERSION)));
		unlink(STORE_FILE);
		return false;
	}
	if (st->st_size < (off_t) sizeof(*header) ||
		!jp_read_all(fd, (char *) header + offsetof(StoreFileHeader, entry_size),
					 sizeof(*header) - offsetof(StoreFileHeader, entry_size)))
	{
		store_file_bad(gettext_noop("The file is shorter than its header. It has been removed, and hotspot statistics start empty."));
		return false;
	}
	if (header->magic != STORE_MAGIC ||
		header->version != STORE_VERSION ||
		header->entry_size != sizeof(JpStoreEntry) ||
		header->max_symbol != JP_SYMBOL_LEN ||
		header->node_entry_size != sizeof(JpStoreNodeEntry) ||
		header->step_entry_size != sizeof(JpStoreStepEntry))
	{
		store_file_bad(gettext_noop("The file header has the wrong magic number, version or entry size. It has been removed, and hotspot statistics start empty."));
		return false;
	}

	/* trust the entry count only if the file's size agrees with it */
	expected = sizeof(*header) + sizeof(StoreFileCounters) + sizeof(pg_crc32c);
	if (header->nentries < 0 || header->nnodes < 0 || header->nsteps < 0 ||
		header->nentries > (int64) ((PG_INT64_MAX / 4 - expected) / sizeof(JpStoreEntry)) ||
		header->nnodes > (int64) ((PG_INT64_MAX / 4) / sizeof(JpStoreNodeEntry)) ||
		header->nsteps > (int64) ((PG_INT64_MAX / 4) / sizeof(JpStoreStepEntry)) ||
		(uint64) st->st_size != expected +
		(uint64) header->nentries * sizeof(JpStoreEntry) +
		(uint64) header->nnodes * sizeof(JpStoreNodeEntry) +
		(uint64) header->nsteps * sizeof(JpStoreStepEntry))
	{
		ereport(WARNING,
				(errmsg("ignoring jitprof statistics file \"%s\" because it is corrupt or was written by another version of jitprof",
						STORE_FILE),
				 errdetail("The file is %lld bytes long, which does not match the %lld entries its header announces. It has been removed, and hotspot statistics start empty.",
						   (long long) st->st_size, (long long) header->nentries)));
		unlink(STORE_FILE);
		return false;
	}

	return true;
}

/*
 * Read the file saved at the last clean shutdown.  Runs in the postmaster
 * before any backend exists, so no lock is needed.  Anything wrong with the
 * file is a WARNING and an empty store, never an error and never a wait
 * (store_file_open); nothing is allocated from the header before
 * store_file_read_header has checked it against the file's size.
 */
void
jp_store_load(void)
{
	int			fd;
	struct stat st;
	StoreFileHeader header;
	pg_crc32c	crc;
	pg_crc32c	file_crc;
	JpStoreEntry *entries = NULL;
	JpStoreNodeEntry *nodes = NULL;
	JpStoreStepEntry *steps = NULL;
	StoreFileCounters saved;
	int64		dropped;

	fd = store_file_open(remove_interrupted_save(), &st);
	if (fd < 0)
		return;
	if (!store_file_read_header(fd, &st, &header))
		goto done;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &header, sizeof(header));
	if (!jp_read_all(fd, &saved, sizeof(saved)))
	{
		store_file_bad(gettext_noop("The file could not be read completely. It has been removed, and hotspot statistics start empty."));
		goto done;
	}
	COMP_CRC32C(crc, &saved, sizeof(saved));

	entries = palloc_extended(Max(header.nentries, 1) * sizeof(JpStoreEntry),
							  MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	nodes = palloc_extended(Max(header.nnodes, 1) * sizeof(JpStoreNodeEntry),
							MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	steps = palloc_extended(Max(header.nsteps, 1) * sizeof(JpStoreStepEntry),
							MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (entries == NULL || nodes == NULL || steps == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("ignoring jitprof statistics file \"%s\" because there is not enough memory to read it",
						STORE_FILE),
				 errdetail("The file has been removed, and hotspot statistics start empty.")));
		unlink(STORE_FILE);
		goto done;
	}
	if (!jp_read_all(fd, entries, header.nentries * sizeof(JpStoreEntry)) ||
		!jp_read_all(fd, nodes, header.nnodes * sizeof(JpStoreNodeEntry)) ||
		!jp_read_all(fd, steps, header.nsteps * sizeof(JpStoreStepEntry)) ||
		!jp_read_all(fd, &file_crc, sizeof(file_crc)))
	{
		store_file_bad(gettext_noop("The file could not be read completely. It has been removed, and hotspot statistics start empty."));
		goto done;
	}
	COMP_CRC32C(crc, entries, header.nentries * sizeof(JpStoreEntry));
	COMP_CRC32C(crc, nodes, header.nnodes * sizeof(JpStoreNodeEntry));
	COMP_CRC32C(crc, steps, header.nsteps * sizeof(JpStoreStepEntry));
	FIN_CRC32C(crc);
	if (!EQ_CRC32C(crc, file_crc))
	{
		store_file_bad(gettext_noop("The file's checksum does not match its contents. It has been removed, and hotspot statistics start empty."));
		goto done;
	}

	jp_store_header->health = saved.health;
	jp_store_header->evictions = saved.evictions;
	jp_store_header->stats_reset = saved.stats_reset;
	jp_store_header->steps_dropped = saved.steps_dropped;
	dropped = store_fill(entries, header.nentries);
	fill_rows((char *) nodes, header.nnodes, sizeof(JpStoreNodeEntry),
			  keep_node, jp_node_hash, jitprof_max_plan_nodes,
			  &jp_store_header->health.plan_nodes_dropped);
	fill_rows((char *) steps, header.nsteps, sizeof(JpStoreStepEntry),
			  keep_step, jp_step_hash, jitprof_max_steps,
			  &jp_store_header->steps_dropped);
	if (dropped > 0)
	{
		jp_store_header->evictions += dropped;
		ereport(LOG,
				(errmsg("dropped %lld of %lld saved jitprof hotspot entries because jitprof.max_hotspots is %d",
						(long long) dropped, (long long) header.nentries,
						jitprof_max_hotspots),
				 errdetail("The entries with the fewest samples were dropped, as eviction would have done, and are counted as evictions.")));
	}
	unlink(STORE_FILE);

done:
	if (entries)
		pfree(entries);
	if (nodes)
		pfree(nodes);
	if (steps)
		pfree(steps);
	CloseTransientFile(fd);
}

#define SAVE_BUF_SIZE	(64 * 1024)

/*
 * Append every entry of "hash" (entry_size bytes each) to the statistics
 * file and to its checksum, through buf (SAVE_BUF_SIZE bytes), whose first
 * *len bytes are still to be written; the tail stays there for the caller.
 * False if a write failed (errno says why).
 */
static bool
save_table(int fd, HTAB *hash, Size entry_size, char *buf, size_t *len,
		   pg_crc32c *crc)
{
	HASH_SEQ_STATUS status;
	void	   *entry;

	hash_seq_init(&status, hash);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		if (*len + entry_size > SAVE_BUF_SIZE)
		{
			if (!jp_write_all(fd, buf, *len))
			{
				hash_seq_term(&status);
				return false;
			}
			*len = 0;
		}
		COMP_CRC32C(*crc, entry, entry_size);
		memcpy(buf + *len, entry, entry_size);
		*len += entry_size;
	}
	return true;
}

/*
 * Write the store at postmaster shutdown.  Only a clean shutdown (code 0)
 * writes; after a crash the shared memory may be inconsistent.  The
 * temporary file is created afresh (O_EXCL, no symbolic links), so that
 * nothing left at its path, a FIFO say, can make shutdown wait.
 */
void
jp_store_save(int code, Datum arg)
{
	int			fd;
	char		buf[SAVE_BUF_SIZE];
	size_t		len = 0;
	StoreFileHeader header;
	StoreFileCounters counters;
	pg_crc32c	crc;

	if (code != 0 || !jitprof_save || jp_store_header == NULL)
		return;

	(void) unlink(STORE_TMP_FILE);
	fd = OpenTransientFilePerm(STORE_TMP_FILE,
							   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | PG_BINARY,
							   pg_file_create_mode);
	if (fd < 0)
		goto error;

	memset(&header, 0, sizeof(header));
	header.magic = STORE_MAGIC;
	header.version = STORE_VERSION;
	header.entry_size = sizeof(JpStoreEntry);
	header.max_symbol = JP_SYMBOL_LEN;
	header.nentries = hash_get_num_entries(jp_hotspot_hash);
	header.node_entry_size = sizeof(JpStoreNodeEntry);
	header.nnodes = hash_get_num_entries(jp_node_hash);
	header.step_entry_size = sizeof(JpStoreStepEntry);
	header.nsteps = hash_get_num_entries(jp_step_hash);

	memset(&counters, 0, sizeof(counters));
	counters.health = jp_store_header->health;
	counters.evictions = jp_store_header->evictions;
	counters.stats_reset = jp_store_header->stats_reset;
	counters.steps_dropped = jp_store_header->steps_dropped;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &header, sizeof(header));
	COMP_CRC32C(crc, &counters, sizeof(counters));
	if (!jp_write_all(fd, &header, sizeof(header)) ||
		!jp_write_all(fd, &counters, sizeof(counters)))
		goto error;
	if (!save_table(fd, jp_hotspot_hash, sizeof(JpStoreEntry), buf, &len, &crc) ||
		!save_table(fd, jp_node_hash, sizeof(JpStoreNodeEntry), buf, &len, &crc) ||
		!save_table(fd, jp_step_hash, sizeof(JpStoreStepEntry), buf, &len, &crc))
		goto error;
	FIN_CRC32C(crc);
	if (!jp_write_all(fd, buf, len) ||
		!jp_write_all(fd, &crc, sizeof(crc)))
		goto error;
	if (CloseTransientFile(fd) != 0)
	{
		fd = -1;
		goto error;
	}
	jp_replace_file(STORE_TMP_FILE, STORE_FILE);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write jitprof statistics file \"%s\": %m",
					STORE_TMP_FILE)));
	if (fd >= 0)
		CloseTransientFile(fd);
	unlink(STORE_TMP_FILE);
}
