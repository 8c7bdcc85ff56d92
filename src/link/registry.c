/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The backend's record of linked JIT code, and its fan-out to the sinks.
 *
 * Either linker (linker.cpp, in jitprof_llvm.so, through the table of
 * jitprof_llvm.h) reports each linked object here with the plain
 * address, size and llvmjit name of its functions.  The registry gives each
 * function its origin and readable name (naming.c), keeps the object until
 * its code is freed, tells every enabled sink, and keeps the counters and the
 * recent-functions ring that the SQL functions report.
 *
 * The jp_registry_* entry points run inside LLVM's call stack, so they never
 * throw an ERROR: memory comes from malloc, and an object that cannot be
 * recorded (malloc failed) is counted in objects_dropped instead, reported
 * by jitprof_status; its code runs, unknown to the sinks.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/link/registry.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "link/link.h"

#define MAX_SINKS			8
#define RECENT_FUNCTIONS	1024

static JitprofCounters counters;
static char last_link_error[1024];
static uint64 link_errors_reported = 0;

static const JitprofSink *sinks[MAX_SINKS];
static int	nsinks = 0;

static JitprofObject *live_objects = NULL;

/* ring of the most recently linked functions, for jitprof_functions */
static JitprofFunction recent[RECENT_FUNCTIONS];
static uint64 recent_keys[RECENT_FUNCTIONS];
static bool recent_live[RECENT_FUNCTIONS];
static uint64 recent_next = 0;

/* the counters reported by jitprof_status */
const JitprofCounters *
jp_registry_counters(void)
{
	return &counters;
}

/*
 * Link errors reported so far, and the last one's message: the provider
 * compares the count before and after emitting a module.
 */
uint64
jp_registry_link_errors(void)
{
	return link_errors_reported;
}

const char *
jp_registry_last_link_error(void)
{
	return last_link_error;
}

void
jp_registry_register_sink(const JitprofSink *sink)
{
	for (int i = 0; i < nsinks; i++)
		if (sinks[i] == sink)
			return;
	if (nsinks >= MAX_SINKS)
		elog(ERROR, "too many sinks registered");
	sinks[nsinks++] = sink;
}

/* number of functions jp_registry_recent_function can return */
int
jp_registry_recent_count(void)
{
	return (int) Min(recent_next, RECENT_FUNCTIONS);
}

/* the i'th most recently linked function, oldest first */
const JitprofFunction *
jp_registry_recent_function(int i, bool *live)
{
	uint64		oldest = recent_next - jp_registry_recent_count();
	uint64		slot = (oldest + i) % RECENT_FUNCTIONS;

	*live = recent_live[slot];
	return &recent[slot];
}

/* keep the linker's step table of a function (issue 12), if it has one */
static void
copy_step_table(JitprofFunction *fn, const JitprofLinkedFunction *linked)
{
	int			n = Min(linked->nsteps, JP_MAX_STEP_RANGES);

	fn->steps = NULL;
	fn->nsteps = 0;
	if (linked->steps == NULL || n <= 0)
		return;
	fn->steps = malloc(n * sizeof(JitprofStepRange));
	if (fn->steps == NULL)
	{
		jp_steps_count_table_dropped();
		return;
	}
	memcpy(fn->steps, linked->steps, n * sizeof(JitprofStepRange));
	fn->nsteps = n;
	jp_steps_count_table(1, n * sizeof(JitprofStepRange));
}

static void
free_step_table(JitprofFunction *fn)
{
	if (fn->steps == NULL)
		return;
	jp_steps_count_table(-1, fn->nsteps * sizeof(JitprofStepRange));
	free(fn->steps);
	fn->steps = NULL;
	fn->nsteps = 0;
}

static void
free_step_labels(JitprofFunction *fn)
{
	free(fn->step_labels);
	fn->step_labels = NULL;
}

