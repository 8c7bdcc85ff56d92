/*-------------------------------------------------------------------------
 *
 * sink_gdb_dwarf.c
 *	  DWARF sections for the gdb sink's images: lines of the step file.
 *
 * With jitprof.steps, each function of a linked object has a step table
 * (PC offset -> line of the step file, see jitprof_llvm.h).  The gdb sink
 * (sink_gdb.c) puts the three sections built here into the object's ELF
 * image, so that gdb's "info line *$pc", "list" and "break <file>:<line>"
 * work on JIT code in terms of expression steps:
 *
 *	  .debug_abbrev  two abbreviations: the compile unit and a subprogram
 *	  .debug_info    one DWARF 4 compile unit (name: the step file) with a
 *					 subprogram per function
 *	  .debug_line    a DWARF 4 line program, one sequence per function with
 *					 a table, one row per table row
 *
 * Runs inside LLVM's call stack with the rest of the sink: malloc only,
 * never an ERROR; false means "no DWARF for this image", and the image is
 * registered without it.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/llvm/sink_gdb_dwarf.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "core/core.h"
#include "llvm/sink_gdb_dwarf.h"

/* a growing malloc'd byte buffer; "failed" once an allocation failed */
typedef struct DwBuf
{
	uint8	   *data;
	size_t		len;
	size_t		max;
	bool		failed;
} DwBuf;

