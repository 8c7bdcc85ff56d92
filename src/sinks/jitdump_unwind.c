/*-------------------------------------------------------------------------
 *
 * jitdump_unwind.c
 *	  The bytes of the jitdump sink's JIT_CODE_UNWINDING_INFO records
 *	  (issue 12), for "perf record --call-graph dwarf".
 *
 * Every function of an object gets the same unwinding data for the whole
 * object (every function's CIE + FDE and an .eh_frame_hdr), padded in front
 * by a dummy CIE so that it lands after the object's last function, where
 * perf's mapping of that function covers it; all pointers are relative, so
 * the same bytes are right in every record.
 *
 * Contract: this file only builds bytes from the functions sink_jitdump.c
 * hands it; the sink decides which functions get a record, under its cap,
 * and writes them.  It runs inside LLVM's call stack: no palloc, no ERROR.
 * Why the data goes there, and its layout: doc/perf.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/sinks/jitdump_unwind.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "sinks/sinks.h"
#include "sinks/jitdump_unwind.h"

#define JIT_CODE_UNWINDING_INFO 4

typedef struct JitdumpUnwindingInfo
{
	JitdumpRecordHeader header;
	uint64		unwinding_size;
	uint64		eh_frame_hdr_size;
	uint64		mapped_size;
} JitdumpUnwindingInfo;

#define ALIGN8(x)			(((x) + 7) & ~(uint64) 7)
#define UNWIND_LEAD			16	/* room for the smallest dummy CIE */
#define UNWIND_MAX_FILLER	(64 * 1024)
#define EH_HDR_FIXED		12	/* version, encodings, eh_frame_ptr, count */

static void
put_s32(uint8 *p, int64 v)
{
	int32		x = (int32) v;

	memcpy(p, &x, sizeof(x));
}

static bool
fits_s32(int64 v)
{
	return v >= PG_INT32_MIN && v <= PG_INT32_MAX;
}

/*
 * Build the unwinding data of an object whose functions, with code, are
 * cands[0 .. n-1] in address order.  False (sh->data NULL) when the object
 * cannot have it: no FDE, no room after its last function, or an offset
 * that does not fit.
 */
bool
jp_unwind_build(const DumpCandidate *cands, int n, UnwindShared *sh)
{
	const JitprofFunction *last = cands[n - 1].fn;
	size_t		eh_size = 0;
	int			nfde = 0;
	uint8	   *p;
	uint64		hdr;

	memset(sh, 0, sizeof(*sh));
	for (int k = 0; k < n; k++)
	{
		const JitprofFunction *fn = cands[k].fn;

		if (fn->address % 8 != 0)
			return false;		/* the dummy CIE could not fill the gap */
		if (fn->eh_frame == NULL)
			continue;
		eh_size += fn->eh_frame_size;
		nfde++;
	}
	if (nfde == 0)
		return false;
	sh->hdr_size = EH_HDR_FIXED + 8 * nfde;
	sh->size = eh_size + 4 + sh->hdr_size;
	sh->base = last->address + ALIGN8(last->size) + UNWIND_LEAD;
	if (last->room_after < ALIGN8(last->size) - last->size + UNWIND_LEAD + sh->size)
		return false;
	sh->data = calloc(1, sh->size);
	if (sh->data == NULL)
		return false;

	hdr = sh->base + eh_size + 4;
	p = sh->data + eh_size + 4;
	p[0] = 1;					/* version */
	p[1] = 0x1b;				/* eh_frame_ptr: DW_EH_PE_pcrel | sdata4 */
	p[2] = 0x03;				/* fde_count: DW_EH_PE_udata4 */
	p[3] = 0x3b;				/* table: DW_EH_PE_datarel | sdata4 */
	put_s32(p + 4, (int64) sh->base - (int64) (hdr + 4));
	memcpy(p + 8, &nfde, sizeof(int32));
	p += EH_HDR_FIXED;

	eh_size = 0;
	for (int k = 0; k < n; k++)
	{
		const JitprofFunction *fn = cands[k].fn;
		uint64		at = sh->base + eh_size;
		int64		pc = (int64) fn->address - (int64) (at + fn->eh_frame_pc_field);

		if (fn->eh_frame == NULL)
			continue;
		if (!fits_s32(pc) || !fits_s32((int64) fn->address - (int64) hdr) ||
			fn->eh_frame_pc_field + 4 > fn->eh_frame_size)
		{
			free(sh->data);
			sh->data = NULL;
			return false;
		}
		memcpy(sh->data + eh_size, fn->eh_frame, fn->eh_frame_size);
		put_s32(sh->data + eh_size + fn->eh_frame_pc_field, pc);
		/* table entry: function start, FDE (after the CIE: pc_field - 8) */
		put_s32(p, (int64) fn->address - (int64) hdr);
		put_s32(p + 4, (int64) (at + fn->eh_frame_pc_field - 8) - (int64) hdr);
		p += 8;
		eh_size += fn->eh_frame_size;
	}
	return true;
}

/* size of fn's JIT_CODE_UNWINDING_INFO record; 0 if it gets none */
size_t
jp_unwind_record_size(const JitprofFunction *fn, const UnwindShared *sh)
{
	uint64		filler;

	if (sh->data == NULL)
		return 0;
	filler = sh->base - (fn->address + ALIGN8(fn->size));
	if (sh->base < fn->address + ALIGN8(fn->size) + UNWIND_LEAD ||
		filler > UNWIND_MAX_FILLER)
		return 0;
	return sizeof(JitdumpUnwindingInfo) + ALIGN8(filler + sh->size);
}

/*
 * fn's JIT_CODE_UNWINDING_INFO record of "size" bytes
 * (jp_unwind_record_size), malloc'd; NULL when there is no memory.
 */
char	   *
jp_unwind_record(const JitprofFunction *fn, const UnwindShared *sh,
				 size_t size, uint64 now)
{
	uint64		filler = sh->base - (fn->address + ALIGN8(fn->size));
	char	   *buf = calloc(1, size);
	JitdumpUnwindingInfo rec;
	uint8	   *p;
	uint32		len = (uint32) (filler - 4);

	if (buf == NULL)
		return NULL;
	rec.header.id = JIT_CODE_UNWINDING_INFO;
	rec.header.total_size = size;
	rec.header.timestamp = now;
	rec.unwinding_size = filler + sh->size;
	rec.eh_frame_hdr_size = sh->hdr_size;
	rec.mapped_size = filler + sh->size;
	memcpy(buf, &rec, sizeof(rec));

	/*
	 * The dummy CIE: length, CIE id 0, version 1, no augmentation, code
	 * alignment 1, data alignment -8, return address register 16, then
	 * DW_CFA_nop (the zeroes calloc left).
	 */
	p = (uint8 *) buf + sizeof(rec);
	memcpy(p, &len, sizeof(len));
	p[8] = 1;
	p[10] = 1;
	p[11] = 0x78;
	p[12] = 16;
	memcpy(p + filler, sh->data, sh->size);
	return buf;
}
