/*-------------------------------------------------------------------------
 *
 * got_patch.c
 *	  Rebind some of one loaded library's calls, through its GOT.
 *
 * jp_got_patch() rewrites the GOT entries through which one library
 * (llvmjit.so) calls an interposer table's functions, so that only that
 * library's calls change, whatever was loaded first.
 *
 * Contract: it runs on a backend's only thread before the library calls
 * any of the functions, so no call races with a write.  It is idempotent,
 * and all or nothing: a failure puts back what it wrote, gives one WARNING
 * and returns false; nothing here throws or can crash the backend.  x86-64
 * only; elsewhere it returns false and llvmjit runs stock.  How and why:
 * doc/provider.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/got_patch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include "provider/provider.h"

#if defined(__x86_64__)

/* most GOT entries rebound in one library */
#define MAX_SLOTS	32

/* the loaded library, as dl_iterate_phdr shows it */
typedef struct LoadedObject
{
	uintptr_t	code;			/* the address to look for */
	bool		found;
	Elf64_Addr	base;
	const Elf64_Phdr *phdr;
	int			phnum;
} LoadedObject;

/* one GOT entry to rebind */
typedef struct GotSlot
{
	void	  **slot;
	void	   *old_value;
	int			interposer;		/* index into the interposer table */
} GotSlot;

/* the library's dynamic tables, from its PT_DYNAMIC segment */
typedef struct DynamicTables
{
	const Elf64_Sym *symtab;
	const char *strtab;
	size_t		strsz;
	const Elf64_Rela *tables[2];	/* DT_RELA, DT_JMPREL */
	size_t		table_sizes[2];
	size_t		relaent;
} DynamicTables;

static int
find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	LoadedObject *obj = (LoadedObject *) arg;

	for (int i = 0; i < info->dlpi_phnum; i++)
	{
		const Elf64_Phdr *ph = &info->dlpi_phdr[i];
		uintptr_t	start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD &&
			obj->code >= start && obj->code < start + ph->p_memsz)
		{
			obj->found = true;
			obj->base = info->dlpi_addr;
			obj->phdr = info->dlpi_phdr;
			obj->phnum = info->dlpi_phnum;
			return 1;
		}
	}
	return 0;
}

/* the PT_LOAD segment holding [addr, addr + len), or NULL */
static const Elf64_Phdr *
segment_of(const LoadedObject *obj, uintptr_t addr, size_t len)
{
	for (int i = 0; i < obj->phnum; i++)
	{
		const Elf64_Phdr *ph = &obj->phdr[i];
		uintptr_t	start = obj->base + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && addr >= start &&
			addr + len >= addr && addr + len <= start + ph->p_memsz)
			return ph;
	}
	return NULL;
}

/* a d_ptr of the dynamic section as an address in the object, or 0 */
static uintptr_t
dynamic_address(const LoadedObject *obj, Elf64_Addr ptr)
{
	if (segment_of(obj, ptr, 1) != NULL)
		return ptr;
	if (segment_of(obj, obj->base + ptr, 1) != NULL)
		return obj->base + ptr;
	return 0;
}

/*
 * The page range the loader made read-only for RELRO, rounded as it rounds
 * it (start and end down to a page), or an empty range.
 */
static void
relro_range(const LoadedObject *obj, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t	page = (uintptr_t) sysconf(_SC_PAGESIZE);

	*lo = *hi = 0;
	for (int i = 0; i < obj->phnum; i++)
	{
		const Elf64_Phdr *ph = &obj->phdr[i];

		if (ph->p_type == PT_GNU_RELRO)
		{
			uintptr_t	start = obj->base + ph->p_vaddr;

			*lo = start & ~(page - 1);
			*hi = (start + ph->p_memsz) & ~(page - 1);
		}
	}
}

/*
 * Write value into a GOT entry and read it back.  An entry in the RELRO
 * range is on a read-only page: that page is made writable for the write
 * and read-only again.  An entry elsewhere must be in a writable segment.
 */
static bool
write_slot(const LoadedObject *obj, void **slot, void *value)
{
	uintptr_t	addr = (uintptr_t) slot;
	uintptr_t	page_size = (uintptr_t) sysconf(_SC_PAGESIZE);
	void	   *page = (void *) (addr & ~(page_size - 1));
	uintptr_t	relro_lo;
	uintptr_t	relro_hi;
	const Elf64_Phdr *seg = segment_of(obj, addr, sizeof(void *));

	if (seg == NULL)
		return false;
	relro_range(obj, &relro_lo, &relro_hi);

	if (addr >= relro_lo && addr < relro_hi)
	{
		if (mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0)
			return false;
		*slot = value;
		/* if this fails the entry stays writable, and still works */
		(void) mprotect(page, page_size, PROT_READ);
	}
	else if (seg->p_flags & PF_W)
		*slot = value;
	else
		return false;

	return *(void *volatile *) slot == value;
}

