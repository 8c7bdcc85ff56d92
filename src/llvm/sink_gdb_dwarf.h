/*-------------------------------------------------------------------------
 *
 * sink_gdb_dwarf.h
 *	  DWARF sections of the gdb sink's images (sink_gdb_dwarf.c).
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/llvm/sink_gdb_dwarf.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_SINK_GDB_DWARF_H
#define JITPROF_SINK_GDB_DWARF_H

#include "core/core.h"

/* three malloc'd section contents */
typedef struct JpGdbDwarf
{
	uint8	   *abbrev;
	size_t		abbrev_len;
	uint8	   *info;
	size_t		info_len;
	uint8	   *line;
	size_t		line_len;
} JpGdbDwarf;

extern bool jp_gdb_dwarf_build(const JitprofObject *object, uint64 lo,
							   uint64 hi, const char *file,
							   const char *(*name_of) (const JitprofFunction *),
							   JpGdbDwarf *out);
extern void jp_gdb_dwarf_free(JpGdbDwarf *dwarf);

#endif							/* JITPROF_SINK_GDB_DWARF_H */
