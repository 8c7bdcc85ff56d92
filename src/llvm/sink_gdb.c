/*-------------------------------------------------------------------------
 *
 * sink_gdb.c
 *	  GDB JIT interface sink: JIT-compiled functions made visible to gdb.
 *
 * Contract: the process has one list, libLLVM's __jit_debug_descriptor,
 * which LLVM's own GDB listener may write too.  Every writer runs on the
 * backend's one thread and completes its update within one call; nothing
 * about the list is cached between calls, and an entry whose neighbours no
 * longer point at it is left linked, with a WARNING.  Both callbacks run
 * inside LLVM's call stack: malloc only, WARNINGs, never ERRORs.  Part of
 * jitprof_llvm.so (it needs libelf).  The long story: doc/gdb.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/llvm/sink_gdb.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit/jit.h"
#include "portability/instr_time.h"

#include "core/core.h"
#include "llvm/sink_gdb_dwarf.h"
#include "llvm/linker.h"

/*
 * The GDB JIT interface, as gdb's manual ("JIT Compilation Interface")
 * defines it.  The descriptor and the function are libLLVM-14's.
 */
typedef enum
{
	JIT_NOACTION = 0,
	JIT_REGISTER_FN,
	JIT_UNREGISTER_FN
} jit_actions_t;

struct jit_code_entry
{
	struct jit_code_entry *next_entry;
	struct jit_code_entry *prev_entry;
	const char *symfile_addr;
	uint64_t	symfile_size;
};

struct jit_descriptor
{
	uint32_t	version;
	uint32_t	action_flag;	/* a jit_actions_t */
	struct jit_code_entry *relevant_entry;
	struct jit_code_entry *first_entry;
};

extern struct jit_descriptor __jit_debug_descriptor;
extern void __jit_debug_register_code(void);

/* largest code span of one object that is copied into an image */
#define MAX_TEXT_SPAN	(64 * 1024 * 1024)

/* one registration: the list entry gdb reads, and the image it points to */
typedef struct GdbImage
{
	struct jit_code_entry entry;	/* first: gdb knows it by this address */
	uint64		key;			/* JitprofObject.key */
	struct GdbImage *next;		/* this backend's registrations */
	size_t		size;
	char		image[FLEXIBLE_ARRAY_MEMBER];
} GdbImage;

static JitprofGdbCounters counters;

static GdbImage *registered = NULL;
static bool elf_ready = false;

static bool gdb_enabled(void);
static void gdb_object_linked(const JitprofObject *object);
static void gdb_object_freed(const JitprofObject *object);

static const JitprofSink gdb_sink = {
	.enabled = gdb_enabled,
	.object_linked = gdb_object_linked,
	.object_freed = gdb_object_freed,
};

/* Called once, when jitprof_llvm.so is connected. */
void
jp_gdb_init(void)
{
	jp_core->register_sink(&gdb_sink);
}

/* jitprof_status's copy of the counters */
void
jp_gdb_counters(JitprofGdbCounters *out)
{
	*out = counters;
}

static bool
gdb_enabled(void)
{
	return *jp_core->gdb || jit_debugging_support;
}

/* name gdb shows for a function */
static const char *
function_name(const JitprofFunction *fn)
{
	return fn->origin.symbol[0] != '\0' ? fn->origin.symbol : fn->llvm_name;
}

/* a libelf call failed; "function" names it */
static void
warn_elf(const char *function)
{
	ereport(WARNING,
			(errmsg("could not build the gdb image of JIT-compiled code: %s",
					elf_errmsg(-1)),
			 errdetail("The libelf function %s failed. The code runs normally, but gdb will not know its function names.",
					   function)));
}

static void
warn_no_memory(void)
{
	ereport(WARNING,
			(errcode(ERRCODE_OUT_OF_MEMORY),
			 errmsg("out of memory"),
			 errdetail("The gdb image of JIT-compiled code could not be built. The code runs normally, but gdb will not know its function names.")));
}

