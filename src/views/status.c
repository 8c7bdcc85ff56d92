/*-------------------------------------------------------------------------
 *
 * status.c
 *	  SQL functions reporting this backend's JIT linking state.
 *
 * jitprof_status() lists facts as name/value rows; jitprof_functions()
 * lists the most recently linked functions with their origin.  Both describe
 * the calling backend only, but for jitprof_status' store_* rows: the shared
 * memory of the hotspot store.  The linker, LLVM and gdb facts come from
 * jitprof_llvm.so once the provider has loaded it; before that they are
 * "none" and zeroes (asking never loads LLVM).
 *
 * Code addresses would help an attacker defeat address space layout
 * randomisation, and PostgreSQL shows no process addresses to unprivileged
 * SQL: jitprof_functions.address is NULL unless the caller is a superuser
 * or has the privileges of pg_read_all_stats.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/views/status.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <inttypes.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "views/views.h"

PG_FUNCTION_INFO_V1(jitprof_status_1_0);
PG_FUNCTION_INFO_V1(jitprof_functions_1_0);

#define STATUS_COLS		2
#define FUNCTIONS_COLS	9

static void
put_status(ReturnSetInfo *rsinfo, const char *name, const char *value)
{
	Datum		values[STATUS_COLS];
	bool		nulls[STATUS_COLS] = {false, false};

	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(value);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static void
put_status_u64(ReturnSetInfo *rsinfo, const char *name, uint64 value)
{
	char		buf[32];

	snprintf(buf, sizeof(buf), UINT64_FORMAT, value);
	put_status(rsinfo, name, buf);
}

static const char *
linker_name(JitprofLinkerKind kind)
{
	switch (kind)
	{
		case JP_LINKER_JITLINK:
			return "jitlink";
		case JP_LINKER_RTDYLD:
			return "rtdyld";
		case JP_LINKER_NONE:
			break;
	}
	return "none";
}

Datum
jitprof_status_1_0(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	JitprofArenaStats arena;
	JitprofGdbCounters gdb;
	JitprofLinkerKind linker = JP_LINKER_NONE;
	JpStoreSizes sizes;
	const JitprofLlvmTable *llvm = jp_llvm_loaded();
	const JitprofCounters *counters = jp_registry_counters();
	const JitprofFileCounters *perf_map = jp_perf_map_counters();
	const JitprofFileCounters *jitdump = jp_jitdump_counters();
	const JitprofUnwindCounters *unwind = jp_jitdump_unwind_counters();
	const JitprofStepCounters *steps = jp_steps_counters();
	const JpTieringCounters *tiering = jp_tiering_counters();
	const JpTieringPlanCounters *tiering_plans = jp_tiering_plan_counters();
	const JpNodeWrapCounters *nodes = jp_sampler_node_counters();
	uint64		kept_maps;
	uint64		kept_bytes;
	uint64		kept_removed;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == STATUS_COLS);

	memset(&arena, 0, sizeof(arena));
	memset(&gdb, 0, sizeof(gdb));
	if (llvm != NULL)
	{
		llvm->arena_stats(&arena);
		llvm->gdb_counters(&gdb);
		linker = llvm->linker_in_use();
	}
	jp_store_sizes(&sizes);

	put_status(rsinfo, "linker", linker_name(linker));
	put_status(rsinfo, "llvm_version",
			   llvm != NULL ? llvm->llvm_version : "none");
	put_status(rsinfo, "provider_active",
			   jp_provider_active() ? "on" : "off");
	put_status(rsinfo, "preloaded", jitprof_preloaded ? "on" : "off");
	put_status_u64(rsinfo, "objects_linked", counters->objects_linked);
	put_status_u64(rsinfo, "objects_freed", counters->objects_freed);
	put_status_u64(rsinfo, "functions_linked", counters->functions_linked);
	put_status_u64(rsinfo, "functions_live", counters->functions_live);
	put_status_u64(rsinfo, "code_bytes_live", counters->code_bytes_live);
	put_status_u64(rsinfo, "link_failures", counters->link_failures);
	put_status_u64(rsinfo, "objects_dropped", counters->objects_dropped);
	put_status_u64(rsinfo, "rtdyld_fallbacks", counters->rtdyld_fallbacks);
	put_status_u64(rsinfo, "code_pages_bytes", arena.committed_bytes);
	put_status_u64(rsinfo, "address_space_reserved_bytes",
				   arena.reserved_bytes);
	put_status_u64(rsinfo, "arenas_created", arena.arenas_created);
	put_status_u64(rsinfo, "arenas_smaller", arena.arenas_smaller);
	put_status_u64(rsinfo, "arena_reserve_failures", arena.reserve_failures);
	put_status_u64(rsinfo, "arena_allocations_live", arena.allocations_live);
	put_status_u64(rsinfo, "arena_allocations_total",
				   arena.allocations_total);
	put_status_u64(rsinfo, "arena_objects_reused", arena.objects_reused);
	put_status_u64(rsinfo, "arena_ranges_cached", arena.shapes_cached);
	put_status_u64(rsinfo, "perf_map_bytes", perf_map->bytes);
	put_status_u64(rsinfo, "perf_map_lines", perf_map->records);
	put_status_u64(rsinfo, "perf_map_lines_dropped",
				   perf_map->dropped);
	put_status_u64(rsinfo, "perf_map_conflicts",
				   perf_map->conflicts);
	jp_perf_map_kept(&kept_maps, &kept_bytes, &kept_removed);
	put_status_u64(rsinfo, "perf_maps_kept", kept_maps);
	put_status_u64(rsinfo, "perf_maps_kept_bytes", kept_bytes);
	put_status_u64(rsinfo, "perf_maps_removed", kept_removed);
	put_status_u64(rsinfo, "jitdump_bytes", jitdump->bytes);
	put_status_u64(rsinfo, "jitdump_records", jitdump->records);
	put_status_u64(rsinfo, "jitdump_records_dropped",
				   jitdump->dropped);
	put_status_u64(rsinfo, "jitdump_unwinding_records",
				   unwind->records);
	put_status_u64(rsinfo, "jitdump_unwinding_missing",
				   unwind->missing);
	put_status_u64(rsinfo, "jitdump_unwinding_no_room",
				   unwind->no_room);
	put_status_u64(rsinfo, "gdb_objects_registered",
				   gdb.objects_registered);
	put_status_u64(rsinfo, "gdb_objects_live", gdb.objects_live);
	put_status_u64(rsinfo, "gdb_failures", gdb.failures);
	put_status_u64(rsinfo, "steps_functions_annotated",
				   steps->functions_annotated);
	put_status_u64(rsinfo, "steps_functions_skipped",
				   steps->functions_skipped);
	put_status_u64(rsinfo, "steps_file_bytes", steps->file_bytes);
	put_status_u64(rsinfo, "steps_file_failures",
				   steps->file_failures);
	put_status_u64(rsinfo, "steps_listings_dropped",
				   steps->listings_dropped);
	put_status_u64(rsinfo, "steps_tables_live", steps->tables);
	put_status_u64(rsinfo, "steps_table_bytes_live",
				   steps->table_bytes);
	put_status_u64(rsinfo, "steps_tables_dropped",
				   steps->tables_dropped);
	put_status_u64(rsinfo, "steps_labels_dropped",
				   steps->labels_dropped);
	put_status_u64(rsinfo, "steps_profiles_live", steps->profiles);
	put_status_u64(rsinfo, "steps_profile_bytes_live",
				   steps->profile_bytes);
	put_status_u64(rsinfo, "steps_profiles_dropped",
				   steps->profiles_dropped);
	put_status_u64(rsinfo, "gdb_build_us", gdb.build_us);
	put_status_u64(rsinfo, "gdb_register_us", gdb.register_us);
	put_status_u64(rsinfo, "gdb_unregister_us",
				   gdb.unregister_us);
	put_status_u64(rsinfo, "tiering_queries", tiering->queries);
	put_status_u64(rsinfo, "tiering_switches", tiering->switches);
	put_status_u64(rsinfo, "tiering_expressions_compiled",
				   tiering->expressions_compiled);
	put_status_u64(rsinfo, "tiering_functions_compiled",
				   tiering->functions_compiled);
	put_status_u64(rsinfo, "tiering_expressions_never_compiled",
				   tiering->expressions_never_compiled);
	put_status_u64(rsinfo, "tiering_failures", tiering->failures);
	put_status_u64(rsinfo, "tiering_rests", tiering->rests);
	put_status_u64(rsinfo, "tiering_plans_promoted", tiering_plans->promoted);
	put_status_u64(rsinfo, "tiering_plans_below_floor",
				   tiering_plans->below_floor);
	put_status_u64(rsinfo, "tiering_plans_remembered",
				   tiering_plans->remembered);
	put_status_u64(rsinfo, "tiering_plans_by_history",
				   tiering_plans->by_history);
	put_status_u64(rsinfo, "tiering_remembered_replaced",
				   tiering_plans->replaced);
	put_status_u64(rsinfo, "plan_node_entries", nodes->entries);
	put_status_u64(rsinfo, "plan_node_wrappers", nodes->wrappers);
	put_status_u64(rsinfo, "plan_node_by_site", nodes->by_site);
	put_status_u64(rsinfo, "plan_node_call_sites", nodes->sites);
	put_status_u64(rsinfo, "plan_node_call_sites_ambiguous",
				   nodes->sites_ambiguous);
	put_status_u64(rsinfo, "plan_node_call_sites_dropped",
				   nodes->sites_dropped);
	put_status_u64(rsinfo, "plan_node_samples_by_scan", nodes->samples_by_scan);
	put_status_u64(rsinfo, "plan_node_samples_unplaced",
				   nodes->samples_unplaced);
	put_status_u64(rsinfo, "store_shmem_bytes", sizes.shmem_bytes);
	put_status_u64(rsinfo, "store_hotspot_entry_bytes",
				   sizes.hotspot_entry_bytes);
	put_status_u64(rsinfo, "store_plan_node_entry_bytes",
				   sizes.plan_node_entry_bytes);
	put_status_u64(rsinfo, "store_step_entry_bytes", sizes.step_entry_bytes);

	return (Datum) 0;
}

Datum
jitprof_functions_1_0(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			n;
	bool		show_addresses;

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == FUNCTIONS_COLS);
	show_addresses = jp_reader_sees_all();

	n = jp_registry_recent_count();
	for (int i = 0; i < n; i++)
	{
		bool		live;
		const JitprofFunction *fn = jp_registry_recent_function(i, &live);
		Datum		values[FUNCTIONS_COLS];
		bool		nulls[FUNCTIONS_COLS];
		char		address[32];
		int			col = 0;

		CHECK_FOR_INTERRUPTS();
		memset(nulls, 0, sizeof(nulls));
		snprintf(address, sizeof(address), "0x%" PRIx64, fn->address);

		values[col++] = CStringGetTextDatum(fn->origin.symbol);
		values[col++] = CStringGetTextDatum(fn->llvm_name);
		values[col++] = Int64GetDatum(fn->origin.queryid);
		if (fn->origin.plan_node_id >= 0)
			values[col++] = Int32GetDatum(fn->origin.plan_node_id);
		else
			nulls[col++] = true;
		values[col++] = CStringGetTextDatum(fn->origin.node_type);
		values[col++] = CStringGetTextDatum(fn->origin.role);
		if (show_addresses)
			values[col++] = CStringGetTextDatum(address);
		else
			nulls[col++] = true;
		values[col++] = Int64GetDatum((int64) fn->size);
		values[col++] = BoolGetDatum(live);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	return (Datum) 0;
}
