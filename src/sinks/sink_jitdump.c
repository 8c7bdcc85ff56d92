/*-------------------------------------------------------------------------
 *
 * sink_jitdump.c
 *	  perf jitdump sink: jit-<pid>.dump for perf inject --jit.
 *
 * Contract: the file is opened lazily by the backend that first links code
 * (never by the postmaster); the callbacks run inside LLVM's call stack, so
 * no ERROR and no palloc: a problem is one WARNING that names what to fix,
 * after which the sink stays off in this backend.  A record is written only
 * when the name or code bytes at an address change, up to
 * jitprof.jitdump_max_size.  Every record kind goes through one file state
 * (descriptor, cap, what was written where); jitdump_unwind.c builds only
 * the unwinding records' bytes.  The format, directories and checks:
 * doc/perf.md and doc/hardening.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sinks/sink_jitdump.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/hashfn.h"
#include "jit/jit.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "sinks/sinks.h"
#include "sinks/jitdump_unwind.h"

/* jitdump format, from the specification */
#define JITDUMP_MAGIC		0x4A695444	/* "JiTD" */
#define JITDUMP_VERSION		1
#define JIT_CODE_LOAD		0
#define JIT_CODE_CLOSE		3
#define JIT_CODE_DEBUG_INFO	2

typedef struct JitdumpFileHeader
{
	uint32		magic;
	uint32		version;
	uint32		total_size;
	uint32		elf_mach;
	uint32		pad1;
	uint32		pid;
	uint64		timestamp;
	uint64		flags;
} JitdumpFileHeader;

/* JIT_CODE_LOAD: followed by the NUL-terminated name, then the code */
typedef struct JitdumpCodeLoad
{
	JitdumpRecordHeader header;
	uint32		pid;
	uint32		tid;
	uint64		vma;
	uint64		code_addr;
	uint64		code_size;
	uint64		code_index;
} JitdumpCodeLoad;

/*
 * JIT_CODE_DEBUG_INFO: followed by nr_entry entries of {uint64 addr, int32
 * lineno, int32 discrim, NUL-terminated file name}.  perf inject applies it
 * to the next JIT_CODE_LOAD.
 */
typedef struct JitdumpDebugInfo
{
	JitdumpRecordHeader header;
	uint64		code_addr;
	uint64		nr_entry;
}			JitdumpDebugInfo;

static JitprofFileCounters dump_counters;

static JitprofRangeSet dump_written;	/* latest record at each address */
static bool dump_cap_warned = false;

static int	dump_fd = -1;
static pid_t dump_pid = 0;		/* process that opened dump_fd */
static bool dump_failed = false;
static void *dump_marker = NULL;	/* the PROT_EXEC mapping perf looks for */
static size_t dump_marker_size = 0;
static uint64 dump_code_index = 0;
static char dump_path[MAXPGPATH];

static uint64
monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64) ts.tv_sec * UINT64CONST(1000000000) + ts.tv_nsec;
}

static void
dump_close(void)
{
	if (dump_marker != NULL)
		munmap(dump_marker, dump_marker_size);
	dump_marker = NULL;
	if (dump_fd >= 0)
		close(dump_fd);
	dump_fd = -1;
}

/*
 * Turn the sink off for this process.  The caller reports why, once, with a
 * WARNING.
 */
static void
dump_stop(void)
{
	int			save_errno = errno;

	dump_failed = true;
	dump_close();
	errno = save_errno;
}

/* a system call on the dump file failed: report errno */
static void
dump_failed_io(void)
{
	dump_stop();
	ereport(WARNING,
			(errcode_for_file_access(),
			 errmsg("could not write jitdump file \"%s\": %m", dump_path),
			 errdetail("jitdump output is off for this backend.")));
}

/* writev() all of iov[0..n-1], resuming after short writes */
static bool
writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0)
	{
		ssize_t		done = writev(fd, iov, n);

		if (done < 0)
		{
			if (errno == EINTR)
				continue;
			return false;
		}
		while (n > 0 && (size_t) done >= iov->iov_len)
		{
			done -= iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0)
		{
			iov->iov_base = (char *) iov->iov_base + done;
			iov->iov_len -= done;
		}
	}
	return true;
}

