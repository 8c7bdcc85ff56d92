/*-------------------------------------------------------------------------
 *
 * llvm_steps.c
 *	  DWARF debug information for llvmjit's functions: a line per step.
 *
 * steps.c lists an expression's steps in the step file and asks, through
 * jitprof_llvm.h's add_debug_info, for each generated function to get
 * debug information pointing into that listing: a compile unit whose file
 * is the step file, and a location on every instruction whose line is the
 * step's and whose column encodes the step (JitprofStepRange), so that
 * linker.cpp reads the step back from the object's line table.
 *
 * Contract: runs on the backend's only thread in compile_expr, before
 * llvmjit optimizes and emits the module, and never throws.  A function
 * that does not verify afterwards, or names a step the listing lacks, has
 * its debug information taken off again and is counted as skipped.  Block
 * names, calls' locations and the verifier: doc/steps.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/llvm/llvm_steps.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "jit/llvmjit.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>

#include "llvm/linker.h"

#define DEBUG_INFO_VERSION_FLAG "Debug Info Version"
#define DWARF_VERSION_FLAG "Dwarf Version"

/* the step (or attribute) number in a block name "<prefix><n>.", or -1 */
static int
numbered(const char *name, const char *prefix)
{
	size_t		len = strlen(prefix);
	int			n = 0;
	const char *p;

	if (strncmp(name, prefix, len) != 0)
		return -1;
	p = name + len;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
	{
		n = n * 10 + (*p - '0');
		if (n > 100000000)
			return -1;
	}
	return (*p == '.' || *p == '\0') ? n : -1;
}

static void
add_module_flags(LLVMModuleRef mod, LLVMContextRef ctx)
{
	LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);

	if (LLVMGetModuleFlag(mod, DEBUG_INFO_VERSION_FLAG,
						  strlen(DEBUG_INFO_VERSION_FLAG)) == NULL)
		LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorWarning,
						  DEBUG_INFO_VERSION_FLAG,
						  strlen(DEBUG_INFO_VERSION_FLAG),
						  LLVMValueAsMetadata(LLVMConstInt(i32, LLVMDebugMetadataVersion(), false)));
	if (LLVMGetModuleFlag(mod, DWARF_VERSION_FLAG,
						  strlen(DWARF_VERSION_FLAG)) == NULL)
		LLVMAddModuleFlag(mod, LLVMModuleFlagBehaviorWarning,
						  DWARF_VERSION_FLAG, strlen(DWARF_VERSION_FLAG),
						  LLVMValueAsMetadata(LLVMConstInt(i32, 4, false)));
}

/* take the debug information off fn again */
static void
strip_function(LLVMValueRef fn)
{
	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb != NULL;
		 bb = LLVMGetNextBasicBlock(bb))
		for (LLVMValueRef inst = LLVMGetFirstInstruction(bb); inst != NULL;
			 inst = LLVMGetNextInstruction(inst))
			LLVMInstructionSetDebugLoc(inst, NULL);
	LLVMSetSubprogram(fn, NULL);
}

/*
 * Give every instruction of fn a location in subprogram sp; false if a
 * block names a step (attribute) beyond the listing.
 */
static bool
locate_instructions(LLVMContextRef ctx, LLVMValueRef fn, LLVMMetadataRef sp,
					const JitprofDebugInfo *info)
{
	unsigned	current = info->first_line;
	unsigned	located = 0;
	unsigned	column = 0;		/* the step number plus one; 0: header */
	LLVMMetadataRef loc = NULL;

	for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb != NULL;
		 bb = LLVMGetNextBasicBlock(bb))
	{
		const char *name = LLVMGetBasicBlockName(bb);
		int			n;

		if (info->is_deform)
		{
			n = numbered(name, "block.attr.");
			current = info->first_line;
		}
		else
		{
			n = numbered(name, "b.");
			if (n < 0)
				n = numbered(name, "op.");
		}
		if (n >= info->nlines || n >= JP_COLUMN_DEFORM ||
			(info->is_deform && n >= 65535 - JP_COLUMN_DEFORM - 1))
			return false;
		if (n >= 0)
		{
			current = info->first_line + 1 + n;
			column = info->is_deform ? JP_COLUMN_DEFORM + 1 + n : n + 1;
		}
		else if (info->is_deform)
			column = 0;

		for (LLVMValueRef inst = LLVMGetFirstInstruction(bb); inst != NULL;
			 inst = LLVMGetNextInstruction(inst))
		{
			if (loc == NULL || located != current)
			{
				loc = LLVMDIBuilderCreateDebugLocation(ctx, current, column,
													   sp, NULL);
				located = current;
			}
			LLVMInstructionSetDebugLoc(inst, loc);
		}
	}
	return true;
}

bool
jp_add_debug_info(LLVMJitContext *context, const JitprofDebugInfo *info)
{
	LLVMModuleRef mod = context->module;
	LLVMValueRef fn;
	LLVMContextRef ctx;
	LLVMDIBuilderRef dib;
	LLVMMetadataRef file;
	LLVMMetadataRef type;
	LLVMMetadataRef sp;
	bool		ok;
	bool		broken;

	if (mod == NULL || info->first_line <= 0 || info->nlines < 0)
		return false;
	fn = LLVMGetNamedFunction(mod, info->llvm_name);
	if (fn == NULL || LLVMIsDeclaration(fn) || LLVMGetSubprogram(fn) != NULL)
		return false;
	ctx = LLVMGetModuleContext(mod);
	/* LLVMVerifyFunction returns true when the function is broken */
	broken = LLVMVerifyFunction(fn, LLVMReturnStatusAction);

	add_module_flags(mod, ctx);

	dib = LLVMCreateDIBuilderDisallowUnresolved(mod);
	file = LLVMDIBuilderCreateFile(dib, info->file_name,
								   strlen(info->file_name),
								   info->directory, strlen(info->directory));
	(void) LLVMDIBuilderCreateCompileUnit(dib, LLVMDWARFSourceLanguageC, file,
										  "jitprof", strlen("jitprof"),
										  true, "", 0, 0, "", 0,
										  LLVMDWARFEmissionLineTablesOnly,
										  0, false, false, "", 0, "", 0);
	type = LLVMDIBuilderCreateSubroutineType(dib, file, NULL, 0,
											 LLVMDIFlagZero);
	sp = LLVMDIBuilderCreateFunction(dib, file, info->llvm_name,
									 strlen(info->llvm_name),
									 info->llvm_name, strlen(info->llvm_name),
									 file, info->first_line, type,
									 false, true, info->first_line,
									 LLVMDIFlagZero, true);
	LLVMSetSubprogram(fn, sp);

	ok = locate_instructions(ctx, fn, sp, info);
	LLVMDIBuilderFinalize(dib);
	LLVMDisposeDIBuilder(dib);

	if (ok && !broken && LLVMVerifyFunction(fn, LLVMReturnStatusAction))
		ok = false;
	if (!ok)
		strip_function(fn);
	return ok;
}