static void
dw_put(DwBuf *b, const void *p, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n > b->max)
	{
		size_t		max = Max(b->max * 2, b->len + n + 256);
		uint8	   *data = realloc(b->data, max);

		if (data == NULL)
		{
			b->failed = true;
			return;
		}
		b->data = data;
		b->max = max;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void
dw_u8(DwBuf *b, uint8 v)
{
	dw_put(b, &v, 1);
}

static void
dw_u16(DwBuf *b, uint16 v)
{
	dw_put(b, &v, 2);
}

static void
dw_u32(DwBuf *b, uint32 v)
{
	dw_put(b, &v, 4);
}

static void
dw_u64(DwBuf *b, uint64 v)
{
	dw_put(b, &v, 8);
}

static void
dw_str(DwBuf *b, const char *s)
{
	dw_put(b, s, strlen(s) + 1);
}

static void
dw_uleb(DwBuf *b, uint64 v)
{
	do
	{
		uint8		byte = v & 0x7f;

		v >>= 7;
		if (v != 0)
			byte |= 0x80;
		dw_u8(b, byte);
	} while (v != 0);
}

static void
dw_sleb(DwBuf *b, int64 v)
{
	bool		more = true;

	while (more)
	{
		uint8		byte = v & 0x7f;

		v >>= 7;				/* arithmetic shift */
		if ((v == 0 && (byte & 0x40) == 0) || (v == -1 && (byte & 0x40) != 0))
			more = false;
		else
			byte |= 0x80;
		dw_u8(b, byte);
	}
}

/* patch a 4-byte length at "at" to cover everything after it */
static void
dw_patch_length(DwBuf *b, size_t at)
{
	uint32		len = (uint32) (b->len - at - 4);

	if (!b->failed)
		memcpy(b->data + at, &len, 4);
}

/* DWARF constants used here */
#define DW_TAG_compile_unit		0x11
#define DW_TAG_subprogram		0x2e
#define DW_AT_name				0x03
#define DW_AT_stmt_list			0x10
#define DW_AT_low_pc			0x11
#define DW_AT_high_pc			0x12
#define DW_AT_language			0x13
#define DW_AT_comp_dir			0x1b
#define DW_AT_producer			0x25
#define DW_AT_external			0x3f
#define DW_FORM_addr			0x01
#define DW_FORM_data2			0x05
#define DW_FORM_data8			0x07
#define DW_FORM_string			0x08
#define DW_FORM_sec_offset		0x17
#define DW_FORM_flag_present	0x19
#define DW_LANG_C99				0x0c
#define DW_LNS_copy				0x01
#define DW_LNS_advance_pc		0x02
#define DW_LNS_advance_line		0x03
#define DW_LNE_end_sequence		0x01
#define DW_LNE_set_address		0x02

static void
build_abbrev(DwBuf *b)
{
	dw_uleb(b, 1);
	dw_uleb(b, DW_TAG_compile_unit);
	dw_u8(b, 1);				/* has children */
	dw_uleb(b, DW_AT_producer);
	dw_uleb(b, DW_FORM_string);
	dw_uleb(b, DW_AT_language);
	dw_uleb(b, DW_FORM_data2);
	dw_uleb(b, DW_AT_name);
	dw_uleb(b, DW_FORM_string);
	dw_uleb(b, DW_AT_comp_dir);
	dw_uleb(b, DW_FORM_string);
	dw_uleb(b, DW_AT_low_pc);
	dw_uleb(b, DW_FORM_addr);
	dw_uleb(b, DW_AT_high_pc);
	dw_uleb(b, DW_FORM_data8);
	dw_uleb(b, DW_AT_stmt_list);
	dw_uleb(b, DW_FORM_sec_offset);
	dw_uleb(b, 0);
	dw_uleb(b, 0);

	dw_uleb(b, 2);
	dw_uleb(b, DW_TAG_subprogram);
	dw_u8(b, 0);				/* no children */
	dw_uleb(b, DW_AT_name);
	dw_uleb(b, DW_FORM_string);
	dw_uleb(b, DW_AT_low_pc);
	dw_uleb(b, DW_FORM_addr);
	dw_uleb(b, DW_AT_high_pc);
	dw_uleb(b, DW_FORM_data8);
	dw_uleb(b, DW_AT_external);
	dw_uleb(b, DW_FORM_flag_present);
	dw_uleb(b, 0);
	dw_uleb(b, 0);

	dw_uleb(b, 0);
}

static void
build_info(DwBuf *b, const JitprofObject *object, uint64 lo, uint64 hi,
		   const char *file, const char *(*name_of) (const JitprofFunction *))
{
	const char *slash = strrchr(file, '/');
	char		dir[MAXPGPATH];

	strlcpy(dir, file, Min(sizeof(dir), (size_t) (slash - file) + 1));

	dw_u32(b, 0);				/* unit_length, patched below */
	dw_u16(b, 4);				/* version */
	dw_u32(b, 0);				/* debug_abbrev_offset */
	dw_u8(b, 8);				/* address_size */

	dw_uleb(b, 1);
	dw_str(b, "jitprof");
	dw_u16(b, DW_LANG_C99);
	dw_str(b, file);
	dw_str(b, dir);
	dw_u64(b, lo);
	dw_u64(b, hi - lo);
	dw_u32(b, 0);				/* stmt_list: the only line program */

	for (int i = 0; i < object->nfunctions; i++)
	{
		const JitprofFunction *fn = &object->functions[i];

		if (fn->nsteps <= 0)
			continue;
		dw_uleb(b, 2);
		dw_str(b, name_of(fn));
		dw_u64(b, fn->address);
		dw_u64(b, fn->size);
	}
	dw_uleb(b, 0);				/* end of the unit's children */
	dw_patch_length(b, 0);
}

static void
build_line(DwBuf *b, const JitprofObject *object, const char *file)
{
	static const uint8 opcode_lengths[12] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
	const char *slash = strrchr(file, '/');
	char		dir[MAXPGPATH];
	size_t		header_at;

	strlcpy(dir, file, Min(sizeof(dir), (size_t) (slash - file) + 1));

	dw_u32(b, 0);				/* unit_length, patched below */
	dw_u16(b, 4);				/* version */
	header_at = b->len;
	dw_u32(b, 0);				/* header_length, patched below */
	dw_u8(b, 1);				/* minimum_instruction_length */
	dw_u8(b, 1);				/* maximum_operations_per_instruction */
	dw_u8(b, 1);				/* default_is_stmt */
	dw_u8(b, (uint8) -5);		/* line_base */
	dw_u8(b, 14);				/* line_range */
	dw_u8(b, 13);				/* opcode_base */
	dw_put(b, opcode_lengths, sizeof(opcode_lengths));
	dw_str(b, dir);				/* include_directories[1] */
	dw_u8(b, 0);
	dw_str(b, slash + 1);		/* file_names[1] */
	dw_uleb(b, 1);				/* in directory 1 */
	dw_uleb(b, 0);				/* mtime */
	dw_uleb(b, 0);				/* length */
	dw_u8(b, 0);
	dw_patch_length(b, header_at);

	for (int i = 0; i < object->nfunctions; i++)
	{
		const JitprofFunction *fn = &object->functions[i];
		int64		line = 1;
		uint64		offset = 0;

		if (fn->nsteps <= 0)
			continue;
		dw_u8(b, 0);
		dw_uleb(b, 9);
		dw_u8(b, DW_LNE_set_address);
		dw_u64(b, fn->address);
		for (int r = 0; r < fn->nsteps; r++)
		{
			const JitprofStepRange *row = &fn->steps[r];

			if (row->offset >= fn->size)
				break;
			if (row->offset > offset)
			{
				dw_u8(b, DW_LNS_advance_pc);
				dw_uleb(b, row->offset - offset);
				offset = row->offset;
			}
			if ((int64) row->line != line)
			{
				dw_u8(b, DW_LNS_advance_line);
				dw_sleb(b, (int64) row->line - line);
				line = row->line;
			}
			dw_u8(b, DW_LNS_copy);
		}
		if (fn->size > offset)
		{
			dw_u8(b, DW_LNS_advance_pc);
			dw_uleb(b, fn->size - offset);
		}
		dw_u8(b, 0);
		dw_uleb(b, 1);
		dw_u8(b, DW_LNE_end_sequence);
	}
	dw_patch_length(b, 0);
}

/*
 * Build the sections for "object", whose code spans [lo, hi), with lines of
 * "file" (an absolute path).  False if no function has a step table or
 * memory ran out; on true, the caller frees out's three buffers.
 */
bool
jp_gdb_dwarf_build(const JitprofObject *object, uint64 lo, uint64 hi,
				   const char *file,
				   const char *(*name_of) (const JitprofFunction *),
				   JpGdbDwarf *out)
{
	DwBuf		abbrev = {0};
	DwBuf		info = {0};
	DwBuf		line = {0};
	bool		any = false;

	memset(out, 0, sizeof(*out));
	if (file == NULL || file[0] != '/')
		return false;
	for (int i = 0; i < object->nfunctions; i++)
		any |= object->functions[i].nsteps > 0;
	if (!any)
		return false;

	build_abbrev(&abbrev);
	build_info(&info, object, lo, hi, file, name_of);
	build_line(&line, object, file);
	if (abbrev.failed || info.failed || line.failed)
	{
		free(abbrev.data);
		free(info.data);
		free(line.data);
		return false;
	}
	out->abbrev = abbrev.data;
	out->abbrev_len = abbrev.len;
	out->info = info.data;
	out->info_len = info.len;
	out->line = line.data;
	out->line_len = line.len;
	return true;
}

void
jp_gdb_dwarf_free(JpGdbDwarf *dwarf)
{
	free(dwarf->abbrev);
	free(dwarf->info);
	free(dwarf->line);
	memset(dwarf, 0, sizeof(*dwarf));
}
