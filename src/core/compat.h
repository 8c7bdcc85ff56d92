/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Differences between PostgreSQL versions that jitprof papers over.
 *
 * jitprof is built with -fvisibility=hidden, so that it exports only what
 * PostgreSQL looks up by name.  PostgreSQL 16 marks SQL-callable functions
 * PGDLLEXPORT in PG_FUNCTION_INFO_V1; PostgreSQL 15 marks only their info
 * functions, so a hidden build would hide the functions themselves.  This
 * defines the macro as 16 does.  (The Makefile defines PGDLLEXPORT as
 * default visibility, which 15 leaves empty on ELF platforms.)
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_COMPAT_H
#define JITPROF_COMPAT_H

#include "fmgr.h"

#if PG_VERSION_NUM < 160000
#undef PG_FUNCTION_INFO_V1
#define PG_FUNCTION_INFO_V1(funcname) \
extern PGDLLEXPORT Datum funcname(PG_FUNCTION_ARGS); \
extern PGDLLEXPORT const Pg_finfo_record * CppConcat(pg_finfo_,funcname)(void); \
const Pg_finfo_record * \
CppConcat(pg_finfo_,funcname) (void) \
{ \
	static const Pg_finfo_record my_finfo = { 1 }; \
	return &my_finfo; \
} \
extern int no_such_variable
#endif

#endif							/* JITPROF_COMPAT_H */
