/*-------------------------------------------------------------------------
 *
 * store.c
 *	  Shared-memory store of hotspot statistics, saved across clean restarts.
 *
 * A fixed-size shared hash table holds one entry per (user, database, query
 * ID, plan node, JIT function) and one summary entry per query.  Backends
 * add to it once per JIT execution (jp_store_flush, sampler_profile.c);
 * the SQL functions in hotspots.c read it.
 *
 * Locking: one LWLock protects the hash table, the health counters and
 * stats_reset.  Flushing and resetting take it exclusively, readers take it
 * shared, only long enough to copy the entries out (jp_store_copy).
 * Flushes happen once per JIT execution (and every jitprof.flush_interval
 * of a long one), so a single lock is cheap enough; the sampler's signal
 * handler never comes here.
 *
 * A second and a third table, under the same lock, hold the plan-node rows
 * (one per plan node of a query, jitprof.max_plan_nodes of them) and the
 * step rows (one per expression step of a JIT function that was sampled,
 * jitprof.max_steps of them).  A plan-node row lives only as long as its
 * query's summary row, a step row only as long as its function's row, and
 * a step row is created only when its function's row exists: so a step
 * never claims more samples than its function, nor a function more than its
 * query.  Rows that find no room are counted (plan_nodes_dropped,
 * steps_dropped), never made room for.
 *
 * Each table has its own named shared-memory allocation ("jitprof
 * hotspots", "jitprof plan nodes", "jitprof steps"; the counters and the
 * lock's address are "jitprof store header"), sized at start for its cap,
 * so that pg_shmem_allocations shows what each costs.  A table's entries are
 * taken from it as the table grows, so the pages are touched only when used.
 *
 * Capacity is jitprof.max_hotspots entries.  When a new entry does not fit,
 * the 5% of entries with the fewest samples (inclusive samples for a
 * function, the query's samples for a query's summary row) are evicted, the
 * least recently seen first among equals, and the evictions counter says how
 * many went.
 *
 * With jitprof.save on, the postmaster writes the store to
 * pg_stat/jitprof.stat at clean shutdown (to jitprof.stat.tmp, then renamed
 * over it) and reads it back (then removes it) at start.  The file has a
 * magic number, a format version, the entry size and a CRC-32C of
 * everything; the counters, then the hotspot, plan-node and step rows follow
 * the header, all data and no pointer.  It is opened without following
 * symbolic links and without blocking, must be a regular file, and its size
 * must match the entry count of its header before anything is allocated; a
 * file failing any check is ignored with a WARNING.  When the file holds
 * more entries than jitprof.max_hotspots (the setting was lowered), the
 * entries eviction would keep are loaded, each query's summary row with its
 * functions, and the rest are counted as evictions and logged.  After a
 * crash, shared memory is reinitialised and the store starts empty: nothing
 * is written on a crash, and the last file was removed when it was loaded,
 * as pg_stat_statements does with its own.  A postmaster killed while saving
 * is such a crash: the jitprof.stat.tmp it leaves is removed at the next
 * start, with one LOG line saying that the statistics were lost.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hashfn.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "store/store.h"

#define STORE_FILE		PGSTAT_STAT_PERMANENT_DIRECTORY "/jitprof.stat"
#define STORE_TMP_FILE	STORE_FILE ".tmp"
#define STORE_MAGIC		0x4A505354	/* "JPST" */
#define STORE_VERSION	4
/* version 3 files (jitprof 1.1) have no step rows, and a shorter header */
#define STORE_VERSION_NO_STEPS 3

/* the share of entries evicted when the table is full */
#define EVICT_FRACTION	0.05

typedef struct StoreShared
{
	LWLock	   *lock;
	JpSamplerHealth health;
	int64		evictions;
	TimestampTz stats_reset;
	int64		steps_dropped;	/* step rows that found no room */
} StoreShared;

/*
 * The counters of StoreShared as a file holds them: data only.  Files that
 * jitprof 1.1 and earlier builds of format 4 wrote hold the lock's address
 * in "reserved" (they wrote StoreShared whole).  It was never read back, so
 * the layout and the format number stay, and either kind of file loads in
 * either build.
 */
typedef struct StoreFileCounters
{
	uint64		reserved;		/* zero */
	JpSamplerHealth health;
	int64		evictions;
	TimestampTz stats_reset;
	/* added in file version 4: keep it last (see store_load) */
	int64		steps_dropped;
} StoreFileCounters;

/* StoreFileCounters as a version 3 file has it */
#define STORE_COUNTERS_SIZE_V3	offsetof(StoreFileCounters, steps_dropped)

/*
 * One shared hash table and everything it will ever use, in one named
 * shared-memory allocation, so that pg_shmem_allocations shows what each
 * table costs.  (ShmemInitHash names only a table's header and directory:
 * its buckets and entries come from ShmemAlloc and show as <anonymous>.)
 * The table's header follows this struct; dynahash takes the rest, through
 * table_alloc, as the table grows.
 */
typedef struct StoreTable
{
	Size		size;			/* of the whole allocation */
	Size		used;			/* handed out so far, this struct included */
} StoreTable;

