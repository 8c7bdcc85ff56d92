/*-------------------------------------------------------------------------
 *
 * jitprof.h
 *	  Declarations shared by jitprof's C sources.
 *
 * Data flows one way: llvmjit generates code (provider.c names each new
 * function, naming.c), a linker hands every linked object to the registry
 * (linker.cpp, through the table of jitprof_llvm.h), and the registry fans
 * it out to the sinks and keeps the counters that the SQL functions report
 * (status.c).
 *
 * The files declared here make up jitprof.so, which links no LLVM; sink_gdb.c
 * is the one file of jitprof_llvm.so that includes this header too (for the
 * sink and object types).
 *
 * Everything here runs in a single backend process; nothing is shared.
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_H
#define JITPROF_H

#include "jit/jit.h"
#include "nodes/execnodes.h"

#include "compat.h"
#include "jitprof_llvm.h"

/* sizes of the fixed-size strings in a function record */
#define JP_LLVM_NAME_LEN	64
#define JP_SYMBOL_LEN		160
#define JP_NODE_TYPE_LEN	32
#define JP_ROLE_LEN			32

/*
 * What jitprof knows of one generated function before it is linked: where it
 * comes from in the plan.  Filled in by naming.c, which makes the symbol
 * from the other fields (doc/names.md).
 */