/* at backend exit: JIT_CODE_CLOSE, and unmap; the file stays for perf */
static void
dump_at_exit(int code, Datum arg)
{
	JitdumpRecordHeader rec;

	if (dump_fd < 0 || dump_pid != getpid())
		return;
	rec.id = JIT_CODE_CLOSE;
	rec.total_size = sizeof(rec);
	rec.timestamp = monotonic_ns();
	(void) jp_write_all(dump_fd, &rec, sizeof(rec));
	dump_close();
}

/*
 * perf finds the dump through an executable mapping of it, which a file
 * system mounted noexec (a common hardening of /tmp) refuses.  Say so in
 * words before creating anything there.
 */
static bool
dir_allows_exec(const char *dir)
{
	struct statvfs vfs;

	if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC) != 0)
	{
		ereport(WARNING,
				(errmsg("jitdump directory \"%s\" is on a file system mounted noexec", dir),
				 errdetail("perf finds a jitdump file through an executable mapping of it, which such a file system refuses; jitdump output is off for this backend."),
				 errhint("Set jitprof.jitdump_dir to a directory on a file system mounted without noexec.")));
		return false;
	}
	return true;
}

/*
 * Create <dir>/.debug/jit/jitprof-<date>-XXXXXX/jit-<pid>.dump, write its
 * header and map it.  Returns false (after a WARNING) when the sink must
 * stay off.
 */
static bool
dump_open(void)
{
	char		path[MAXPGPATH];
	char		name[32];
	char		date[16];
	time_t		now = time(NULL);
	struct tm	tm;
	JitdumpFileHeader header;
	int			fd;

	dump_pid = getpid();
	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y%m%d", &tm);
	snprintf(name, sizeof(name), "jit-%d.dump", (int) dump_pid);
	if (!jp_make_jit_dir(jitprof_jitdump_dir, "jitprof", date, name,
						 dir_allows_exec, true, path, dump_path))
	{
		dump_stop();
		return false;
	}

	fd = open(dump_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  S_IRUSR | S_IWUSR);
	if (fd < 0)
	{
		dump_stop();
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not create jitdump file \"%s\": %m", dump_path),
				 errdetail("jitdump output is off for this backend."),
				 errhint("Set jitprof.jitdump_dir to a directory the server's OS user can write to.")));
		return false;
	}
	dump_fd = fd;

	memset(&header, 0, sizeof(header));
	header.magic = JITDUMP_MAGIC;
	header.version = JITDUMP_VERSION;
	header.total_size = sizeof(header);
	header.elf_mach = JP_ELF_MACHINE;
	header.pid = (uint32) dump_pid;
	header.timestamp = monotonic_ns();
	header.flags = 0;
	if (!jp_write_all(fd, &header, sizeof(header)))
	{
		dump_failed_io();
		return false;
	}

	/* perf's marker: an executable mapping of the dump file */
	dump_marker_size = (size_t) sysconf(_SC_PAGESIZE);
	dump_marker = mmap(NULL, dump_marker_size, PROT_READ | PROT_EXEC,
					   MAP_PRIVATE, fd, 0);
	if (dump_marker == MAP_FAILED)
	{
		int			save_errno = errno;

		/* remove what perf could not use anyway */
		dump_marker = NULL;
		dump_stop();
		unlink(dump_path);
		rmdir(path);
		errno = save_errno;
		if (errno == EPERM || errno == EACCES)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not map jitdump file \"%s\" executable: %m", dump_path),
					 errdetail("perf finds a jitdump file through an executable mapping of it; jitdump output is off for this backend."),
					 errhint("If the file system of jitprof.jitdump_dir is mounted noexec, set jitprof.jitdump_dir to a directory on another file system.")));
		else
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not map jitdump file \"%s\": %m", dump_path),
					 errdetail("jitdump output is off for this backend.")));
		return false;
	}

	dump_code_index = 0;
	jp_range_reset(&dump_written);
	memset(&dump_counters, 0, sizeof(dump_counters));
	dump_counters.bytes = sizeof(header);
	dump_cap_warned = false;
	on_proc_exit(dump_at_exit, (Datum) 0);
	return true;
}

