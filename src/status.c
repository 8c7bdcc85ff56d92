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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "jitprof.h"
#include "store.h"

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

	InitMaterializedSRF(fcinfo, 0);
	Assert(rsinfo->setDesc->natts == STATUS_COLS);

	memset(&arena, 0, sizeof(arena));
	memset(&gdb, 0, sizeof(gdb));
	if (jp_llvm != NULL)
	{
		jp_llvm->arena_stats(&arena);
		jp_llvm->gdb_counters(&gdb);
		linker = jp_llvm->linker_in_use();
	}
	jp_store_sizes(&sizes);

	put_status(rsinfo, "linker", linker_name(linker));
	put_status(rsinfo, "llvm_version",
			   jp_llvm != NULL ? jp_llvm->llvm_version : "none");
	put_status(rsinfo, "provider_active",
			   jitprof_provider_active ? "on" : "off");
	put_status(rsinfo, "preloaded", jitprof_preloaded ? "on" : "off");
	put_status_u64(rsinfo, "objects_linked", jp_counters.objects_linked);
	put_status_u64(rsinfo, "objects_freed", jp_counters.objects_freed);
	put_status_u64(rsinfo, "functions_linked", jp_counters.functions_linked);
	put_status_u64(rsinfo, "functions_live", jp_counters.functions_live);
	put_status_u64(rsinfo, "code_bytes_live", jp_counters.code_bytes_live);
	put_status_u64(rsinfo, "link_failures", jp_counters.link_failures);
	put_status_u64(rsinfo, "objects_dropped", jp_counters.objects_dropped);
	put_status_u64(rsinfo, "rtdyld_fallbacks", jp_counters.rtdyld_fallbacks);
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
	put_status_u64(rsinfo, "perf_map_bytes", jp_perf_map_counters.bytes);
	put_status_u64(rsinfo, "perf_map_lines", jp_perf_map_counters.records);
	put_status_u64(rsinfo, "perf_map_lines_dropped",
				   jp_perf_map_counters.dropped);
	put_status_u64(rsinfo, "perf_map_conflicts",
				   jp_perf_map_counters.conflicts);
	put_status_u64(rsinfo, "jitdump_bytes", jp_jitdump_counters.bytes);
	put_status_u64(rsinfo, "jitdump_records", jp_jitdump_counters.records);
	put_status_u64(rsinfo, "jitdump_records_dropped",
				   jp_jitdump_counters.dropped);
	put_status_u64(rsinfo, "jitdump_unwinding_records",
				   jp_jitdump_unwind_counters.records);
	put_status_u64(rsinfo, "jitdump_unwinding_missing",
				   jp_jitdump_unwind_counters.missing);
	put_status_u64(rsinfo, "jitdump_unwinding_no_room",
				   jp_jitdump_unwind_counters.no_room);
	put_status_u64(rsinfo, "gdb_objects_registered",
				   gdb.objects_registered);
	put_status_u64(rsinfo, "gdb_objects_live", gdb.objects_live);
	put_status_u64(rsinfo, "gdb_failures", gdb.failures);
	put_status_u64(rsinfo, "steps_functions_annotated",
				   jp_steps_counters.functions_annotated);
	put_status_u64(rsinfo, "steps_functions_skipped",
				   jp_steps_counters.functions_skipped);
	put_status_u64(rsinfo, "steps_file_bytes", jp_steps_counters.file_bytes);
	put_status_u64(rsinfo, "steps_file_failures",
				   jp_steps_counters.file_failures);
	put_status_u64(rsinfo, "steps_listings_dropped",
				   jp_steps_counters.listings_dropped);
	put_status_u64(rsinfo, "steps_tables_live", jp_steps_counters.tables);
	put_status_u64(rsinfo, "steps_table_bytes_live",
				   jp_steps_counters.table_bytes);
	put_status_u64(rsinfo, "steps_tables_dropped",
				   jp_steps_counters.tables_dropped);
	put_status_u64(rsinfo, "steps_labels_dropped",
				   jp_steps_counters.labels_dropped);
	put_status_u64(rsinfo, "steps_profiles_live", jp_steps_counters.profiles);
	put_status_u64(rsinfo, "steps_profile_bytes_live",
				   jp_steps_counters.profile_bytes);
	put_status_u64(rsinfo, "steps_profiles_dropped",
				   jp_steps_counters.profiles_dropped);
	put_status_u64(rsinfo, "gdb_build_us", gdb.build_us);
	put_status_u64(rsinfo, "gdb_register_us", gdb.register_us);
	put_status_u64(rsinfo, "gdb_unregister_us",
				   gdb.unregister_us);
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
		snprintf(address, sizeof(address), "0x%" INT64_MODIFIER "x", fn->address);

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