typedef struct JitprofOrigin
{
	int64		queryid;
	int32		plan_node_id;	/* -1 for a helper */
	char		node_type[JP_NODE_TYPE_LEN];
	char		role[JP_ROLE_LEN];
	Oid			relid;			/* partition opened by tuple routing, or 0 */
	int32		ordinal;		/* the symbol's _<n>; 1 for the first */
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

/* jitprof.c: GUCs (jitprof_llvm.so reads some through JitprofCoreTable) */
extern int	jitprof_linker;
extern char *jitprof_llvmjit_library;
extern bool jitprof_debug_fail_link;
extern bool jitprof_gdb;
extern int	jitprof_code_arena_max_size;
extern bool jitprof_preloaded;
extern PGDLLEXPORT void _PG_init(void);

/* sink_io.c: file output for the sinks (never throws) */
extern bool jp_write_all(int fd, const void *buf, size_t len);
extern bool jp_path_format(char *buf, size_t size, const char *fmt,...)
			pg_attribute_printf(3, 4);
extern bool jp_make_jit_dir(const char *dir, const char *prefix,
							const char *date, const char *file,
							bool (*dir_ok) (const char *dir), bool report,
							char *made_dir, char *file_path);

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

/* range_set.c: ranges a file sink has written (never throws) */
typedef struct JitprofRange
{
	uint64		start;
	uint64		end;
	uint64		name_hash;
	uint64		code_hash;
} JitprofRange;

typedef struct JitprofRangeSet
{
	JitprofRange *items;		/* malloc'd, sorted by start, disjoint */
	int			n;
	int			max;
} JitprofRangeSet;

extern JitprofRange *jp_range_exact(JitprofRangeSet *set, uint64 start,
									uint64 end);
extern bool jp_range_overlaps(const JitprofRangeSet *set, uint64 start,
							  uint64 end);
extern bool jp_range_add(JitprofRangeSet *set, uint64 start, uint64 end,
						 uint64 name_hash, uint64 code_hash);
extern void jp_range_reset(JitprofRangeSet *set);

/* sink_perf_map.c, sink_jitdump.c: what the file sinks wrote and dropped */
typedef struct JitprofFileCounters
{
	uint64		bytes;			/* size of the file */
	uint64		records;		/* lines or records written */
	uint64		dropped;		/* not written: the file reached its cap */
	uint64		conflicts;		/* not written: overlaps another name */
} JitprofFileCounters;

extern JitprofFileCounters jp_perf_map_counters;
extern JitprofFileCounters jp_jitdump_counters;

/* sink_jitdump.c: JIT_CODE_UNWINDING_INFO records (issue 12) */
typedef struct JitprofUnwindCounters
{
	uint64		records;		/* written */
	uint64		missing;		/* functions without: no usable FDE */
	uint64		no_room;		/* not written: no free space after code */
} JitprofUnwindCounters;

extern JitprofUnwindCounters jp_jitdump_unwind_counters;
extern bool jitprof_jitdump_unwinding;
extern bool jp_jitdump_unwind_wanted(void);
extern bool jitprof_perf_jitdump;
extern char *jitprof_jitdump_dir;
extern int	jitprof_jitdump_max_size;

/* sink_perf_map.c, sink_jitdump.c: GUCs and sink registration */
extern void jp_perf_map_init(void);
extern void jp_jitdump_init(void);

/* sampler_*.c, store.c: the hotspot sampler and its shared-memory store */
extern void jp_sampler_init(void);
extern void jp_store_init(void);
extern int64 jp_execution_queryid(EState *estate);
extern int32 jp_sampler_compile_begin(PlanState *ps);
extern void jp_sampler_compile_end(int32 old);

/* steps.c: expression step listings and debug info (issue 12) */
typedef struct JitprofStepCounters
{
	uint64		functions_annotated;	/* given debug info */
	uint64		functions_skipped;	/* debug info failed: left without */
	uint64		file_bytes;		/* size of the step file */
	uint64		file_failures;	/* step file could not be made or written */
	uint64		listings_dropped;	/* not written: no file, or at its cap */
	uint64		tables;			/* live functions with a step table */
	uint64		table_bytes;	/* their memory */
	uint64		tables_dropped; /* not kept: out of memory */
	uint64		labels_dropped; /* step labels not kept: out of memory */
	uint64		profiles;		/* sampler's per-step counters, live */
	uint64		profile_bytes;	/* their memory */
	uint64		profiles_dropped;	/* not made: out of memory */
} JitprofStepCounters;

extern bool jitprof_steps;
extern const char *jp_steps_file_path(void);
extern JitprofStepCounters jp_steps_counters;
struct LLVMJitContext;
extern void jp_steps_annotate(ExprState *state, struct LLVMJitContext *context,
							  char *const *names, const bool *is_deform,
							  int nfunctions);
extern const JitprofStepLabel *jp_steps_find_label(const JitprofStepLabels *labels,
												   int32 step);

/* provider.c */
extern bool jitprof_provider_active;
extern PGDLLEXPORT void _PG_jit_provider_init(JitProviderCallbacks *cb);
extern char *jp_llvmjit_path(const char *name);
extern bool jp_library_is_jitprof(const char *path);

/* llvm_library.c: jitprof_llvm.so, once loaded in this backend (or NULL) */
extern const JitprofLlvmTable *jp_llvm;
extern const JitprofLlvmTable *jp_llvm_load(void);

/* got_patch.c */
extern bool jp_got_patch(const void *code, const char *library,
						 const JitprofInterposer *interposers,
						 int ninterposers);

/*
 * hotspots.c: may the caller see other roles' rows and code addresses?  And
 * a row of a one-text-column view.
 */
extern bool jp_reader_sees_all(void);
extern void jp_put_text_row(ReturnSetInfo *rsinfo, const char *text);

/* naming.c */
extern void jp_naming_record_expr(ExprState *state, JitContext *context,
								  int64 queryid,
								  const char *const *llvm_names,
								  const bool *is_deform, int nfunctions);
extern void jp_naming_take_object(JitprofFunction *functions,
								  int nfunctions);
extern void jp_naming_attach_labels(const char *llvm_name,
									JitprofStepLabels *labels);
extern bool jp_naming_peek(const char *llvm_name, char *symbol, size_t len);
extern void jp_naming_forget_context(JitContext *context);
extern const char *jp_plan_node_name(Plan *plan);
extern void jp_naming_note_load(void);

/*
 * registry.c.  The linker and the code arena report through the first six,
 * which jitprof_llvm.so reaches through JitprofCoreTable; they never throw.
 */
extern void jp_registry_object_linked(uint64_t key,
									  const JitprofLinkedFunction *functions,
									  int nfunctions);
extern void jp_registry_object_freed(uint64_t key);
extern void jp_registry_link_failed(void);
extern void jp_registry_link_error(const char *message);
extern bool jp_registry_stable_name(const char *llvm_name, char *buf,
									size_t len);
extern void jp_registry_linker_fallback(const char *reason);
extern void jp_registry_register_sink(const JitprofSink *sink);
extern int	jp_registry_recent_count(void);
extern const JitprofFunction *jp_registry_recent_function(int i, bool *live);

/* counters reported by jitprof_status */
typedef struct JitprofCounters
{
	uint64		objects_linked;
	uint64		objects_freed;
	uint64		functions_linked;
	uint64		functions_live;
	uint64		code_bytes_live;
	uint64		link_failures;
	uint64		objects_dropped;	/* not recorded: out of memory */
	uint64		rtdyld_fallbacks;	/* objects linked by RuntimeDyld instead */
} JitprofCounters;

extern JitprofCounters jp_counters;
extern char jp_last_link_error[1024];
extern uint64 jp_link_errors_reported;

#endif							/* JITPROF_H */
