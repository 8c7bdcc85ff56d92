/*-------------------------------------------------------------------------
 *
 * jitprof_llvm.h
 *	  The one interface between jitprof.so and jitprof_llvm.so.
 *
 * jitprof_llvm.so (the part that needs LLVM, libstdc++ and libelf) exports
 * a single function, JP_LLVM_CONNECT; jitprof.so calls it with a table of
 * its own functions and settings and gets back a table of jitprof_llvm.so's.
 * Neither library refers to a symbol of the other, so neither depends on
 * the order in which the dynamic loader sees them.
 *
 * Contract: every function in both tables runs in the backend's only
 * thread; the core table's functions are called from inside LLVM's call
 * stack, never throw an ERROR and allocate with malloc.  Plain C, included
 * by the C and C++ files of both libraries (C++ inside extern "C").  Why
 * two libraries: doc/provider.md, "Two libraries".
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/core/jitprof_llvm.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_LLVM_H
#define JITPROF_LLVM_H

#include <stddef.h>
#include <stdint.h>

/* bump when either table changes: the two libraries are built together */
#define JP_LLVM_ABI_VERSION 6

/* name of the library (in $libdir) and of its one exported function */
#define JP_LLVM_LIBRARY		"jitprof_llvm"
#define JP_LLVM_CONNECT		"jitprof_llvm_connect"

struct JitprofSink;
struct LLVMJitContext;

/* values of jitprof.linker, and the linker a backend ended up with */
typedef enum JitprofLinkerKind
{
	JP_LINKER_NONE = 0,			/* no object layer created yet */
	JP_LINKER_JITLINK,
	JP_LINKER_RTDYLD
} JitprofLinkerKind;

/*
 * values of jitprof.llvm_plugins (a comparison aid, doc/perf.md): which of
 * LLVM's own ORC plugins (LLVM 19 and later) jitprof_llvm.so attaches to
 * its JITLink layer, besides jitprof's sinks.  A bit set.
 */
typedef enum JitprofLlvmPlugins
{
	JP_LLVM_PLUGINS_OFF = 0,
	JP_LLVM_PLUGINS_PERF = 1,	/* PerfSupportPlugin: a jitdump of LLVM's */
	JP_LLVM_PLUGINS_DEBUGGER = 2,	/* DebugObjectManagerPlugin: gdb */
	JP_LLVM_PLUGINS_BOTH = 3
} JitprofLlvmPlugins;

/*
 * One row of a function's step table (issue 12): the code from "offset"
 * (bytes from the function's start) up to the next row's offset implements
 * step "step" of its expression, listed on line "line" of the step file.
 * step >= 0 is an expression step; JP_STEP_NONE code of no step (the
 * function's prologue, code LLVM gave no line); JP_STEP_ATTRIBUTE(a) and
 * below, the deforming of attribute a (0-based) by a deform function,
 * inlined or not.  Read from the DWARF line table of the linked object
 * (linker.cpp), whose column encodes the step (llvm_steps.c):
 * 0 none, 1..JP_COLUMN_DEFORM step + 1, above it JP_COLUMN_DEFORM + 1 + a.
 */
typedef struct JitprofStepRange
{
	uint32_t	offset;
	uint32_t	line;
	int32_t		step;
} JitprofStepRange;

#define JP_STEP_NONE		(-1)
#define JP_STEP_ATTRIBUTE(a) (-2 - (a))
#define JP_COLUMN_DEFORM	10000

/* most rows kept per function: the rest of its code counts as the last */
#define JP_MAX_STEP_RANGES	4096

/*
 * Unwinding information of one function (issue 12), for the jitdump sink's
 * JIT_CODE_UNWINDING_INFO: the function's CIE and FDE from the object's
 * .eh_frame, rewritten by the linker (eh_frame.cpp) into a self-contained
 * CIE + FDE pair that can be placed anywhere.  The CIE has augmentation "zR"
 * with pointers DW_EH_PE_pcrel | DW_EH_PE_sdata4, the FDE follows it right
 * away (its CIE pointer is relative), and the only position-dependent field
 * is the FDE's 4-byte pc_begin at offset eh_frame_pc_field, which whoever
 * places the pair fills in (function start - address of that field).  Both
 * records are padded with DW_CFA_nop to multiples of 8 bytes; the pair is at
 * most JP_MAX_UNWIND_BYTES.  A function whose FDE is missing, has an
 * encoding or a CFA instruction this does not know (DW_CFA_set_loc), or is
 * larger, gets none.
 */
#define JP_MAX_UNWIND_BYTES	512