/*
 * A table starts with TABLE_FIRST_ENTRIES entries and grows by dynahash's
 * chunks of 32 to 63 entries, so its last chunk may end up to 62 entries
 * past its cap: its allocation has room for TABLE_SPARE_ENTRIES more.
 */
#define TABLE_FIRST_ENTRIES	32
#define TABLE_SPARE_ENTRIES	64

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
	/* added in file version 4: keep them last (see store_load) */
	uint32		step_entry_size;
	uint32		padding2;
	int64		nsteps;			/* step rows after the plan-node rows */
} StoreFileHeader;

/* StoreFileHeader as a version 3 file has it */
#define STORE_HEADER_SIZE_V3	offsetof(StoreFileHeader, step_entry_size)

int			jitprof_max_hotspots = 5000;
int			jitprof_max_plan_nodes = 20000;
int			jitprof_max_steps = 20000;
bool		jitprof_save = true;

static StoreShared *store = NULL;
static HTAB *store_hash = NULL;
static HTAB *node_hash = NULL;	/* plan-node rows, under the same lock */
static HTAB *step_hash = NULL;	/* step rows, under the same lock */
static StoreTable *store_table = NULL;	/* where store_hash lives */
static StoreTable *node_table = NULL;
static StoreTable *step_table = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static int	keep_cmp(const void *a, const void *b);
static void remove_orphan_nodes(void);
static void remove_orphan_steps(void);
static inline JpStoreEntry *step_function(const JpStoreStepKey *skey);
static inline JpStoreEntry *node_query(const JpStoreNodeKey *nkey);

/*
 * The shared memory a table of at most max_entries entries needs: its
 * header, directory, bucket segments and entries as dynahash sizes them
 * (hash_estimate_size), for the entries it may take beyond its cap too.
 */
static Size
table_size(long max_entries, Size entrysize)
{
	return add_size(MAXALIGN(sizeof(StoreTable)),
					hash_estimate_size(max_entries + TABLE_SPARE_ENTRIES,
									   entrysize));
}

/* ShmemInitStruct rounds every allocation up to a cache line */
static Size
store_memsize(void)
{
	Size		size = CACHELINEALIGN(sizeof(StoreShared));

	size = add_size(size, CACHELINEALIGN(table_size(jitprof_max_hotspots,
													sizeof(JpStoreEntry))));
	size = add_size(size, CACHELINEALIGN(table_size(jitprof_max_plan_nodes,
													sizeof(JpStoreNodeEntry))));
	size = add_size(size, CACHELINEALIGN(table_size(jitprof_max_steps,
													sizeof(JpStoreStepEntry))));
	return size;
}