/* detail: why, a complete sentence, translated */
static void
warn_not_bound(const char *library, const char *detail)
{
	ereport(WARNING,
			(errmsg("jitprof cannot link the code of JIT provider \"%s\", so it names and profiles none of it",
					library),
			 errdetail_internal("%s", detail),
			 errhint("Set jitprof.llvmjit_library to PostgreSQL's llvmjit for LLVM 14, or set jit_provider = 'llvmjit' to do without jitprof.")));
}

/*
 * Find the library's dynamic symbol, string and relocation tables.  False,
 * after a WARNING, if it has none that can be used.
 */
static bool
read_dynamic(const LoadedObject *obj, const char *library, DynamicTables *dt)
{
	const Elf64_Dyn *dyn = NULL;

	memset(dt, 0, sizeof(*dt));
	dt->relaent = sizeof(Elf64_Rela);
	for (int i = 0; i < obj->phnum; i++)
		if (obj->phdr[i].p_type == PT_DYNAMIC)
			dyn = (const Elf64_Dyn *) (obj->base + obj->phdr[i].p_vaddr);
	if (dyn == NULL)
	{
		warn_not_bound(library, _("The library has no dynamic section."));
		return false;
	}

	for (; dyn->d_tag != DT_NULL; dyn++)
	{
		switch (dyn->d_tag)
		{
			case DT_SYMTAB:
				dt->symtab = (const Elf64_Sym *) dynamic_address(obj, dyn->d_un.d_ptr);
				break;
			case DT_STRTAB:
				dt->strtab = (const char *) dynamic_address(obj, dyn->d_un.d_ptr);
				break;
			case DT_STRSZ:
				dt->strsz = dyn->d_un.d_val;
				break;
			case DT_RELA:
				dt->tables[0] = (const Elf64_Rela *) dynamic_address(obj, dyn->d_un.d_ptr);
				break;
			case DT_RELASZ:
				dt->table_sizes[0] = dyn->d_un.d_val;
				break;
			case DT_RELAENT:
				dt->relaent = dyn->d_un.d_val;
				break;
			case DT_JMPREL:
				dt->tables[1] = (const Elf64_Rela *) dynamic_address(obj, dyn->d_un.d_ptr);
				break;
			case DT_PLTRELSZ:
				dt->table_sizes[1] = dyn->d_un.d_val;
				break;
			case DT_PLTREL:
				if (dyn->d_un.d_val != DT_RELA)
				{
					warn_not_bound(library, _("The library's PLT relocations are not of type RELA."));
					return false;
				}
				break;
		}
	}
	if (dt->symtab == NULL || dt->strtab == NULL ||
		dt->relaent != sizeof(Elf64_Rela))
	{
		warn_not_bound(library, _("The library's dynamic section could not be read."));
		return false;
	}

	return true;
}

/*
 * Every GOT entry of the library bound to one of the interposers'
 * functions, into slots (at most MAX_SLOTS) and *nslots.  False, after a
 * WARNING, if there are too many.
 */
static bool
find_slots(const LoadedObject *obj, const DynamicTables *dt, const char *library,
		   const JitprofInterposer *interposers, int ninterposers,
		   GotSlot *slots, int *nslots)
{
	*nslots = 0;
	for (int t = 0; t < 2; t++)
	{
		if (dt->tables[t] == NULL)
			continue;
		for (size_t r = 0; r < dt->table_sizes[t] / sizeof(Elf64_Rela); r++)
		{
			const Elf64_Rela *rela = &dt->tables[t][r];
			unsigned	type = ELF64_R_TYPE(rela->r_info);
			const Elf64_Sym *sym;
			const char *name;

			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			sym = &dt->symtab[ELF64_R_SYM(rela->r_info)];
			if (sym->st_name >= dt->strsz)
				continue;
			name = dt->strtab + sym->st_name;

			for (int i = 0; i < ninterposers; i++)
			{
				if (strcmp(name, interposers[i].symbol) != 0)
					continue;
				if (*nslots >= MAX_SLOTS)
				{
					warn_not_bound(library, _("The library has too many GOT entries to rebind."));
					return false;
				}
				slots[*nslots].slot = (void **) (obj->base + rela->r_offset);
				slots[*nslots].interposer = i;
				(*nslots)++;
			}
		}
	}

	return true;
}

/*
 * Check every entry before any is changed: each required function has one,
 * each lies inside the library, and each is bound, to one definition (its
 * original, into originals[]) or already to its replacement.  Records each
 * entry's old value.  False, after a WARNING, if the library cannot be
 * rebound.
 */
