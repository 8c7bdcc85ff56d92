/*-------------------------------------------------------------------------
 *
 * sink_jitdump.c
 *	  perf jitdump sink: jit-<pid>.dump for perf inject --jit.
 *
 * A perf map only names address ranges; a jitdump file also carries the code
 * bytes, so that "perf inject --jit" can write one small ELF file per
 * function (jitted-<pid>-<n>.so) and "perf annotate" can disassemble it.
 * The format is the one of linux's tools/perf/Documentation/
 * jitdump-specification.txt: a file header, one JIT_CODE_LOAD record per
 * function (with its code), and JIT_CODE_CLOSE when the backend exits.
 * With jitprof.steps, a function's JIT_CODE_DEBUG_INFO record (its step
 * table, as lines of the step file: see steps.c) precedes its code load.
 * Timestamps come from CLOCK_MONOTONIC, the clock of "perf record -k 1".
 *
 * perf finds the file because the process maps it with PROT_EXEC: perf
 * record sees that mmap and perf inject reads the file it names.  The file
 * goes to a fresh directory <jitprof.jitdump_dir>/.debug/jit/
 * jitprof-<date>-XXXXXX/ made by mkdtemp(), where perf inject also writes
 * its jitted-*.so files.  The intermediate .debug and .debug/jit directories
 * may sit in a shared directory such as /tmp, so they must be real
 * directories (not symlinks) owned by the server's OS user or by root, and
 * not writable by others unless they have the sticky bit.  The executable
 * mapping is refused on a file system mounted noexec (a common hardening
 * of /tmp): that is checked first, and reported as such.
 *
 * The sink is on when jitprof.perf_jitdump is on, and also when the stock
 * jit_profiling_support is on: llvmjit's own perf listener cannot see code
 * linked by JITLink (linker.cpp drops it), so jitprof takes over its job.
 *
 * The code arena gives the same query's functions the same addresses every
 * time it runs (code_arena.cpp).  A JIT_CODE_LOAD record is written only for
 * a function whose address, size, name or code bytes differ from the last
 * record at that address: llvmjit's code embeds pointers to the query's
 * executor state, so the bytes may differ even when the name does not.
 * perf inject handles a second load at an address as new code from that
 * timestamp on, which is what it is.  The file is capped at
 * jitprof.jitdump_max_size: past it the sink stops appending, with one
 * WARNING, and counts the records it dropped.
 *
 * As with every sink, the file is opened lazily by the backend that first
 * links code (never by the postmaster), and the callbacks run inside LLVM's
 * call stack: no ERROR, no palloc.  Problems are a WARNING that names what
 * to fix, after which the sink stays off in this backend.
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

#include "elf_machine.h"
#include "jitprof.h"

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

typedef struct JitdumpRecordHeader
{
	uint32		id;
	uint32		total_size;
	uint64		timestamp;
} JitdumpRecordHeader;

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

/* GUC variables */
bool		jitprof_perf_jitdump = false;
char	   *jitprof_jitdump_dir = NULL;
int			jitprof_jitdump_max_size = 65536;	/* kB */

JitprofFileCounters jp_jitdump_counters;

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
 * Make sure "path" is a directory we may safely create files in: create it
 * if missing; it must not be a symlink, must belong to us or to root, and
 * if others may write to it, it must have the sticky bit (as /tmp has), or
 * they could rename or replace what we create in it.
 */
