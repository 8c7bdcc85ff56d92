/*-------------------------------------------------------------------------
 *
 * linker.h
 *	  Declarations shared by the files of jitprof_llvm.so.
 *
 * linker.cpp replaces the object layer that llvmjit creates, links with
 * JITLink (falling back to RuntimeDyld for an object JITLink cannot take, or
 * RuntimeDyld throughout, on request) and reports each linked and freed
 * object to jitprof.so's registry through jp_core (see jitprof_llvm.h); so
 * does code_arena.cpp for names and settings.  Those calls happen inside
 * LLVM's call stack: the registry never throws an ERROR, and allocates with
 * malloc.
 *
 * Only jitprof_llvm.so's files include this header; C++ files include it
 * inside extern "C" { }.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/llvm/linker.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_LINKER_H
#define JITPROF_LINKER_H

#include "core/jitprof_llvm.h"

/* llvm_entry.c: jitprof.so's table, set once by JP_LLVM_CONNECT */
extern const JitprofCoreTable *jp_core;

/* linker.cpp */
extern const JitprofInterposer jp_linker_interposers[];
extern const int jp_linker_ninterposers;
extern JitprofLinkerKind jp_linker_in_use(void);
extern const char *jp_llvm_version(void);

/* code_arena.cpp */
extern void jp_arena_stats(JitprofArenaStats *stats);

/* llvm_steps.c */
struct LLVMJitContext;
extern bool jp_add_debug_info(struct LLVMJitContext *context,
							  const JitprofDebugInfo *info);

/* sink_gdb.c */
extern void jp_gdb_init(void);
extern void jp_gdb_counters(JitprofGdbCounters *counters);

#endif							/* JITPROF_LINKER_H */