/* a new section with one data buffer; NULL (and a WARNING) on failure */
static Elf_Scn *
add_section(Elf *elf, size_t name, Elf64_Word type, Elf64_Xword flags,
			void *buf, size_t size, Elf_Type dtype, size_t align)
{
	Elf_Scn    *scn;
	Elf_Data   *data;
	Elf64_Shdr *shdr;

	if ((scn = elf_newscn(elf)) == NULL ||
		(data = elf_newdata(scn)) == NULL ||
		(shdr = elf64_getshdr(scn)) == NULL)
	{
		warn_elf("elf_newscn");
		return NULL;
	}
	data->d_buf = buf;
	data->d_size = size;
	data->d_type = dtype;
	data->d_align = align;
	data->d_off = 0;
	data->d_version = EV_CURRENT;

	shdr->sh_name = name;
	shdr->sh_type = type;
	shdr->sh_flags = flags;
	shdr->sh_addralign = align;
	return scn;
}

/*
 * Write the ELF image of an object to fd: an ET_EXEC file (so that symbol
 * values are absolute addresses) whose .text has sh_addr at the code's load
 * address and a copy of its bytes, with one global FUNC symbol per
 * function.  Returns the image size, or 0 after a WARNING.
 */
static size_t
write_image(int fd, const JitprofObject *object, uint64 lo, uint64 hi)
{
	Elf		   *elf;
	Elf64_Ehdr *ehdr;
	Elf64_Shdr *shdr;
	Elf_Scn    *text;
	Elf_Scn    *symtab;
	Elf_Scn    *strtab;
	Elf_Scn    *shstrtab;
	Elf64_Sym  *syms = NULL;
	char	   *strs = NULL;
	size_t		strs_len = 1;
	char		shstrs[] = "\0.text\0.symtab\0.strtab\0.shstrtab"
	"\0.debug_abbrev\0.debug_info\0.debug_line";
	off_t		written;
	size_t		result = 0;
	JpGdbDwarf	dwarf;
	bool		have_dwarf;

	/* the offsets of the names in shstrs */
#define SHSTR_TEXT		1
#define SHSTR_SYMTAB	7
#define SHSTR_STRTAB	15
#define SHSTR_SHSTRTAB	23
#define SHSTR_DEBUG_ABBREV	33
#define SHSTR_DEBUG_INFO	47
#define SHSTR_DEBUG_LINE	59

	/* lines of the step file, with jitprof.steps (sink_gdb_dwarf.c) */
	have_dwarf = jp_core->steps_file_path != NULL &&
		jp_gdb_dwarf_build(object, lo, hi, jp_core->steps_file_path(),
						   function_name, &dwarf);

	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (elf == NULL)
	{
		warn_elf("elf_begin");
		if (have_dwarf)
			jp_gdb_dwarf_free(&dwarf);
		return 0;
	}

	if ((ehdr = elf64_newehdr(elf)) == NULL)
	{
		warn_elf("elf64_newehdr");
		goto done;
	}
	ehdr->e_ident[EI_DATA] = ELFDATA2LSB;
#ifdef WORDS_BIGENDIAN
	ehdr->e_ident[EI_DATA] = ELFDATA2MSB;
#endif
	ehdr->e_ident[EI_OSABI] = ELFOSABI_NONE;
	ehdr->e_type = ET_EXEC;
	ehdr->e_machine = JP_ELF_MACHINE;
	ehdr->e_version = EV_CURRENT;

	/* symbol 0 is the null symbol, string 0 the empty string */
	for (int i = 0; i < object->nfunctions; i++)
		strs_len += strlen(function_name(&object->functions[i])) + 1;
	syms = calloc(object->nfunctions + 1, sizeof(Elf64_Sym));
	strs = malloc(strs_len);
	if (syms == NULL || strs == NULL)
	{
		warn_no_memory();
		goto done;
	}

	/* section 1 */
	text = add_section(elf, SHSTR_TEXT, SHT_PROGBITS,
					   SHF_ALLOC | SHF_EXECINSTR,
					   (void *) (uintptr_t) lo, hi - lo, ELF_T_BYTE,
					   lo % 16 == 0 ? 16 : 1);

	if (text == NULL)
		goto done;

	strs[0] = '\0';
	strs_len = 1;
	for (int i = 0; i < object->nfunctions; i++)
	{
		const JitprofFunction *fn = &object->functions[i];
		const char *name = function_name(fn);
		Elf64_Sym  *sym = &syms[i + 1];

		sym->st_name = strs_len;
		strcpy(strs + strs_len, name);
		strs_len += strlen(name) + 1;
		sym->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sym->st_other = STV_DEFAULT;
		sym->st_shndx = elf_ndxscn(text);
		sym->st_value = fn->address;
		sym->st_size = fn->size;
	}

	symtab = add_section(elf, SHSTR_SYMTAB, SHT_SYMTAB, 0, syms,
						 (object->nfunctions + 1) * sizeof(Elf64_Sym),
						 ELF_T_SYM, 8);
	strtab = add_section(elf, SHSTR_STRTAB, SHT_STRTAB, 0, strs, strs_len,
						 ELF_T_BYTE, 1);
	shstrtab = add_section(elf, SHSTR_SHSTRTAB, SHT_STRTAB, 0, shstrs,
						   sizeof(shstrs), ELF_T_BYTE, 1);
	if (symtab == NULL || strtab == NULL || shstrtab == NULL)
		goto done;
	if (have_dwarf &&
		(add_section(elf, SHSTR_DEBUG_ABBREV, SHT_PROGBITS, 0, dwarf.abbrev,
					 dwarf.abbrev_len, ELF_T_BYTE, 1) == NULL ||
		 add_section(elf, SHSTR_DEBUG_INFO, SHT_PROGBITS, 0, dwarf.info,
					 dwarf.info_len, ELF_T_BYTE, 1) == NULL ||
		 add_section(elf, SHSTR_DEBUG_LINE, SHT_PROGBITS, 0, dwarf.line,
					 dwarf.line_len, ELF_T_BYTE, 1) == NULL))
		goto done;

	/* .symtab: names in .strtab, all symbols after the null one global */
	shdr = elf64_getshdr(symtab);
	shdr->sh_link = elf_ndxscn(strtab);
	shdr->sh_info = 1;
	shdr->sh_entsize = sizeof(Elf64_Sym);

	shdr = elf64_getshdr(text);
	shdr->sh_addr = lo;

	/* libelf 0.188 has no elf_setshstrndx() */
	ehdr->e_shstrndx = elf_ndxscn(shstrtab);

	written = elf_update(elf, ELF_C_WRITE);
	if (written <= 0)
	{
		warn_elf("elf_update");
		goto done;
	}
	result = (size_t) written;

done:
	elf_end(elf);
	free(syms);
	free(strs);
	if (have_dwarf)
		jp_gdb_dwarf_free(&dwarf);
	return result;
}

