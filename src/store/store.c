/*-------------------------------------------------------------------------
 *
 * store.c
 *	  Shared-memory store of hotspot statistics: its settings, its shared
 *	  memory and its start-up.
 *
 * Three fixed-size shared hash tables under one lock: one entry per (user,
 * database, query ID, plan node, JIT function) and one summary entry per
 * query; the plan-node rows; the step rows.  Each has its own named
 * allocation, sized at start for its cap.  A plan-node row lives only as
 * long as its query's summary row, and a step row as long as its function's
 * row, so no row claims more samples than the one above it; rows that find
 * no room are counted, never made room for.  Sizes and rules:
 * doc/hotspots.md.
 *
 * The folder, one job a file (store_shared.h has the locking contract):
 *	  store.c		 settings, shared memory, start-up
 *	  store_rows.c	 adding a flush to the rows, copying them out, reset
 *	  store_evict.c	 making room: eviction, and the rows that go with it
 *	  store_file.c	 the statistics file, saved at shutdown, loaded at start
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/store/store.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "store/store.h"
#include "store/store_shared.h"

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

/* the smallest page size: table_touch reads one byte each */
#define TOUCH_STRIDE		4096

int			jitprof_max_hotspots = 5000;
int			jitprof_max_plan_nodes = 20000;
int			jitprof_max_steps = 20000;

StoreShared *jp_store_header = NULL;
HTAB	   *jp_hotspot_hash = NULL;
HTAB	   *jp_node_hash = NULL;
HTAB	   *jp_step_hash = NULL;
static StoreTable *store_table = NULL;	/* where jp_hotspot_hash lives */
static StoreTable *node_table = NULL;
static StoreTable *step_table = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

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
 * Touch, one read per page, a table's memory from where this backend last
 * stopped ("*touched") up to what the table has handed out so far.  A
 * backend maps a shared page on its first access, with a page fault; a
 * reader that took those faults under the store's lock held it four to five
 * times longer in a new connection (24,000 entries: 16 to 20 ms instead of
 * 4), and every flushing backend waited meanwhile.  The reads
 * interpret nothing, so they need no lock; "used" only grows, and a stale
 * value only leaves a page to fault later.
 */
static void
table_touch(const StoreTable *table, Size *touched)
{
	Size		used;

	if (table == NULL)
		return;
	used = Min(((volatile const StoreTable *) table)->used, table->size);
	for (Size offset = *touched; offset < used; offset += TOUCH_STRIDE)
		(void) ((volatile const char *) table)[offset];
	*touched = Max(*touched, used);
}

/* table_touch for the table "hash" lives in; the readers call it unlocked */
void
jp_store_touch_table(const HTAB *hash)
{
	static Size hotspots_touched = 0;
	static Size nodes_touched = 0;
	static Size steps_touched = 0;

	if (hash == jp_hotspot_hash)
		table_touch(store_table, &hotspots_touched);
	else if (hash == jp_node_hash)
		table_touch(node_table, &nodes_touched);
	else if (hash == jp_step_hash)
		table_touch(step_table, &steps_touched);
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

	jp_store_header = ShmemInitStruct("jitprof store header",
									  sizeof(StoreShared), &found);
	if (!found)
	{
		memset(jp_store_header, 0, sizeof(StoreShared));
		jp_store_header->lock = &(GetNamedLWLockTranche("jitprof"))->lock;
		jp_store_header->stats_reset = GetCurrentTimestamp();
	}

	jp_hotspot_hash = table_create("jitprof hotspots", jitprof_max_hotspots,
								   sizeof(JpStoreKey), sizeof(JpStoreEntry),
								   store_table_alloc, &store_table);
	jp_node_hash = table_create("jitprof plan nodes", jitprof_max_plan_nodes,
								sizeof(JpStoreNodeKey), sizeof(JpStoreNodeEntry),
								node_table_alloc, &node_table);
	jp_step_hash = table_create("jitprof steps", jitprof_max_steps,
								sizeof(JpStoreStepKey), sizeof(JpStoreStepEntry),
								step_table_alloc, &step_table);

	LWLockRelease(AddinShmemInitLock);

	/* the postmaster loads the saved file and saves at shutdown */
	if (!IsUnderPostmaster)
	{
		on_shmem_exit(jp_store_save, (Datum) 0);
		if (!found && jitprof_save)
			jp_store_load();
	}
}

/* the sizes of the three tables, as set at server start */
void
jp_store_limits(int *max_hotspots, int *max_plan_nodes, int *max_steps)
{
	*max_hotspots = jitprof_max_hotspots;
	*max_plan_nodes = jitprof_max_plan_nodes;
	*max_steps = jitprof_max_steps;
}

void
jp_store_init(void)
{
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
	return jp_store_header != NULL && jp_hotspot_hash != NULL && jp_node_hash != NULL &&
		jp_step_hash != NULL;
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