static bool
ensure_private_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, S_IRWXU | S_IRGRP | S_IXGRP | S_IROTH | S_IXOTH) != 0 &&
		errno != EEXIST)
	{
		dump_stop();
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not create jitdump directory \"%s\": %m", path),
				 errdetail("jitdump output is off for this backend."),
				 errhint("Set jitprof.jitdump_dir to a directory the server's OS user can write to.")));
		return false;
	}
	if (lstat(path, &st) != 0)
	{
		dump_stop();
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not access jitdump directory \"%s\": %m", path),
				 errdetail("jitdump output is off for this backend."),
				 errhint("Set jitprof.jitdump_dir to a directory the server's OS user can write to.")));
		return false;
	}
	if (!S_ISDIR(st.st_mode))
	{
		dump_stop();
		ereport(WARNING,
				(errmsg("jitdump directory \"%s\" is not a directory", path),
				 errdetail("It is a symbolic link or another kind of file; jitdump output is off for this backend."),
				 errhint("Remove \"%s\", or set jitprof.jitdump_dir to another directory.", path)));
		return false;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0)
	{
		dump_stop();
		ereport(WARNING,
				(errmsg("jitdump directory \"%s\" belongs to another user", path),
				 errdetail("The directory belongs to user ID %d, the server runs as user ID %d; jitdump output is off for this backend.",
						   (int) st.st_uid, (int) geteuid()),
				 errhint("Remove \"%s\", or set jitprof.jitdump_dir to another directory.", path)));
		return false;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
	{
		dump_stop();
		ereport(WARNING,
				(errmsg("jitdump directory \"%s\" is writable by other users and has no sticky bit", path),
				 errdetail("Its mode is %04o; jitdump output is off for this backend.",
						   (unsigned int) (st.st_mode & 07777)),
				 errhint("Run \"chmod go-w %s\" or \"chmod +t %s\", or set jitprof.jitdump_dir to another directory.",
						 path, path)));
		return false;
	}
	return true;
}

/*
 * perf finds the dump through an executable mapping of it, which a file
 * system mounted noexec (a common hardening of /tmp) refuses.  Say so in
 * words before creating anything there.
 */
static void
report_noexec(const char *dir)
{
	dump_stop();
	ereport(WARNING,
			(errmsg("jitdump directory \"%s\" is on a file system mounted noexec", dir),
			 errdetail("perf finds a jitdump file through an executable mapping of it, which such a file system refuses; jitdump output is off for this backend."),
			 errhint("Set jitprof.jitdump_dir to a directory on a file system mounted without noexec.")));
}

/*
 * Create <dir>/.debug/jit/jitprof-<date>-XXXXXX/jit-<pid>.dump, write its
 * header and map it.  Returns false (after a WARNING) when the sink must
 * stay off.
 */
static bool
dump_open(void)
{
	const char *dir = jitprof_jitdump_dir;
	char		path[MAXPGPATH];
	char		date[16];
	time_t		now = time(NULL);
	struct tm	tm;
	struct statvfs vfs;
	JitdumpFileHeader header;
	int			fd;

	dump_pid = getpid();
	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";

	if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC) != 0)
	{
		report_noexec(dir);
		return false;
	}

	snprintf(path, sizeof(path), "%s/.debug", dir);
	if (!ensure_private_dir(path))
		return false;
	snprintf(path, sizeof(path), "%s/.debug/jit", dir);
	if (!ensure_private_dir(path))
		return false;
	if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOEXEC) != 0)
	{
		report_noexec(path);
		return false;
	}

	localtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y%m%d", &tm);
	snprintf(path, sizeof(path), "%s/.debug/jit/jitprof-%s-XXXXXX", dir, date);
	if (mkdtemp(path) == NULL)
	{
		dump_stop();
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not create jitdump directory \"%s\": %m", path),
				 errdetail("jitdump output is off for this backend."),
				 errhint("Set jitprof.jitdump_dir to a directory the server's OS user can write to.")));
		return false;
	}

	snprintf(dump_path, sizeof(dump_path), "%s/jit-%d.dump", path,
			 (int) dump_pid);
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
	memset(&jp_jitdump_counters, 0, sizeof(jp_jitdump_counters));
	jp_jitdump_counters.bytes = sizeof(header);
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

