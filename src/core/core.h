/*-------------------------------------------------------------------------
 *
 * core.h
 *	  The bottom layer of jitprof (doc/architecture.md): the types every
 *	  layer shares, file I/O that never throws, and the settings that more
 *	  than one layer reads.
 *
 * A JIT function is described by plain C records: what naming knows of it
 * before it is linked (JitprofOrigin), and what the registry hands to every
 * sink once it is linked (JitprofFunction in a JitprofObject).  Sinks and the
 * sampler see only these records, never LLVM.
 *
 * core includes no other folder's header.  Its files are core/file_io.c,
 * core/plan_copy.c and core/settings.c; jitprof_llvm.h, the seam between jitprof.so and
 * jitprof_llvm.so, is core's second header, because the C++ side includes
 * it and cannot include this one.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/core/core.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_CORE_H
#define JITPROF_CORE_H

#include "jit/jit.h"
#include "nodes/execnodes.h"

#include "core/compat.h"
#include "core/elf_machine.h"
#include "core/jitprof_llvm.h"

/* sizes of the fixed-size strings in a function record */
#define JP_LLVM_NAME_LEN	64
#define JP_SYMBOL_LEN		160
#define JP_NODE_TYPE_LEN	32
#define JP_ROLE_LEN			32

/*
 * What jitprof knows of one generated function before it is linked: where it
 * comes from in the plan.  Filled in by naming.c, which makes the symbol
 * from the other fields (doc/names.md).
 *
 * "ordinal" is the function's number among the functions of its plan node
 * and role (a helper's: among its execution's helpers), 1 for the first; the
 * symbol ends in _<ordinal> from 2 on.  It is 0 for a deform function named
 * after its expression: such a name carries its expression's number, not
 * one of its own.  Readers take the number from here, never from the
 * symbol.
 */
typedef struct JitprofOrigin
{
	int64		queryid;
	int32		plan_node_id;	/* -1 for a helper */
	char		node_type[JP_NODE_TYPE_LEN];
	char		role[JP_ROLE_LEN];
	Oid			relid;			/* partition opened by tuple routing, or 0 */
	int32		ordinal;		/* see above; 0: none of its own */
	char		symbol[JP_SYMBOL_LEN];
} JitprofOrigin;

/* sizes of the strings that describe one expression step */
#define JP_OPCODE_LEN		48
#define JP_DETAIL_LEN		80

/*
 * What one step of a function's step table is, as jitprof_steps shows it:
 * "EEOP_FUNCEXPR_STRICT" / "float8mul", or "deform" / "l_quantity numeric
 * (attno 5)".  "step" is a JitprofStepRange.step value.
 */
typedef struct JitprofStepLabel
{
	int32		step;
	char		opcode[JP_OPCODE_LEN];
	char		detail[JP_DETAIL_LEN];
} JitprofStepLabel;

/* the labels of one function's steps, sorted by step; one malloc'd block */
typedef struct JitprofStepLabels
{
	int			nlabels;
	JitprofStepLabel labels[FLEXIBLE_ARRAY_MEMBER];
} JitprofStepLabels;

/* most labels kept per function (an expression with more steps keeps these) */
#define JP_MAX_STEP_LABELS	4096

/* One linked function, as the sinks and the SQL views see it. */
typedef struct JitprofFunction
{
	uint64		address;
	uint64		size;
	char		llvm_name[JP_LLVM_NAME_LEN];
	JitprofOrigin origin;
	/* PC offset -> step table (jitprof.steps); malloc'd, owned by the object */
	JitprofStepRange *steps;
	int			nsteps;
	/* what those steps are (jitprof.steps); malloc'd, owned by the object */
	JitprofStepLabels *step_labels;

	/*
	 * Unwinding information (see JitprofLinkedFunction): the linker's memory,
	 * valid only while the sinks' object_linked callbacks run; NULL after.
	 */
	const uint8 *eh_frame;
	uint32		eh_frame_size;
	uint32		eh_frame_pc_field;
	uint64		room_after;
} JitprofFunction;

/* One linked object (one llvmjit module): the unit of loading and freeing. */
typedef struct JitprofObject
{
	uint64		key;			/* linker's resource key, unique while live */
	uint32		sink_mask;		/* sinks that were told of this object */
	int			nfunctions;
	JitprofFunction *functions; /* malloc'd, nfunctions entries */
	struct JitprofObject *next;
} JitprofObject;

/*
 * A sink receives every object linked while it is enabled, and is told when
 * that object's code is freed.  Both callbacks may run inside LLVM's call
 * stack: they must not throw an ERROR (a WARNING is fine) and should be
 * quick.
 */
typedef struct JitprofSink
{
	bool		(*enabled) (void);
	void		(*object_linked) (const JitprofObject *object);
	void		(*object_freed) (const JitprofObject *object);
} JitprofSink;

/*
 * settings.c: the settings that more than one layer acts on (the one kind
 * of variable a layer exports, read-only, as PostgreSQL's own GUCs are).
 * jitprof_llvm.so reads some through JitprofCoreTable.
 */
extern int	jitprof_linker;
extern bool jitprof_debug_fail_link;
extern bool jitprof_gdb;
extern int	jitprof_code_arena_max_size;
extern bool jitprof_steps;
extern int	jitprof_llvm_plugins;
extern bool jitprof_perf_jitdump;
extern char *jitprof_jitdump_dir;
extern bool jitprof_jitdump_unwinding;
extern int	jitprof_jitdump_max_size;
extern bool jitprof_save;
extern bool jitprof_preloaded;
extern void jp_settings_init(void);

/* file_io.c: file I/O for the sinks and the stores (never throws) */
extern bool jp_write_all(int fd, const void *buf, size_t len);
extern bool jp_read_all(int fd, void *buf, size_t len);
extern void jp_replace_file(const char *tmp_path, const char *path);
extern bool jp_make_jit_dir(const char *dir, const char *prefix,
							const char *date, const char *file,
							bool (*dir_ok) (const char *dir), bool report,
							char *made_dir, char *file_path);

/* plan_copy.c: the executor gets a copy of its plan with other jitFlags */
struct QueryDesc;
extern bool jp_plan_with_jit_flags(struct QueryDesc *queryDesc, int jit_flags);

/*
 * The longest path jitprof makes under jitprof.jitdump_dir is the step
 * file's (steps.c), with a 10-digit PID; the jitdump file's (sink_jitdump.c)
 * is shorter.  A directory no longer than this leaves room for both in
 * MAXPGPATH, whatever the backend's PID.
 */
#define JP_JITDUMP_LONGEST_SUFFIX \
	"/.debug/jit/jitprof-steps-YYYYMMDD-XXXXXX/steps-2147483647.txt"
#define JP_JITDUMP_DIR_MAXLEN \
	((int) (MAXPGPATH - sizeof(JP_JITDUMP_LONGEST_SUFFIX)))

#endif							/* JITPROF_CORE_H */