static bool
jitdump_enabled(void)
{
	return (jitprof_perf_jitdump || jit_profiling_support) && !dump_failed;
}

/* functions written per writev() call */
#define BATCH	32

/*
 * Size of fn's JIT_CODE_DEBUG_INFO record (issue 12): a line per row of its
 * step table, in the step file; 0 if it has none.
 */
static size_t
debug_info_size(const JitprofFunction *fn, const char *file)
{
	if (fn->nsteps <= 0 || file == NULL)
		return 0;
	return sizeof(JitdumpDebugInfo) +
		fn->nsteps * (sizeof(uint64) + 2 * sizeof(int32) + strlen(file) + 1);
}

/* write fn's JIT_CODE_DEBUG_INFO record of "size" bytes */
static bool
write_debug_info(const JitprofFunction *fn, const char *file, size_t size,
				 uint64 now)
{
	char	   *buf = malloc(size);
	char	   *p = buf;
	JitdumpDebugInfo rec;
	bool		ok;

	if (buf == NULL)
		return true;			/* the code load record goes without */
	rec.header.id = JIT_CODE_DEBUG_INFO;
	rec.header.total_size = size;
	rec.header.timestamp = now;
	rec.code_addr = fn->address;
	rec.nr_entry = fn->nsteps;
	memcpy(p, &rec, sizeof(rec));
	p += sizeof(rec);
	for (int i = 0; i < fn->nsteps; i++)
	{
		uint64		addr = fn->address + fn->steps[i].offset;
		int32		lineno = (int32) fn->steps[i].line;
		int32		discrim = 0;

		memcpy(p, &addr, sizeof(addr));
		p += sizeof(addr);
		memcpy(p, &lineno, sizeof(lineno));
		p += sizeof(lineno);
		memcpy(p, &discrim, sizeof(discrim));
		p += sizeof(discrim);
		/* every entry names the file: perf inject ignores the "\xff" form */
		strcpy(p, file);
		p += strlen(file) + 1;
	}
	Assert(p - buf == size);
	ok = jp_write_all(dump_fd, buf, size);
	free(buf);
	return ok;
}

static JitprofUnwindCounters unwind_counters;

/* asked by the linker before it links an object: collect .eh_frame? */
bool
jp_jitdump_unwind_wanted(void)
{
	return jitprof_jitdump_unwinding && jitdump_enabled();
}

/* write fn's JIT_CODE_UNWINDING_INFO record of "size" bytes */
static bool
write_unwind_info(const JitprofFunction *fn, const UnwindShared *sh,
				  size_t size, uint64 now)
{
	char	   *buf = jp_unwind_record(fn, sh, size, now);
	bool		ok;

	if (buf == NULL)
		return true;			/* the code load record goes without */
	ok = jp_write_all(dump_fd, buf, size);
	free(buf);
	return ok;
}

/* size of fn's JIT_CODE_LOAD record: header, name and code */
static size_t
load_record_size(const JitprofFunction *fn)
{
	return sizeof(JitdumpCodeLoad) + strlen(fn->origin.symbol) + 1 + fn->size;
}

/* would "more" bytes still fit under jitprof.jitdump_max_size? */
static bool
dump_fits(uint64 more)
{
	return dump_counters.bytes + more <=
		(uint64) jitprof_jitdump_max_size * 1024;
}

static int
cmp_candidate_address(const void *a, const void *b)
{
	uint64		x = ((const DumpCandidate *) a)->fn->address;
	uint64		y = ((const DumpCandidate *) b)->fn->address;

	return (x > y) - (x < y);
}

/*
 * Fill cands with the object's functions that have code, in address order,
 * and mark those that need a record: all but the same code under the same
 * name at the same place as the last record there.  Returns how many there
 * are; *first_todo is the first one marked, or -1.
 */