void
jp_registry_object_linked(uint64_t key, const JitprofLinkedFunction *functions,
						  int nfunctions)
{
	JitprofObject *object;

	object = calloc(1, sizeof(JitprofObject));
	if (object == NULL)
	{
		counters.objects_dropped++;
		return;
	}
	object->functions = calloc(Max(nfunctions, 1), sizeof(JitprofFunction));
	if (object->functions == NULL)
	{
		free(object);
		counters.objects_dropped++;
		return;
	}
	object->key = key;
	object->nfunctions = nfunctions;

	for (int i = 0; i < nfunctions; i++)
	{
		JitprofFunction *fn = &object->functions[i];

		fn->address = functions[i].address;
		fn->size = functions[i].size;
		strlcpy(fn->llvm_name, functions[i].llvm_name, JP_LLVM_NAME_LEN);
		copy_step_table(fn, &functions[i]);
		/* the linker's memory: for the sinks below, not kept */
		fn->eh_frame = functions[i].eh_frame;
		fn->eh_frame_size = functions[i].eh_frame != NULL ?
			functions[i].eh_frame_size : 0;
		fn->eh_frame_pc_field = functions[i].eh_frame_pc_field;
		fn->room_after = functions[i].room_after;
	}
	/* names and origins, helpers' included (naming.c) */
	jp_naming_take_object(object->functions, nfunctions);

	for (int i = 0; i < nsinks; i++)
	{
		if (!sinks[i]->enabled())
			continue;
		sinks[i]->object_linked(object);
		object->sink_mask |= (1U << i);
	}
	for (int i = 0; i < nfunctions; i++)
	{
		object->functions[i].eh_frame = NULL;
		object->functions[i].eh_frame_size = 0;
	}

	object->next = live_objects;
	live_objects = object;

	counters.objects_linked++;
	counters.functions_linked += nfunctions;
	counters.functions_live += nfunctions;
	for (int i = 0; i < nfunctions; i++)
	{
		uint64		slot = recent_next++ % RECENT_FUNCTIONS;

		counters.code_bytes_live += object->functions[i].size;
		recent[slot] = object->functions[i];
		/* the table belongs to the live object only */
		recent[slot].steps = NULL;
		recent[slot].nsteps = 0;
		recent[slot].step_labels = NULL;
		recent_keys[slot] = key;
		recent_live[slot] = true;
	}
}

void
jp_registry_object_freed(uint64_t key)
{
	JitprofObject **link = &live_objects;

	while (*link != NULL)
	{
		JitprofObject *object = *link;

		if (object->key != key)
		{
			link = &object->next;
			continue;
		}

		*link = object->next;
		for (int i = 0; i < nsinks; i++)
			if (object->sink_mask & (1U << i))
				sinks[i]->object_freed(object);

		counters.objects_freed++;
		counters.functions_live -= object->nfunctions;
		for (int i = 0; i < object->nfunctions; i++)
			counters.code_bytes_live -= object->functions[i].size;
		for (int i = 0; i < RECENT_FUNCTIONS; i++)
			if (recent_keys[i] == key)
				recent_live[i] = false;

		for (int i = 0; i < object->nfunctions; i++)
		{
			free_step_table(&object->functions[i]);
			free_step_labels(&object->functions[i]);
		}
		free(object->functions);
		free(object);
	}
}

/*
 * The name the registry will give the function llvmjit calls "llvm_name",
 * if naming.c knows it; for the code arena, before the link.
 */
bool
jp_registry_stable_name(const char *llvm_name, char *buf, size_t len)
{
	return jp_naming_peek(llvm_name, buf, len);
}

/*
 * An object goes to RuntimeDyld instead of JITLink.  Counted every time,
 * said once per backend: the query itself is not affected.
 */
void
jp_registry_linker_fallback(const char *reason)
{
	static bool warned = false;

	counters.rtdyld_fallbacks++;
	if (warned)
		return;
	warned = true;
	ereport(WARNING,
			(errmsg("JIT code could not be linked with JITLink, RuntimeDyld links it instead"),
			 errdetail_internal("%s", reason),
			 errhint("Set jitprof.linker to \"rtdyld\" to link all JIT code with RuntimeDyld; "
					 "jitprof_status counts such objects as rtdyld_fallbacks.")));
}

/*
 * jitprof.llvm_plugins asked for one of LLVM's plugins and it could not be
 * attached (or this LLVM has none): the code is linked without it, and
 * jitprof's own sinks work as set.  Once per backend and plugin.
 */
void
jp_registry_llvm_plugin_failed(int plugin, const char *reason)
{
	static int	warned = JP_LLVM_PLUGINS_OFF;	/* JitprofLlvmPlugins bits */
	const char *name = plugin == JP_LLVM_PLUGINS_PERF ?
	"PerfSupportPlugin" : "DebugObjectManagerPlugin";

	if (warned & plugin)
		return;
	warned |= plugin;
	ereport(WARNING,
			(errmsg("LLVM's %s could not be attached, JIT code is linked without it", name),
			 errdetail_internal("%s", reason),
			 errhint("Set jitprof.llvm_plugins to \"off\", and use jitprof.perf_jitdump and jitprof.gdb instead.")));
}

void
jp_registry_link_failed(void)
{
	counters.link_failures++;
}

/* Remember why the latest link failed, for the query's ERROR. */
void
jp_registry_link_error(const char *message)
{
	strlcpy(last_link_error, message, sizeof(last_link_error));
	link_errors_reported++;
}