static bool
check_slots(const LoadedObject *obj, const char *library,
			const JitprofInterposer *interposers, int ninterposers,
			GotSlot *slots, int nslots, void **originals)
{
	for (int i = 0; i < ninterposers; i++)
		originals[i] = *interposers[i].original;
	for (int i = 0; i < ninterposers; i++)
	{
		bool		found = false;

		for (int s = 0; s < nslots; s++)
			found |= (slots[s].interposer == i);
		if (!found && interposers[i].required)
		{
			char	   *why = psprintf(_("The library does not call %s."),
									   interposers[i].symbol);

			warn_not_bound(library, why);
			return false;
		}
	}
	for (int s = 0; s < nslots; s++)
	{
		const JitprofInterposer *ip = &interposers[slots[s].interposer];
		void	   *value;

		if (segment_of(obj, (uintptr_t) slots[s].slot, sizeof(void *)) == NULL ||
			(uintptr_t) slots[s].slot % sizeof(void *) != 0)
		{
			warn_not_bound(library, _("A GOT entry of the library lies outside it."));
			return false;
		}
		value = *slots[s].slot;
		slots[s].old_value = value;

		if (value == ip->replacement)
		{
			/* bound already, by an earlier call in this process */
			if (originals[slots[s].interposer] == NULL)
			{
				warn_not_bound(library, _("The library's GOT was rebound by another copy of jitprof."));
				return false;
			}
			continue;
		}
		if (value == NULL || segment_of(obj, (uintptr_t) value, 1) != NULL)
		{
			/* not bound yet: it points back into the library's PLT */
			warn_not_bound(library, _("The library's calls of LLVM are not bound yet."));
			return false;
		}
		if (originals[slots[s].interposer] != NULL &&
			originals[slots[s].interposer] != value)
		{
			warn_not_bound(library, _("The library binds one function to two different definitions."));
			return false;
		}
		originals[slots[s].interposer] = value;
	}

	return true;
}

/*
 * The dangerous part: rewrite the library's GOT.  The originals are stored
 * first (the replacements call them), then each entry that does not hold
 * its replacement yet is written and read back (write_slot).  All or
 * nothing: if one write fails, every entry written so far gets its old value
 * back and the library runs as it was.  Must run before the library calls
 * any of the functions, on the backend's only thread, after check_slots
 * passed.  False, after a WARNING, if the GOT could not be written.
 */
static bool
write_slots(const LoadedObject *obj, const char *library,
			const JitprofInterposer *interposers, int ninterposers,
			GotSlot *slots, int nslots, void *const *originals)
{
	int			done;

	/* originals first: the replacements call them */
	for (int i = 0; i < ninterposers; i++)
		*interposers[i].original = originals[i];

	for (done = 0; done < nslots; done++)
	{
		const JitprofInterposer *ip = &interposers[slots[done].interposer];

		if (slots[done].old_value == ip->replacement)
			continue;
		if (!write_slot(obj, slots[done].slot, ip->replacement))
			break;
	}
	if (done < nslots)
	{
		/* put back what was written: the library runs as it was */
		while (--done >= 0)
			(void) write_slot(obj, slots[done].slot, slots[done].old_value);
		warn_not_bound(library, _("The library's GOT could not be written."));
		return false;
	}
	return true;
}

bool
jp_got_patch(const void *code, const char *library,
			 const JitprofInterposer *interposers, int ninterposers)
{
	LoadedObject obj = {0};
	DynamicTables dt;
	GotSlot		slots[MAX_SLOTS];
	int			nslots;
	void	   *originals[MAX_SLOTS];

	obj.code = (uintptr_t) code;
	dl_iterate_phdr(find_object, &obj);
	if (!obj.found)
	{
		warn_not_bound(library, _("The library is not loaded."));
		return false;
	}
	return read_dynamic(&obj, library, &dt) &&
		find_slots(&obj, &dt, library, interposers, ninterposers,
				   slots, &nslots) &&
		check_slots(&obj, library, interposers, ninterposers,
					slots, nslots, originals) &&
		write_slots(&obj, library, interposers, ninterposers,
					slots, nslots, originals);
}

#else							/* !__x86_64__ */

bool
jp_got_patch(const void *code, const char *library,
			 const JitprofInterposer *interposers, int ninterposers)
{
	ereport(WARNING,
			(errmsg("jitprof cannot take over linking for \"%s\" on this CPU architecture",
					library),
			 errdetail("JIT-compiled code is linked by PostgreSQL's llvmjit alone; jitprof names and profiles none of it."),
			 errhint("Set jit_provider = 'llvmjit' to do without jitprof.")));
	return false;
}

#endif							/* __x86_64__ */