static int
select_functions(const JitprofObject *object, DumpCandidate *cands,
				 int *first_todo)
{
	int			n = 0;

	for (int i = 0; i < object->nfunctions; i++)
		if (object->functions[i].size > 0 && object->functions[i].address != 0)
			cands[n++].fn = &object->functions[i];
	qsort(cands, n, sizeof(DumpCandidate), cmp_candidate_address);

	*first_todo = -1;
	for (int k = 0; k < n; k++)
	{
		DumpCandidate *c = &cands[k];
		const JitprofFunction *fn = c->fn;
		JitprofRange *written;

		c->name_hash = hash_bytes_extended((const unsigned char *) fn->origin.symbol,
										   strlen(fn->origin.symbol) + 1, 0);
		c->code_hash = hash_bytes_extended((const unsigned char *) (uintptr_t) fn->address,
										   fn->size, 0);
		written = jp_range_exact(&dump_written, fn->address,
								 fn->address + fn->size);
		c->todo = !(written != NULL &&
					written->name_hash == c->name_hash &&
					written->code_hash == c->code_hash);
		if (c->todo && *first_todo < 0)
			*first_todo = k;
	}
	return n;
}

/*
 * Plan the unwinding records of an object with new code (first_todo >= 0).
 * If the object can have its unwinding data (sh->data), every function
 * from the first new one upward is written again, each with a record, so
 * that the last one's mapping is the latest; if that group does not fit
 * under the cap, they are written without the records (sh->data freed).
 */
static void
plan_unwinding(DumpCandidate *cands, int n, int first_todo,
			   const char *steps_file, UnwindShared *sh)
{
	uint64		group_size = 0;

	for (int k = 0; k < n; k++)
		if (cands[k].fn->eh_frame == NULL)
			unwind_counters.missing++;
	if (!jp_unwind_build(cands, n, sh))
	{
		for (int k = 0; k < n; k++)
			if (cands[k].fn->eh_frame != NULL)
				unwind_counters.no_room++;
		return;
	}
	for (int k = first_todo; k < n; k++)
	{
		const JitprofFunction *fn = cands[k].fn;

		cands[k].todo = true;
		group_size += jp_unwind_record_size(fn, sh) +
			debug_info_size(fn, steps_file) + load_record_size(fn);
	}
	if (!dump_fits(group_size))
	{
		free(sh->data);
		sh->data = NULL;
	}
}

/* JIT_CODE_LOAD records queued for one writev() */
typedef struct DumpBatch
{
	JitdumpCodeLoad records[BATCH];
	struct iovec iov[BATCH * 3];
	int			nrec;
	uint32		tid;
	uint64		now;			/* timestamp of every record of the object */
	const char *steps_file;
} DumpBatch;

/* write the queued code loads; false (after a WARNING) if that failed */
static bool
batch_flush(DumpBatch *batch)
{
	if (batch->nrec > 0 && !writev_all(dump_fd, batch->iov, batch->nrec * 3))
	{
		dump_failed_io();
		return false;
	}
	batch->nrec = 0;
	return true;
}

/* queue fn's JIT_CODE_LOAD record; its code is read where it was linked */
static void
batch_add_load(DumpBatch *batch, const JitprofFunction *fn, size_t size)
{
	JitdumpCodeLoad *rec = &batch->records[batch->nrec];
	struct iovec *iov = &batch->iov[batch->nrec * 3];

	rec->header.id = JIT_CODE_LOAD;
	rec->header.total_size = size;
	rec->header.timestamp = batch->now;
	rec->pid = (uint32) dump_pid;
	rec->tid = batch->tid;
	rec->vma = fn->address;
	rec->code_addr = fn->address;
	rec->code_size = fn->size;
	rec->code_index = dump_code_index++;

	/* linked code is mapped readable, so the bytes come from there */
	iov[0].iov_base = rec;
	iov[0].iov_len = sizeof(*rec);
	iov[1].iov_base = (void *) fn->origin.symbol;
	iov[1].iov_len = strlen(fn->origin.symbol) + 1;
	iov[2].iov_base = (void *) (uintptr_t) fn->address;
	iov[2].iov_len = fn->size;
	batch->nrec++;
}

/* a function did not fit under jitprof.jitdump_max_size */
static void
count_dropped(void)
{
	dump_counters.dropped++;
	if (!dump_cap_warned)
	{
		dump_cap_warned = true;
		ereport(WARNING,
				(errmsg("jitdump file \"%s\" reached jitprof.jitdump_max_size (%d kB)",
						dump_path, jitprof_jitdump_max_size),
				 errdetail("No more functions of this backend are added to it."),
				 errhint("Raise jitprof.jitdump_max_size to record more JIT code for perf.")));
	}
}