static void
store_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(store_memsize());
	RequestNamedLWLockTranche("jitprof", 1);
}

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
	qsort(order, n, sizeof(JpStoreEntry *), keep_cmp);

	for (int64 i = 0; i < n && kept < jitprof_max_hotspots; i++)
	{
		JpStoreEntry *e = order[i];
		JpStoreEntry *entry;
		bool		found;

		if (hash_search(store_hash, &e->key, HASH_FIND, NULL) != NULL)
			continue;			/* a summary row taken with a function */

		if (e->key.discriminator != 0)
		{
			JpStoreKey	skey = e->key;
			SavedSummary *saved;

			skey.plan_node_id = -1;
			skey.discriminator = 0;
			saved = hash_search(summaries, &skey, HASH_FIND, NULL);
			if (saved != NULL &&
				hash_search(store_hash, &skey, HASH_FIND, NULL) == NULL)
			{
				if (kept + 2 > jitprof_max_hotspots)
					continue;	/* no room for both */
				entry = hash_search(store_hash, &skey, HASH_ENTER_NULL, &found);
				if (entry == NULL)
					break;
				*entry = *saved->entry;
				kept++;
			}
		}

		entry = hash_search(store_hash, &e->key, HASH_ENTER_NULL, &found);
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
 * Load the saved plan-node rows of the queries store_fill() kept, as many
 * as jitprof.max_plan_nodes allows (the rest count as plan_nodes_dropped).
 */
static void
fill_nodes(JpStoreNodeEntry *nodes, int64 n)
{
	for (int64 i = 0; i < n; i++)
	{
		JpStoreNodeEntry *e = &nodes[i];
		JpStoreNodeEntry *entry;
		bool		found;

		e->node_type[JP_NODE_TYPE_LEN - 1] = '\0';
		e->label[JP_LABEL_LEN - 1] = '\0';
		if (node_query(&e->key) == NULL)
			continue;			/* gone with its query */
		if (hash_get_num_entries(node_hash) >= jitprof_max_plan_nodes ||
			(entry = hash_search(node_hash, &e->key, HASH_ENTER_NULL,
								 &found)) == NULL)
		{
			store->health.plan_nodes_dropped++;
			continue;
		}
		*entry = *e;
	}
}

/*
 * Fill the step table from a saved file's step rows: those whose function
 * was loaded, as many as jitprof.max_steps allows (the rest count as
 * steps_dropped).
 */
static void
fill_steps(JpStoreStepEntry *steps, int64 n)
{
	for (int64 i = 0; i < n; i++)
	{
		JpStoreStepEntry *e = &steps[i];
		JpStoreStepEntry *entry;
		bool		found;

		e->opcode[JP_OPCODE_LEN - 1] = '\0';
		e->detail[JP_DETAIL_LEN - 1] = '\0';
		e->key.padding = 0;
		if (step_function(&e->key) == NULL)
			continue;			/* gone with its function */
		if (hash_get_num_entries(step_hash) >= jitprof_max_steps ||
			(entry = hash_search(step_hash, &e->key, HASH_ENTER_NULL,
								 &found)) == NULL)
		{
			store->steps_dropped++;
			continue;
		}
		*entry = *e;
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

/* read() exactly len bytes */
static bool
read_all(int fd, void *buf, size_t len)
{
	char	   *p = buf;

	while (len > 0)
	{
		ssize_t		n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= n;
	}
	return true;
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
 * Read the file saved at the last clean shutdown.  Runs in the postmaster
 * before any backend exists, so no lock is needed.  Anything wrong with the
 * file is a WARNING and an empty store, never an error and never a wait:
 * the file is opened without following symbolic links and without blocking
 * (a FIFO there would otherwise block start-up until someone writes to it),
 * and must be a regular file whose size is exactly what its header
 * announces before anything is allocated from that header.
 */
static void
store_load(void)
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
	size_t		header_size;
	size_t		counters_size;
	uint64		expected;
	int64		dropped;
	bool		interrupted = remove_interrupted_save();
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
		return;
	}
	if (fstat(fd, &st) != 0)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not stat jitprof statistics file \"%s\": %m",
						STORE_FILE),
				 errdetail("Hotspot statistics start empty.")));
		CloseTransientFile(fd);
		return;
	}
	if (!S_ISREG(st.st_mode))
	{
		ereport(WARNING,
				(errmsg("ignoring jitprof statistics file \"%s\" because it is not a regular file",
						STORE_FILE),
				 errdetail("Hotspot statistics start empty."),
				 errhint("Remove \"%s\"; jitprof writes a regular file there at the next clean shutdown.",
						 STORE_FILE)));
		CloseTransientFile(fd);
		return;
	}

	/* a version 3 file's header is the first part of today's */
	memset(&header, 0, sizeof(header));
	if (st.st_size < (off_t) STORE_HEADER_SIZE_V3 ||
		!read_all(fd, &header, STORE_HEADER_SIZE_V3))
	{
		store_file_bad(gettext_noop("The file is shorter than its header. It has been removed, and hotspot statistics start empty."));
		goto done;
	}
	header_size = STORE_HEADER_SIZE_V3;
	counters_size = STORE_COUNTERS_SIZE_V3;
	if (header.magic == STORE_MAGIC && header.version == STORE_VERSION)
	{
		header_size = sizeof(header);
		counters_size = sizeof(StoreFileCounters);
		if (st.st_size < (off_t) header_size ||
			!read_all(fd, (char *) &header + STORE_HEADER_SIZE_V3,
					  header_size - STORE_HEADER_SIZE_V3))
		{
			store_file_bad(gettext_noop("The file is shorter than its header. It has been removed, and hotspot statistics start empty."));
			goto done;
		}
	}
	if (header.magic != STORE_MAGIC ||
		(header.version != STORE_VERSION &&
		 header.version != STORE_VERSION_NO_STEPS) ||
		header.entry_size != sizeof(JpStoreEntry) ||
		header.max_symbol != JP_SYMBOL_LEN ||
		header.node_entry_size != sizeof(JpStoreNodeEntry) ||
		(header.version == STORE_VERSION &&
		 header.step_entry_size != sizeof(JpStoreStepEntry)))
	{
		store_file_bad(gettext_noop("The file header has the wrong magic number, version or entry size. It has been removed, and hotspot statistics start empty."));
		goto done;
	}

	/* trust the entry count only if the file's size agrees with it */
	expected = header_size + counters_size + sizeof(pg_crc32c);
	if (header.nentries < 0 || header.nnodes < 0 || header.nsteps < 0 ||
		header.nentries > (int64) ((PG_INT64_MAX / 4 - expected) / sizeof(JpStoreEntry)) ||
		header.nnodes > (int64) ((PG_INT64_MAX / 4) / sizeof(JpStoreNodeEntry)) ||
		header.nsteps > (int64) ((PG_INT64_MAX / 4) / sizeof(JpStoreStepEntry)) ||
		(uint64) st.st_size != expected +
		(uint64) header.nentries * sizeof(JpStoreEntry) +
		(uint64) header.nnodes * sizeof(JpStoreNodeEntry) +
		(uint64) header.nsteps * sizeof(JpStoreStepEntry))
	{
		ereport(WARNING,
				(errmsg("ignoring jitprof statistics file \"%s\" because it is corrupt or was written by another version of jitprof",
						STORE_FILE),
				 errdetail("The file is %lld bytes long, which does not match the %lld entries its header announces. It has been removed, and hotspot statistics start empty.",
						   (long long) st.st_size, (long long) header.nentries)));
		unlink(STORE_FILE);
		goto done;
	}

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &header, header_size);
	memset(&saved, 0, sizeof(saved));
	if (!read_all(fd, &saved, counters_size))
	{
		store_file_bad(gettext_noop("The file could not be read completely. It has been removed, and hotspot statistics start empty."));
		goto done;
	}
	COMP_CRC32C(crc, &saved, counters_size);

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
	if (!read_all(fd, entries, header.nentries * sizeof(JpStoreEntry)) ||
		!read_all(fd, nodes, header.nnodes * sizeof(JpStoreNodeEntry)) ||
		!read_all(fd, steps, header.nsteps * sizeof(JpStoreStepEntry)) ||
		!read_all(fd, &file_crc, sizeof(file_crc)))
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

	store->health = saved.health;
	store->evictions = saved.evictions;
	store->stats_reset = saved.stats_reset;
	store->steps_dropped = saved.steps_dropped;
	dropped = store_fill(entries, header.nentries);
	fill_nodes(nodes, header.nnodes);
	fill_steps(steps, header.nsteps);
	if (dropped > 0)
	{
		store->evictions += dropped;
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
static void
store_save(int code, Datum arg)
{
	int			fd;
	struct stat st;
	char		buf[SAVE_BUF_SIZE];
	size_t		len = 0;
	StoreFileHeader header;
	StoreFileCounters counters;
	pg_crc32c	crc;

	if (code != 0 || !jitprof_save || store == NULL)
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
	header.nentries = hash_get_num_entries(store_hash);
	header.node_entry_size = sizeof(JpStoreNodeEntry);
	header.nnodes = hash_get_num_entries(node_hash);
	header.step_entry_size = sizeof(JpStoreStepEntry);
	header.nsteps = hash_get_num_entries(step_hash);

	memset(&counters, 0, sizeof(counters));
	counters.health = store->health;
	counters.evictions = store->evictions;
	counters.stats_reset = store->stats_reset;
	counters.steps_dropped = store->steps_dropped;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &header, sizeof(header));
	COMP_CRC32C(crc, &counters, sizeof(counters));
	if (!jp_write_all(fd, &header, sizeof(header)) ||
		!jp_write_all(fd, &counters, sizeof(counters)))
		goto error;
	if (!save_table(fd, store_hash, sizeof(JpStoreEntry), buf, &len, &crc) ||
		!save_table(fd, node_hash, sizeof(JpStoreNodeEntry), buf, &len, &crc) ||
		!save_table(fd, step_hash, sizeof(JpStoreStepEntry), buf, &len, &crc))
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

	/*
	 * durable_rename() opens and fsyncs what it replaces; a FIFO or other
	 * special file left there (start-up ignored it with a WARNING) would make
	 * it fail, so remove it first.
	 */
	if (lstat(STORE_FILE, &st) == 0 && !S_ISREG(st.st_mode))
		(void) unlink(STORE_FILE);
	(void) durable_rename(STORE_TMP_FILE, STORE_FILE, LOG);
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

/*
 * Hand out "request" bytes of a table's allocation, or NULL when it is used
 * up: dynahash's allocator for that table.  It runs in the postmaster while
 * the table is created and loaded, and then only inside hash_search() when
 * an entry is added, under the store's lock held exclusively, so "used" (in
 * shared memory) needs no lock of its own.  An entry that finds no room is
 * counted by the caller like any other that does not fit.
 */
static void *
table_alloc(StoreTable *table, Size request)
{
	void	   *p;

	request = MAXALIGN(request);
	if (request > table->size - table->used)
		return NULL;
	p = (char *) table + table->used;
	table->used += request;
	return p;
}

/* dynahash's allocator has no argument to say which table: one each */
static void *
store_table_alloc(Size request)
{
	return table_alloc(store_table, request);
}

static void *
node_table_alloc(Size request)
{
	return table_alloc(node_table, request);
}

static void *
step_table_alloc(Size request)
{
	return table_alloc(step_table, request);
}

/*
 * Create (or, in a backend started by EXEC_BACKEND, attach to) the shared
 * hash table "name" in its own named allocation, "*table".  It starts with
 * room for TABLE_FIRST_ENTRIES entries and grows, a bucket and a chunk of
 * entries at a time, up to max_entries: memory the kernel gave zeroed is
 * touched only when used, so start-up does not write a free list through
 * all of it (for the largest caps, 4.7 GB and most of 17 s).
 */
static HTAB *
table_create(const char *name, long max_entries, Size keysize,
			 Size entrysize, HashAllocFunc alloc, StoreTable **table)
{
	Size		size = table_size(max_entries, entrysize);
	int			flags = HASH_ELEM | HASH_BLOBS | HASH_SHARED_MEM |
	HASH_ALLOC | HASH_DIRSIZE;
	HASHCTL		info;
	bool		found;

	*table = ShmemInitStruct(name, size, &found);

	info.keysize = keysize;
	info.entrysize = entrysize;
	/* a shared table's directory cannot grow: sized for the cap */
	info.dsize = info.max_dsize =
		hash_select_dirsize(max_entries + TABLE_SPARE_ENTRIES);
	info.alloc = alloc;
	info.hctl = (HASHHDR *) ((char *) *table + MAXALIGN(sizeof(StoreTable)));
	if (found)
		flags |= HASH_ATTACH;
	else
	{
		(*table)->size = size;
		(*table)->used = MAXALIGN(sizeof(StoreTable)) +
			MAXALIGN(hash_get_shared_size(&info, flags));
	}
	return hash_create(name, TABLE_FIRST_ENTRIES, &info, flags);
}

static void
store_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);

	store = ShmemInitStruct("jitprof store header", sizeof(StoreShared),
							&found);
	if (!found)
	{
		memset(store, 0, sizeof(StoreShared));
		store->lock = &(GetNamedLWLockTranche("jitprof"))->lock;
		store->stats_reset = GetCurrentTimestamp();
	}

	store_hash = table_create("jitprof hotspots", jitprof_max_hotspots,
							  sizeof(JpStoreKey), sizeof(JpStoreEntry),
							  store_table_alloc, &store_table);
	node_hash = table_create("jitprof plan nodes", jitprof_max_plan_nodes,
							 sizeof(JpStoreNodeKey), sizeof(JpStoreNodeEntry),
							 node_table_alloc, &node_table);
	step_hash = table_create("jitprof steps", jitprof_max_steps,
							 sizeof(JpStoreStepKey), sizeof(JpStoreStepEntry),
							 step_table_alloc, &step_table);

	LWLockRelease(AddinShmemInitLock);

	/* the postmaster loads the saved file and saves at shutdown */
	if (!IsUnderPostmaster)
	{
		on_shmem_exit(store_save, (Datum) 0);
		if (!found && jitprof_save)
			store_load();
	}
}

