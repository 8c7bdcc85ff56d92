/*-------------------------------------------------------------------------
 *
 * file_io.c
 *	  File I/O shared by the code that writes files under
 *	  jitprof.jitdump_dir and /tmp (perf map, jitdump, step file) and the
 *	  statistics files in pg_stat/: writing and reading whole buffers,
 *	  building paths, and the checks of the .debug directories.
 *
 * These run inside LLVM's call stack or at compile_expr time, so they use
 * plain system calls and report failure through their result and errno.
 * The only messages are WARNINGs, and only when the caller asks for them:
 * a WARNING returns to the caller, it never unwinds through LLVM.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/core/file_io.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "storage/fd.h"

static bool jp_path_format(char *buf, size_t size, const char *fmt,...)
			pg_attribute_printf(3, 4);

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

/* read() exactly len bytes; false on an error or at the end of the file */
bool
jp_read_all(int fd, void *buf, size_t len)
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
 * Put the saved file tmp_path in place as path, as the statistics files
 * are saved.  durable_rename() opens and fsyncs what it replaces; a FIFO or
 * other special file left there (start-up ignored it) would make it fail,
 * so that is removed first.  Failures are LOGged, never thrown.
 */
void
jp_replace_file(const char *tmp_path, const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		(void) unlink(path);
	(void) durable_rename(tmp_path, path, LOG);
}

/*
 * snprintf() a path into buf.  False if it does not fit: a path cut short
 * names another file, so the caller must not use it.
 */
static bool
jp_path_format(char *buf, size_t size, const char *fmt,...)
{
	va_list		args;
	int			n;

	va_start(args, fmt);
	n = vsnprintf(buf, size, fmt, args);
	va_end(args);
	if (n < 0 || (size_t) n >= size)
	{
		if (size > 0)
			buf[0] = '\0';
		return false;
	}
	return true;
}

/* a directory could not be created: errno says why */
static void
report_cannot_create(const char *path)
{
	ereport(WARNING,
			(errcode_for_file_access(),
			 errmsg("could not create jitdump directory \"%s\": %m", path),
			 errdetail("jitdump output is off for this backend."),
			 errhint("Set jitprof.jitdump_dir to a directory the server's OS user can write to.")));
}

/*
 * Make sure "path" is a directory we may safely create files in: create it
 * if missing; it must not be a symlink, must belong to us or to root, and
 * if others may write to it, it must have the sticky bit (as /tmp has), or
 * they could rename or replace what we create in it.
 */
static bool
private_dir(const char *path, bool report)
{
	struct stat st;

	if (mkdir(path, S_IRWXU | S_IRGRP | S_IXGRP | S_IROTH | S_IXOTH) != 0 &&
		errno != EEXIST)
	{
		if (report)
			report_cannot_create(path);
		return false;
	}
	if (lstat(path, &st) != 0)
	{
		if (report)
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not access jitdump directory \"%s\": %m", path),
					 errdetail("jitdump output is off for this backend."),
					 errhint("Set jitprof.jitdump_dir to a directory the server's OS user can write to.")));
		return false;
	}
	if (!S_ISDIR(st.st_mode))
	{
		if (report)
			ereport(WARNING,
					(errmsg("jitdump directory \"%s\" is not a directory", path),
					 errdetail("It is a symbolic link or another kind of file; jitdump output is off for this backend."),
					 errhint("Remove \"%s\", or set jitprof.jitdump_dir to another directory.", path)));
		return false;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0)
	{
		if (report)
			ereport(WARNING,
					(errmsg("jitdump directory \"%s\" belongs to another user", path),
					 errdetail("The directory belongs to user ID %d, the server runs as user ID %d; jitdump output is off for this backend.",
							   (int) st.st_uid, (int) geteuid()),
					 errhint("Remove \"%s\", or set jitprof.jitdump_dir to another directory.", path)));
		return false;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
	{
		if (report)
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
 * Create (if missing) and check <dir>/.debug and <dir>/.debug/jit, the
 * directories perf inject expects above a jitdump file.  They may sit in a
 * shared directory such as /tmp.  On success jit_dir (MAXPGPATH bytes)
 * holds <dir>/.debug/jit.
 *
 * Callers have built their longer paths under dir first, so these fit.
 */
static bool
debug_dirs(const char *dir, char *jit_dir, bool report)
{
	char		debug_dir[MAXPGPATH];

	if (!jp_path_format(debug_dir, sizeof(debug_dir), "%s/.debug", dir) ||
		!jp_path_format(jit_dir, MAXPGPATH, "%s/.debug/jit", dir))
		return false;
	return private_dir(debug_dir, report) && private_dir(jit_dir, report);
}

/*
 * Make a fresh directory from "tmpl" (ending in XXXXXX) with mkdtemp(),
 * mode 0700, inside the directories debug_dirs() checked.
 */
static bool
make_temp_dir(char *tmpl, bool report)
{
	if (mkdtemp(tmpl) != NULL)
		return true;
	if (report)
		report_cannot_create(tmpl);
	return false;
}

/*
 * A directory too long for the paths under it: refused before anything is
 * created, rather than cut short into the path of another file.  The limit
 * is the one SET enforces (check_jitdump_dir in sink_jitdump.c); a
 * directory that comes from JITDUMPDIR, the default, is not checked there.
 */
static void
report_too_long(const char *dir)
{
	ereport(WARNING,
			(errmsg("jitprof.jitdump_dir is too long"),
			 errdetail("It is %zu bytes long, and at most %d bytes leave room for the files jitprof creates under it; jitdump output is off for this backend.",
					   strlen(dir), JP_JITDUMP_DIR_MAXLEN),
			 errhint("Set jitprof.jitdump_dir to a shorter path.")));
}

/*
 * Make the fresh directory <dir>/.debug/jit/<prefix>-<date>-XXXXXX of a
 * file named "file", for the jitdump sink and the step file: on success
 * made_dir holds that directory and file_path the path of "file" in it
 * (both MAXPGPATH bytes), which the caller creates.  A NULL or empty dir is
 * /tmp.  Every path is built first, so that a dir too long for them
 * creates nothing.  dir_ok, if not NULL, is asked about dir and then about
 * <dir>/.debug/jit before anything is created in each; it reports its own
 * refusal.  With "report", every other failure is a WARNING worded for the
 * jitdump sink (the step file, in the same directories, stays silent).
 */
bool
jp_make_jit_dir(const char *dir, const char *prefix, const char *date,
				const char *file, bool (*dir_ok) (const char *dir),
				bool report, char *made_dir, char *file_path)
{
	char		jit_dir[MAXPGPATH];

	if (dir == NULL || dir[0] == '\0')
		dir = "/tmp";
	if (!jp_path_format(made_dir, MAXPGPATH, "%s/.debug/jit/%s-%s-XXXXXX",
						dir, prefix, date) ||
		!jp_path_format(file_path, MAXPGPATH, "%s/%s", made_dir, file))
	{
		if (report)
			report_too_long(dir);
		return false;
	}

	if ((dir_ok != NULL && !dir_ok(dir)) ||
		!debug_dirs(dir, jit_dir, report) ||
		(dir_ok != NULL && !dir_ok(jit_dir)) ||
		!make_temp_dir(made_dir, report))
		return false;
	/* mkdtemp() filled in the XXXXXX that file_path starts with too */
	memcpy(file_path, made_dir, strlen(made_dir));
	return true;
}