/* A function as the linker sees it: llvmjit's name and where it landed. */
typedef struct JitprofLinkedFunction
{
	const char *llvm_name;
	uint64_t	address;
	uint64_t	size;
	const JitprofStepRange *steps;	/* sorted by offset; NULL if none */
	int			nsteps;
	/* unwinding information, when core->unwind_wanted() said so */
	const uint8_t *eh_frame;	/* CIE + FDE, see above; NULL if none */
	uint32_t	eh_frame_size;
	uint32_t	eh_frame_pc_field;
	/* bytes after the function's end that no code of any object uses */
	uint64_t	room_after;
} JitprofLinkedFunction;

/* the JIT code address space (code_arena.cpp) */
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

/* what the gdb sink did (sink_gdb.c) */
typedef struct JitprofGdbCounters
{
	uint64_t	objects_registered;
	uint64_t	objects_live;
	uint64_t	failures;
	uint64_t	build_us;		/* making ELF images */
	uint64_t	register_us;	/* linking them in and telling the debugger */
	uint64_t	unregister_us;
} JitprofGdbCounters;

/*
 * jitprof.so's side, handed to jitprof_llvm.so: the registry that the
 * linker reports to, and the settings it reads.  The settings are pointers
 * to the GUC variables, so that a SET is seen at once.
 */
typedef struct JitprofCoreTable
{
	uint32_t	abi_version;

	/* registry.c */
	void		(*object_linked) (uint64_t key,
								  const JitprofLinkedFunction *functions,
								  int nfunctions);
	void		(*object_freed) (uint64_t key);
	void		(*link_failed) (void);
	void		(*link_error) (const char *message);
	void		(*register_sink) (const struct JitprofSink *sink);
	bool		(*stable_name) (const char *llvm_name, char *buf, size_t len);
	void		(*linker_fallback) (const char *reason);
	/* one of LLVM's plugins (a JitprofLlvmPlugins bit) could not be attached */
	void		(*llvm_plugin_failed) (int plugin, const char *reason);

	/* GUCs (jitprof.c) */
	const int  *linker;			/* jitprof.linker, a JitprofLinkerKind */
	const bool *debug_fail_link;	/* jitprof.debug_fail_link */
	const bool *gdb;			/* jitprof.gdb */
	const int  *code_arena_max_size;	/* jitprof.code_arena_max_size, kB */
	const bool *steps;			/* jitprof.steps */
	const int  *llvm_plugins;	/* jitprof.llvm_plugins, JitprofLlvmPlugins */
	/* steps.c: this backend's step file (absolute path), or NULL */
	const char *(*steps_file_path) (void);
	/* sink_jitdump.c: should the linker collect unwinding information? */
	bool		(*unwind_wanted) (void);
} JitprofCoreTable;

/*
 * One LLVM C API function that llvmjit.so calls and jitprof_llvm.so
 * replaces.  jitprof.so binds llvmjit.so's call to the replacement
 * (got_patch.c), and stores the function the call was bound to before in
 * *original, which the replacement calls on.
 */
typedef struct JitprofInterposer
{
	const char *symbol;
	void	   *replacement;
	void	  **original;
	bool		required;		/* without it jitprof links none of llvmjit's
								 * code */
} JitprofInterposer;

/*
 * Debug information for one generated function (steps.c, llvm_steps.c):
 * its source file is the step listing; the function's header is on
 * first_line and its step (or deformed attribute) k on first_line + 1 + k.
 */
typedef struct JitprofDebugInfo
{
	const char *llvm_name;
	const char *directory;
	const char *file_name;
	int			first_line;
	int			nlines;			/* steps, or attributes of a deform function */
	bool		is_deform;
} JitprofDebugInfo;

/* jitprof_llvm.so's side, handed back to jitprof.so */
typedef struct JitprofLlvmTable
{
	uint32_t	abi_version;
	const char *llvm_version;	/* LLVM the library was built with */

	/* linker.cpp */
	const JitprofInterposer *interposers;
	int			ninterposers;
	JitprofLinkerKind (*linker_in_use) (void);

	/* code_arena.cpp, sink_gdb.c: for jitprof_status */
	void		(*arena_stats) (JitprofArenaStats *stats);
	void		(*gdb_counters) (JitprofGdbCounters *counters);

	/*
	 * llvm_entry.c: the functions llvmjit generated in "context" numbered
	 * from counter_before on, in generation order, each given a frame
	 * pointer.  Stores at most max palloc'd names, and whether each is a
	 * deform function; returns how many.
	 */
	int			(*new_functions) (struct LLVMJitContext *context,
								  int counter_before, int max,
								  char **names, bool *is_deform);

	/*
	 * llvm_steps.c: give a function of context's module debug information
	 * (one line per basic block's step).  False, with the function left
	 * without debug information, if that could not be done.
	 */
	bool		(*add_debug_info) (struct LLVMJitContext *context,
								   const JitprofDebugInfo *info);
} JitprofLlvmTable;

typedef const JitprofLlvmTable *(*JitprofLlvmConnect) (const JitprofCoreTable *core);

#endif							/* JITPROF_LLVM_H */
