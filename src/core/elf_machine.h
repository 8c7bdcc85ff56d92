/*-------------------------------------------------------------------------
 *
 * elf_machine.h
 *	  The ELF machine number of the CPU jitprof is built for.
 *
 * The jitdump file header (sink_jitdump.c) and the gdb images
 * (sink_gdb.c) both name the machine their code is for.  jitprof builds on
 * the CPUs its sampler supports (sampler.c), so these are the only cases;
 * any other CPU stops the build here as it would there.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/core/elf_machine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_ELF_MACHINE_H
#define JITPROF_ELF_MACHINE_H

#include <elf.h>

#if defined(__x86_64__)
#define JP_ELF_MACHINE	EM_X86_64
#elif defined(__aarch64__)
#define JP_ELF_MACHINE	EM_AARCH64
#else
#error "jitprof supports x86-64 and AArch64 only"
#endif

#endif							/* JITPROF_ELF_MACHINE_H */