/*
 * Build the image of an object in malloc'd memory, with room for the
 * registration in front of it.  NULL (after a WARNING) on failure.
 */
static GdbImage *
build_image(const JitprofObject *object)
{
	uint64		lo = PG_UINT64_MAX;
	uint64		hi = 0;
	int			fd;
	size_t		size;
	GdbImage   *image = NULL;

	for (int i = 0; i < object->nfunctions; i++)
	{
		const JitprofFunction *fn = &object->functions[i];

		lo = Min(lo, fn->address);
		hi = Max(hi, fn->address + fn->size);
	}
	if (hi <= lo)
	{
		ereport(WARNING,
				(errmsg("JIT-compiled code was not registered with gdb because its functions have no size")));
		return NULL;
	}
	if (hi - lo > MAX_TEXT_SPAN)
	{
		ereport(WARNING,
				(errmsg("JIT-compiled code was not registered with gdb because its functions span %llu bytes",
						(unsigned long long) (hi - lo)),
				 errdetail("Code spanning more than %d bytes is not copied into a gdb image.",
						   MAX_TEXT_SPAN)));
		return NULL;
	}

	if (!elf_ready)
	{
		if (elf_version(EV_CURRENT) == EV_NONE)
		{
			warn_elf("elf_version");
			return NULL;
		}
		elf_ready = true;
	}

	fd = memfd_create("jitprof-gdb-image", MFD_CLOEXEC);
	if (fd < 0)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not create a memory file for a gdb image: %m")));
		return NULL;
	}

	size = write_image(fd, object, lo, hi);
	if (size > 0)
	{
		image = malloc(offsetof(GdbImage, image) + size);
		if (image == NULL)
			warn_no_memory();
		else if (pread(fd, image->image, size, 0) != (ssize_t) size)
		{
			ereport(WARNING,
					(errcode_for_file_access(),
					 errmsg("could not read back a gdb image: %m")));
			free(image);
			image = NULL;
		}
		else
			image->size = size;
	}
	close(fd);
	return image;
}