static void
jitdump_object_linked(const JitprofObject *object)
{
	JitdumpCodeLoad records[BATCH];
	struct iovec iov[BATCH * 3];
	int			nrec = 0;
	uint32		tid;
	uint64		now;
	const char *steps_file = jp_steps_file_path();

	if (dump_fd < 0 || dump_pid != getpid())
	{
		if (!dump_open())
			return;
	}

	tid = (uint32) syscall(SYS_gettid);
	now = monotonic_ns();

	for (int i = 0; i < object->nfunctions; i++)
	{
		const JitprofFunction *fn = &object->functions[i];
		JitdumpCodeLoad *rec = &records[nrec];
		size_t		namelen = strlen(fn->origin.symbol) + 1;
		uint64		name_hash;
		uint64		code_hash;
		JitprofRange *written;
		size_t		debug_size;

		if (fn->size == 0 || fn->address == 0)
			continue;

		/* the same code under the same name at the same place: known */
		name_hash = hash_bytes_extended((const unsigned char *) fn->origin.symbol,
										namelen, 0);
		code_hash = hash_bytes_extended((const unsigned char *) (uintptr_t) fn->address,
										fn->size, 0);
		written = jp_range_exact(&dump_written, fn->address,
								 fn->address + fn->size);
		if (written != NULL && written->name_hash == name_hash &&
			written->code_hash == code_hash)
			continue;

		debug_size = debug_info_size(fn, steps_file);
		if (jp_jitdump_counters.bytes + debug_size + sizeof(*rec) + namelen +
			fn->size > (uint64) jitprof_jitdump_max_size * 1024)
		{
			jp_jitdump_counters.dropped++;
			if (!dump_cap_warned)
			{
				dump_cap_warned = true;
				ereport(WARNING,
						(errmsg("jitdump file \"%s\" reached jitprof.jitdump_max_size (%d kB)",
								dump_path, jitprof_jitdump_max_size),
						 errdetail("No more functions of this backend are added to it."),
						 errhint("Raise jitprof.jitdump_max_size to record more JIT code for perf.")));
			}
			continue;
		}
		if (!jp_range_add(&dump_written, fn->address, fn->address + fn->size,
						  name_hash, code_hash))
		{
			errno = ENOMEM;
			dump_failed_io();
			return;
		}
		jp_jitdump_counters.bytes += sizeof(*rec) + namelen + fn->size;
		jp_jitdump_counters.records++;

		/* its line table goes right before its code load record */
		if (debug_size > 0)
		{
			if (nrec > 0 && !writev_all(dump_fd, iov, nrec * 3))
			{
				dump_failed_io();
				return;
			}
			nrec = 0;
			if (!write_debug_info(fn, steps_file, debug_size, now))
			{
				dump_failed_io();
				return;
			}
			jp_jitdump_counters.bytes += debug_size;
			jp_jitdump_counters.records++;
		}

		rec->header.id = JIT_CODE_LOAD;
		rec->header.total_size = sizeof(*rec) + namelen + fn->size;
		rec->header.timestamp = now;
		rec->pid = (uint32) dump_pid;
		rec->tid = tid;
		rec->vma = fn->address;
		rec->code_addr = fn->address;
		rec->code_size = fn->size;
		rec->code_index = dump_code_index++;

		/* linked code is mapped readable, so the bytes come from there */
		iov[nrec * 3].iov_base = rec;
		iov[nrec * 3].iov_len = sizeof(*rec);
		iov[nrec * 3 + 1].iov_base = (void *) fn->origin.symbol;
		iov[nrec * 3 + 1].iov_len = namelen;
		iov[nrec * 3 + 2].iov_base = (void *) (uintptr_t) fn->address;
		iov[nrec * 3 + 2].iov_len = fn->size;
		nrec++;

		if (nrec == BATCH || i == object->nfunctions - 1)
		{
			if (!writev_all(dump_fd, iov, nrec * 3))
			{
				dump_failed_io();
				return;
			}
			nrec = 0;
		}
	}
	if (nrec > 0 && !writev_all(dump_fd, iov, nrec * 3))
		dump_failed_io();
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

void
jp_jitdump_init(void)
{
	const char *env_dir = getenv("JITDUMPDIR");

	DefineCustomBoolVariable("jitprof.perf_jitdump",
							 "Writes a perf jitdump file (code and names of JIT functions) for perf inject --jit.",
							 "jit_profiling_support = on turns it on as well.",
							 &jitprof_perf_jitdump,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("jitprof.jitdump_dir",
							   "Directory under which jitdump files are written, in .debug/jit/jitprof-<date>-<random>/.",
							   "The default is the server's JITDUMPDIR environment variable, or /tmp.",
							   &jitprof_jitdump_dir,
							   (env_dir && env_dir[0] != '\0') ? env_dir : "/tmp",
							   PGC_SUSET,
							   0,
							   NULL, NULL, NULL);

	DefineCustomIntVariable("jitprof.jitdump_max_size",
							"Sets the size at which a backend stops adding to its jitdump file.",
							"Each record carries a function's code; the same code at the same address is written once.",
							&jitprof_jitdump_max_size,
							65536,
							64,
							INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	jp_registry_register_sink(&jitdump_sink);
}
