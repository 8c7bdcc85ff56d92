/*-------------------------------------------------------------------------
 *
 * linker.h
 *	  The C interface between jitprof's C code and its C++ linker code.
 *
 * linker.cpp replaces the object layer that llvmjit creates, links with
 * JITLink (or RuntimeDyld, on request) and reports each linked and freed
 * object through the jp_registry_* functions below, which registry.c
 * implements.  Those are called from inside LLVM's call stack: they must
 * never throw an ERROR, and they allocate with malloc.
 *
 * C++ files include this header inside extern "C" { }.
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_LINKER_H
#define JITPROF_LINKER_H

#include <stddef.h>
#include <stdint.h>

/* values of jitprof.linker */
typedef enum JitprofLinkerKind
{
	JP_LINKER_NONE = 0,			/* no object layer created yet */
	JP_LINKER_JITLINK,
	JP_LINKER_RTDYLD
} JitprofLinkerKind;

/* A function as the linker sees it: llvmjit's name and where it landed. */
typedef struct JitprofLinkedFunction
{
	const char *llvm_name;
	uint64_t	address;
	uint64_t	size;
} JitprofLinkedFunction;

/* registry.c: called by the linker (never throw) */
extern void jp_registry_object_linked(uint64_t key,
									  const JitprofLinkedFunction *functions,
									  int nfunctions);
extern void jp_registry_object_freed(uint64_t key);
extern void jp_registry_link_failed(void);
extern void jp_registry_link_error(const char *message);
extern bool jp_registry_stable_name(const char *llvm_name, char *buf,
									size_t len);
extern void jp_registry_linker_fallback(const char *reason);

/* linker.cpp: read by the C side */
extern JitprofLinkerKind jp_linker_in_use;
extern const char *jp_linker_name(JitprofLinkerKind kind);
extern const char *jp_llvm_version(void);

/* jitprof.c: GUCs the linker reads when it creates a layer or links */
extern int	jitprof_linker;
extern bool jitprof_debug_fail_link;
extern int	jitprof_code_arena_max_size;	/* kB */

/* provider.c: is jitprof this backend's JIT provider? */
extern bool jitprof_provider_active;

/* code_arena.cpp: the JIT code address space */
typedef struct JitprofArenaStats
{
	uint64_t	reserved_bytes; /* address space reserved, live arenas */
	uint64_t	committed_bytes;	/* pages currently backing live code */
	uint64_t	allocations_live;
	uint64_t	allocations_total;
	uint64_t	arenas_created;
	uint64_t	arenas_smaller; /* reserved smaller than the usual step */
	uint64_t	reserve_failures;	/* reservations the kernel refused */
	uint64_t	objects_reused; /* got the addresses of an earlier copy */
	uint64_t	shapes_cached;	/* freed ranges kept for reuse */
} JitprofArenaStats;

extern void jp_arena_stats(JitprofArenaStats *stats);

#endif							/* JITPROF_LINKER_H */