/* Insert an entry at the head of the process's list and tell the debugger. */
/*
 * Tell an attached debugger that ENTRY was added or taken off the list.
 * SIGPROF stays blocked across the call: when the sampler's signal arrives
 * while gdb steps over its breakpoint in __jit_debug_register_code, gdb
 * reads one event twice or misses one, and its view of the list drifts
 * from the list (test 021).  A sample due
 * meanwhile is taken when the mask is restored.
 */
static void
notify_debugger(uint32_t action, struct jit_code_entry *entry)
{
	sigset_t	prof;
	sigset_t	old;

	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	sigprocmask(SIG_BLOCK, &prof, &old);
	__jit_debug_descriptor.relevant_entry = entry;
	__jit_debug_descriptor.action_flag = action;
	__jit_debug_register_code();
	__jit_debug_descriptor.action_flag = JIT_NOACTION;
	__jit_debug_descriptor.relevant_entry = NULL;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void
register_entry(struct jit_code_entry *entry)
{
	struct jit_code_entry *head = __jit_debug_descriptor.first_entry;

	entry->prev_entry = NULL;
	entry->next_entry = head;
	if (head != NULL)
		head->prev_entry = entry;
	__jit_debug_descriptor.first_entry = entry;

	notify_debugger(JIT_REGISTER_FN, entry);
}

/*
 * Take an entry off the list and tell the debugger.  Returns false, having
 * changed nothing, if the list around the entry is not what it should be.
 */
static bool
unregister_entry(struct jit_code_entry *entry)
{
	struct jit_code_entry *prev = entry->prev_entry;
	struct jit_code_entry *next = entry->next_entry;

	if ((prev == NULL ? __jit_debug_descriptor.first_entry != entry :
		 prev->next_entry != entry) ||
		(next != NULL && next->prev_entry != entry))
		return false;

	if (prev == NULL)
		__jit_debug_descriptor.first_entry = next;
	else
		prev->next_entry = next;
	if (next != NULL)
		next->prev_entry = prev;

	notify_debugger(JIT_UNREGISTER_FN, entry);
	return true;
}

static void
gdb_object_linked(const JitprofObject *object)
{
	instr_time	start;
	instr_time	built;
	instr_time	end;
	GdbImage   *image;

	if (object->nfunctions == 0)
		return;

	INSTR_TIME_SET_CURRENT(start);
	image = build_image(object);
	if (image == NULL)
	{
		counters.failures++;
		return;
	}
	image->key = object->key;
	image->entry.symfile_addr = image->image;
	image->entry.symfile_size = image->size;

	INSTR_TIME_SET_CURRENT(built);
	register_entry(&image->entry);
	INSTR_TIME_SET_CURRENT(end);

	image->next = registered;
	registered = image;

	counters.objects_registered++;
	counters.objects_live++;
	INSTR_TIME_SUBTRACT(end, built);
	INSTR_TIME_SUBTRACT(built, start);
	counters.build_us += INSTR_TIME_GET_MICROSEC(built);
	counters.register_us += INSTR_TIME_GET_MICROSEC(end);
}

static void
gdb_object_freed(const JitprofObject *object)
{
	GdbImage  **link = &registered;
	instr_time	start;
	instr_time	end;

	while (*link != NULL && (*link)->key != object->key)
		link = &(*link)->next;
	if (*link == NULL)
		return;					/* its registration had failed */

	INSTR_TIME_SET_CURRENT(start);
	if (unregister_entry(&(*link)->entry))
	{
		GdbImage   *image = *link;

		*link = image->next;
		free(image);
	}
	else
	{
		/* gdb may still read it: keep the memory, forget the registration */
		ereport(WARNING,
				(errmsg("left JIT-compiled code registered with gdb because the gdb JIT code list was changed by other code"),
				 errdetail("Some other code in this process modified __jit_debug_descriptor without following its protocol.")));
		*link = (*link)->next;
	}
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	counters.unregister_us += INSTR_TIME_GET_MICROSEC(end);
	counters.objects_live--;
}