/*
 * Write one function's records, or count it as dropped if they do not fit
 * under the cap.  perf inject applies a JIT_CODE_DEBUG_INFO and a
 * JIT_CODE_UNWINDING_INFO record to the next JIT_CODE_LOAD, so they go
 * right before the function's own code load, after the batch queued so far
 * is written.  dump_written records the function before its bytes are
 * written: if a write then fails, the sink is off for good and the entry
 * is never read.  Returns false (after a WARNING) when the sink turned off.
 */
static bool
write_function(DumpBatch *batch, const DumpCandidate *c,
			   const UnwindShared *sh)
{
	const JitprofFunction *fn = c->fn;
	size_t		load_size = load_record_size(fn);
	size_t		debug_size = debug_info_size(fn, batch->steps_file);
	size_t		unwind_size = jp_unwind_record_size(fn, sh);

	if (sh->data != NULL && unwind_size == 0)
		unwind_counters.no_room++;
	if (!dump_fits(debug_size + unwind_size + load_size))
	{
		count_dropped();
		return true;
	}
	if (!jp_range_add(&dump_written, fn->address, fn->address + fn->size,
					  c->name_hash, c->code_hash))
	{
		errno = ENOMEM;
		dump_failed_io();
		return false;
	}
	dump_counters.bytes += load_size;
	dump_counters.records++;

	if ((debug_size > 0 || unwind_size > 0) && !batch_flush(batch))
		return false;
	if (debug_size > 0)
	{
		if (!write_debug_info(fn, batch->steps_file, debug_size, batch->now))
		{
			dump_failed_io();
			return false;
		}
		dump_counters.bytes += debug_size;
		dump_counters.records++;
	}
	if (unwind_size > 0)
	{
		if (!write_unwind_info(fn, sh, unwind_size, batch->now))
		{
			dump_failed_io();
			return false;
		}
		dump_counters.bytes += unwind_size;
		dump_counters.records++;
		unwind_counters.records++;
	}

	batch_add_load(batch, fn, load_size);
	if (batch->nrec == BATCH)
		return batch_flush(batch);
	return true;
}

static void
jitdump_object_linked(const JitprofObject *object)
{
	DumpBatch	batch;
	DumpCandidate *cands;
	UnwindShared shared;
	int			n;
	int			first_todo;
	bool		ok = true;

	if ((dump_fd < 0 || dump_pid != getpid()) && !dump_open())
		return;

	cands = malloc(Max(object->nfunctions, 1) * sizeof(DumpCandidate));
	if (cands == NULL)
	{
		dump_counters.dropped += object->nfunctions;
		return;
	}
	batch.nrec = 0;
	batch.tid = (uint32) syscall(SYS_gettid);
	batch.now = monotonic_ns();
	batch.steps_file = jp_steps_file_path();

	n = select_functions(object, cands, &first_todo);
	memset(&shared, 0, sizeof(shared));
	if (jitprof_jitdump_unwinding && first_todo >= 0)
		plan_unwinding(cands, n, first_todo, batch.steps_file, &shared);

	for (int k = 0; ok && k < n; k++)
		if (cands[k].todo)
			ok = write_function(&batch, &cands[k], &shared);
	if (ok)
		(void) batch_flush(&batch);
	free(shared.data);
	free(cands);
}

/* jitdump has JIT_CODE_MOVE but no "unload": freed code needs nothing */
static void
jitdump_object_freed(const JitprofObject *object)
{
}

static const JitprofSink jitdump_sink = {
	.enabled = jitdump_enabled,
	.object_linked = jitdump_object_linked,
	.object_freed = jitdump_object_freed,
};

/* the jitdump settings are core's (settings.c): steps.c reads them too */
void
jp_jitdump_init(void)
{
	jp_registry_register_sink(&jitdump_sink);
}

/* what the sink wrote and dropped, for jitprof_status */
const JitprofFileCounters *
jp_jitdump_counters(void)
{
	return &dump_counters;
}

const JitprofUnwindCounters *
jp_jitdump_unwind_counters(void)
{
	return &unwind_counters;
}