void
jp_store_init(void)
{
	DefineCustomBoolVariable("jitprof.save",
							 "Saves hotspot statistics across server shutdowns.",
							 NULL,
							 &jitprof_save,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	/* a PGC_POSTMASTER setting can only be defined at server start */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("jitprof.max_hotspots",
							"Maximum number of entries in the shared hotspot store.",
							"When the store is full, the 5% of entries with the fewest samples are evicted.",
							&jitprof_max_hotspots,
							5000,
							100,
							1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("jitprof.max_plan_nodes",
							"Maximum number of plan-node rows in the shared plan-node profile.",
							"A query whose plan nodes find no room gets no plan-node rows; they go when the query is evicted.",
							&jitprof_max_plan_nodes,
							20000,
							100,
							10000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("jitprof.max_steps",
							"Maximum number of step rows in the shared expression-step profile.",
							"A step that finds no room is counted in steps_dropped; step rows go when their function is evicted.",
							&jitprof_max_steps,
							20000,
							100,
							10000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = store_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = store_shmem_startup;
}

bool
jp_store_available(void)
{
	return store != NULL && store_hash != NULL && node_hash != NULL &&
		step_hash != NULL;
}

/* ERROR unless the store exists, that is, unless jitprof was preloaded */
void
jp_store_require(void)
{
	if (!jp_store_available())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("jitprof must be loaded via shared_preload_libraries to collect hotspot statistics"),
				 errhint("Add jitprof to shared_preload_libraries in postgresql.conf and restart the server.")));
}

uint32
jp_store_discriminator(const char *symbol)
{
	uint32		h = hash_bytes((const unsigned char *) symbol, strlen(symbol));

	return h == 0 ? 1 : h;
}

/* how much an entry is worth keeping: its samples */
static inline int64
entry_usage(const JpStoreEntry *entry)
{
	return entry->key.discriminator == 0 ? entry->query_samples :
		entry->total_samples;
}

/* qsort comparator: fewest samples first, then least recently seen */
static int
evict_cmp(const void *a, const void *b)
{
	const JpStoreEntry *ea = *(JpStoreEntry *const *) a;
	const JpStoreEntry *eb = *(JpStoreEntry *const *) b;
	int64		ua = entry_usage(ea);
	int64		ub = entry_usage(eb);

	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (ea->last_seen != eb->last_seen)
		return ea->last_seen < eb->last_seen ? -1 : 1;
	return 0;
}

/*
 * qsort comparator: the entries eviction would take last come first, and
 * among equals a query's summary row before its functions' rows.
 */
static int
keep_cmp(const void *a, const void *b)
{
	const JpStoreEntry *ea = *(JpStoreEntry *const *) a;
	const JpStoreEntry *eb = *(JpStoreEntry *const *) b;
	int			cmp = evict_cmp(b, a);

	if (cmp != 0)
		return cmp;
	if ((ea->key.discriminator == 0) != (eb->key.discriminator == 0))
		return ea->key.discriminator == 0 ? -1 : 1;
	return 0;
}

/* the summary row of a plan-node row's query */
static inline JpStoreEntry *
node_query(const JpStoreNodeKey *nkey)
{
	JpStoreKey	key;

	memset(&key, 0, sizeof(key));
	key.userid = nkey->userid;
	key.dbid = nkey->dbid;
	key.queryid = nkey->queryid;
	key.plan_node_id = -1;
	key.discriminator = 0;
	return hash_search(store_hash, &key, HASH_FIND, NULL);
}

/*
 * Plan-node rows go with their query's summary row.  Caller holds the lock
 * exclusively.
 */
static void
remove_orphan_nodes(void)
{
	HASH_SEQ_STATUS status;
	JpStoreNodeEntry *n;

	hash_seq_init(&status, node_hash);
	while ((n = hash_seq_search(&status)) != NULL)
		if (node_query(&n->key) == NULL)
			hash_search(node_hash, &n->key, HASH_REMOVE, NULL);
}

/* the function row a step row belongs to */
static inline JpStoreEntry *
step_function(const JpStoreStepKey *skey)
{
	JpStoreKey	key;

	memset(&key, 0, sizeof(key));
	key.userid = skey->userid;
	key.dbid = skey->dbid;
	key.queryid = skey->queryid;
	key.plan_node_id = skey->plan_node_id;
	key.discriminator = skey->discriminator;
	return hash_search(store_hash, &key, HASH_FIND, NULL);
}

/*
 * Step rows go with their function's row.  Caller holds the lock
 * exclusively.
 */
static void
remove_orphan_steps(void)
{
	HASH_SEQ_STATUS status;
	JpStoreStepEntry *e;

	if (hash_get_num_entries(step_hash) == 0)
		return;
	hash_seq_init(&status, step_hash);
	while ((e = hash_seq_search(&status)) != NULL)
		if (step_function(&e->key) == NULL)
			hash_search(step_hash, &e->key, HASH_REMOVE, NULL);
}

/*
 * Add one flush's step counts to the step rows.  A row is made only for a
 * function whose row exists (it was just added to), so that a step's
 * samples are always part of its function's.  Caller holds the lock
 * exclusively.
 */
static void
flush_steps(Oid userid, Oid dbid, int64 queryid, const JpStoreSteps *steps)
{
	for (int i = 0; i < steps->ndeltas; i++)
	{
		const JpStoreStepDelta *d = &steps->deltas[i];
		JpStoreStepKey key;
		JpStoreStepEntry *e;
		bool		found;

		memset(&key, 0, sizeof(key));
		key.userid = userid;
		key.dbid = dbid;
		key.queryid = queryid;
		key.plan_node_id = d->origin->plan_node_id;
		key.discriminator = jp_store_discriminator(d->origin->symbol);
		key.step = d->step;

		e = hash_search(step_hash, &key, HASH_FIND, NULL);
		if (e == NULL)
		{
			if (step_function(&key) == NULL ||
				hash_get_num_entries(step_hash) >= jitprof_max_steps ||
				(e = hash_search(step_hash, &key, HASH_ENTER_NULL,
								 &found)) == NULL)
			{
				store->steps_dropped++;
				continue;
			}
			memset((char *) e + sizeof(JpStoreStepKey), 0,
				   sizeof(JpStoreStepEntry) - sizeof(JpStoreStepKey));
			if (d->label != NULL)
			{
				strlcpy(e->opcode, d->label->opcode, JP_OPCODE_LEN);
				strlcpy(e->detail, d->label->detail, JP_DETAIL_LEN);
			}
		}
		e->self_samples += d->self_samples;
		e->total_samples += d->total_samples;
	}
}

/* Make room for new entries.  Caller holds the lock exclusively. */
static void
evict_entries(void)
{
	HASH_SEQ_STATUS status;
	JpStoreEntry **all;
	JpStoreEntry *entry;
	long		n = 0;
	long		nvictims;

	all = palloc_extended(hash_get_num_entries(store_hash) * sizeof(JpStoreEntry *),
						  MCXT_ALLOC_NO_OOM);
	if (all == NULL)
		return;
	hash_seq_init(&status, store_hash);
	while ((entry = hash_seq_search(&status)) != NULL)
		all[n++] = entry;
	qsort(all, n, sizeof(JpStoreEntry *), evict_cmp);
	nvictims = Max(1, (long) (n * EVICT_FRACTION));
	nvictims = Min(nvictims, n);
	for (long i = 0; i < nvictims; i++)
		hash_search(store_hash, &all[i]->key, HASH_REMOVE, NULL);
	store->evictions += nvictims;
	pfree(all);
	remove_orphan_nodes();
	remove_orphan_steps();
}

static JpStoreEntry *
find_or_add(const JpStoreKey *key, TimestampTz now, bool add)
{
	JpStoreEntry *entry;
	bool		found;

	entry = hash_search(store_hash, key, HASH_FIND, NULL);
	if (entry != NULL || !add)
		return entry;
	if (hash_get_num_entries(store_hash) >= jitprof_max_hotspots)
		evict_entries();
	entry = hash_search(store_hash, key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
		return NULL;
	if (!found)
	{
		memset((char *) entry + sizeof(JpStoreKey), 0,
			   sizeof(JpStoreEntry) - sizeof(JpStoreKey));
		entry->first_seen = now;
	}
	return entry;
}

/*
 * Add one flush's plan-node counts to the query's plan-node rows, and its
 * plan's shape where the rows have none.  A query gets rows for all the
 * nodes of a flush or none (plan_nodes_dropped counts the rows that found
 * no room), so that its node rows never claim more than they saw.  Caller
 * holds the lock exclusively, and the query's summary row exists.
 */
static void
flush_nodes(Oid userid, Oid dbid, int64 queryid, const JpStoreNodes *nodes)
{
	JpStoreNodeKey key;
	int			missing = 0;

	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;

	/* room for every row this flush needs? */
	for (int i = 0; i < nodes->ndeltas; i++)
	{
		key.plan_node_id = nodes->deltas[i].plan_node_id;
		if (hash_search(node_hash, &key, HASH_FIND, NULL) == NULL)
			missing++;
	}
	for (int i = 0; i < nodes->nshape; i++)
	{
		key.plan_node_id = nodes->shape[i].plan_node_id;
		if (hash_search(node_hash, &key, HASH_FIND, NULL) == NULL)
			missing++;
	}
	if (missing > 0 &&
		hash_get_num_entries(node_hash) + missing > jitprof_max_plan_nodes)
	{
		store->health.plan_nodes_dropped += missing;
		return;
	}

	for (int i = 0; i < nodes->nshape; i++)
	{
		const JpNodeShape *sh = &nodes->shape[i];
		JpStoreNodeEntry *n;
		bool		found;

		key.plan_node_id = sh->plan_node_id;
		n = hash_search(node_hash, &key, HASH_ENTER_NULL, &found);
		if (n == NULL)
			continue;
		if (!found)
			memset((char *) n + sizeof(JpStoreNodeKey), 0,
				   sizeof(JpStoreNodeEntry) - sizeof(JpStoreNodeKey));
		if (!n->has_shape)
		{
			n->has_shape = true;
			n->parent = sh->parent;
			strlcpy(n->node_type, sh->node_type, JP_NODE_TYPE_LEN);
			strlcpy(n->label, sh->label, JP_LABEL_LEN);
		}
	}
	for (int i = 0; i < nodes->ndeltas; i++)
	{
		const JpStoreNodeDelta *d = &nodes->deltas[i];
		JpStoreNodeEntry *n;
		bool		found;

		key.plan_node_id = d->plan_node_id;
		n = hash_search(node_hash, &key, HASH_ENTER_NULL, &found);
		if (n == NULL)
		{
			store->health.plan_nodes_dropped++;
			continue;
		}
		if (!found)
		{
			memset((char *) n + sizeof(JpStoreNodeKey), 0,
				   sizeof(JpStoreNodeEntry) - sizeof(JpStoreNodeKey));
			n->parent = -1;
		}
		n->self_samples += d->self_samples;
		n->jit_self_samples += d->jit_self_samples;
		n->jit_compile_samples += d->jit_compile_samples;
	}
}

/*
 * Add what one backend counted for one execution of query "queryid" since
 * its last flush (or a parallel worker's share of it) to the store.
 * "deltas" are the JIT functions that were compiled or sampled meanwhile:
 * the execution's own and those of statements nested in it, all stored
 * under "queryid" so that a query's functions add up within its samples.
 * "count_execution" counts one execution, creating the query's row if need
 * be, so that executions agree with pg_stat_statements' calls.
 */
void
jp_store_flush(Oid userid, Oid dbid, int64 queryid, bool count_execution,
			   int64 query_samples, const JpStoreDelta *deltas, int ndeltas,
			   const JpSamplerHealth *health, const JpStoreNodes *nodes,
			   const JpStoreSteps *steps)
{
	TimestampTz now = GetCurrentTimestamp();
	JpStoreKey	key;
	JpStoreEntry *entry;

	if (!jp_store_available())
		return;

	LWLockAcquire(store->lock, LW_EXCLUSIVE);

	store->health.samples_taken += health->samples_taken;
	store->health.samples_jit_self += health->samples_jit_self;
	store->health.samples_jit_total += health->samples_jit_total;
	store->health.samples_dropped += health->samples_dropped;
	store->health.samples_other_execution += health->samples_other_execution;
	store->health.samples_in_flush += health->samples_in_flush;
	store->health.functions_untracked += health->functions_untracked;
	store->health.executions_untracked += health->executions_untracked;
	store->health.forward_fallbacks += health->forward_fallbacks;
	store->health.flushes++;

	/*
	 * The query's summary row (queryid 0 means no query ID was computed).
	 * Only a flush with something to say creates it.
	 */
	memset(&key, 0, sizeof(key));
	key.userid = userid;
	key.dbid = dbid;
	key.queryid = queryid;
	key.plan_node_id = -1;
	key.discriminator = 0;
	entry = find_or_add(&key, now, count_execution || ndeltas > 0 ||
						query_samples > 0);
	if (entry != NULL)
	{
		if (count_execution)
			entry->executions++;
		entry->query_samples += query_samples;
		entry->last_seen = now;
		/* node samples are a part of the query's, so only with its row */
		if (nodes != NULL)
			flush_nodes(userid, dbid, queryid, nodes);
	}

	for (int i = 0; i < ndeltas; i++)
	{
		const JpStoreDelta *d = &deltas[i];

		memset(&key, 0, sizeof(key));
		key.userid = userid;
		key.dbid = dbid;
		key.queryid = queryid;
		key.plan_node_id = d->origin->plan_node_id;
		key.discriminator = jp_store_discriminator(d->origin->symbol);
		entry = find_or_add(&key, now, true);
		if (entry == NULL)
			continue;
		if (entry->symbol[0] == '\0')
		{
			strlcpy(entry->node_type, d->origin->node_type, JP_NODE_TYPE_LEN);
			strlcpy(entry->role, d->origin->role, JP_ROLE_LEN);
			strlcpy(entry->symbol, d->origin->symbol, JP_SYMBOL_LEN);
		}
		entry->self_samples += d->self_samples;
		entry->total_samples += d->total_samples;
		entry->query_samples += d->query_samples;
		entry->compilations += d->compilations;
		if (d->compilations > 0)
			entry->code_bytes = d->code_bytes;
		entry->last_seen = now;
	}

	/* after the functions' rows, which the step rows need */
	if (steps != NULL && steps->ndeltas > 0)
		flush_steps(userid, dbid, queryid, steps);

	LWLockRelease(store->lock);
}

/*
 * Copy every entry of one of the store's hash tables into backend-local
 * memory (CurrentMemoryContext), so that the SQL functions build their
 * result sets after releasing the lock.  The lock is held, shared, only for
 * a memcpy per entry: a reader of a full store delays a flushing backend by
 * that copy (well under a millisecond at 5,000 entries), never by the time a
 * tuplestore takes to fill.  The array is allocated and zeroed before the
 * lock is taken, so no page fault or malloc happens under it; if the table
 * grew in between, it is allocated again.  Returns the array and sets
 * *nentries to its length.
 *
 * The copy loop does not check for interrupts: holding an LWLock holds them
 * off, and the copy is short.  The callers check them in their loops over
 * the copy, where a big store's time goes.
 */
static void *
copy_table(HTAB *hash, Size entrysize, long max_entries, int64 *nentries)
{
	char	   *copy = NULL;
	long		capacity = 0;

	for (;;)
	{
		HASH_SEQ_STATUS status;
		void	   *entry;
		long		n = 0;
		long		want;

		LWLockAcquire(store->lock, LW_SHARED);
		want = hash_get_num_entries(hash);
		if (copy != NULL && want <= capacity)
		{
			hash_seq_init(&status, hash);
			while ((entry = hash_seq_search(&status)) != NULL)
				memcpy(copy + (n++) * entrysize, entry, entrysize);
			LWLockRelease(store->lock);
			*nentries = n;
			return copy;
		}
		LWLockRelease(store->lock);
		CHECK_FOR_INTERRUPTS();

		/* room for some growth, but never more than the table can hold */
		if (copy != NULL)
			pfree(copy);
		capacity = Max(want, Min(want + want / 8 + 16, max_entries));
		copy = palloc_extended(Max(capacity, 1) * entrysize,
							   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	}
}

/* a copy of every hotspot entry; see copy_table() */
JpStoreEntry *
jp_store_copy(int64 *nentries)
{
	return copy_table(store_hash, sizeof(JpStoreEntry),
					  (long) jitprof_max_hotspots, nentries);
}

/* a copy of every step row; see copy_table() */
JpStoreStepEntry *
jp_store_copy_steps(int64 *nsteps)
{
	return copy_table(step_hash, sizeof(JpStoreStepEntry),
					  (long) jitprof_max_steps, nsteps);
}

/* how many step rows there are, and how many found no room */
void
jp_store_step_counts(int64 *entries, int64 *dropped)
{
	LWLockAcquire(store->lock, LW_SHARED);
	*entries = hash_get_num_entries(step_hash);
	*dropped = store->steps_dropped;
	LWLockRelease(store->lock);
}

/* a copy of every plan-node row; see copy_table() */
JpStoreNodeEntry *
jp_store_copy_nodes(int64 *nnodes)
{
	return copy_table(node_hash, sizeof(JpStoreNodeEntry),
					  (long) jitprof_max_plan_nodes, nnodes);
}

void
jp_store_health(JpSamplerHealth *health, int64 *evictions, int64 *entries,
				TimestampTz *stats_reset)
{
	LWLockAcquire(store->lock, LW_SHARED);
	*health = store->health;
	*evictions = store->evictions;
	*entries = hash_get_num_entries(store_hash);
	*stats_reset = store->stats_reset;
	LWLockRelease(store->lock);
}

/* how many plan-node rows there are, under the lock */
int64
jp_store_node_count(void)
{
	int64		n;

	LWLockAcquire(store->lock, LW_SHARED);
	n = hash_get_num_entries(node_hash);
	LWLockRelease(store->lock);
	return n;
}

void
jp_store_reset(void)
{
	HASH_SEQ_STATUS status;
	JpStoreEntry *entry;

	LWLockAcquire(store->lock, LW_EXCLUSIVE);
	hash_seq_init(&status, store_hash);
	while ((entry = hash_seq_search(&status)) != NULL)
		hash_search(store_hash, &entry->key, HASH_REMOVE, NULL);
	remove_orphan_nodes();
	remove_orphan_steps();
	memset(&store->health, 0, sizeof(store->health));
	store->evictions = 0;
	store->steps_dropped = 0;
	store->stats_reset = GetCurrentTimestamp();
	LWLockRelease(store->lock);
}

/* one entry of a table: dynahash's element header, then the entry */
static inline uint64
element_bytes(Size entrysize)
{
	return MAXALIGN(sizeof(HASHELEMENT)) + MAXALIGN(entrysize);
}

void
jp_store_sizes(JpStoreSizes *sizes)
{
	sizes->shmem_bytes = jp_store_available() ? store_memsize() : 0;
	sizes->hotspot_entry_bytes = element_bytes(sizeof(JpStoreEntry));
	sizes->plan_node_entry_bytes = element_bytes(sizeof(JpStoreNodeEntry));
	sizes->step_entry_bytes = element_bytes(sizeof(JpStoreStepEntry));
}
