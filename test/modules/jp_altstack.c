/*-------------------------------------------------------------------------
 *
 * jp_altstack.c
 *	  Test module: a CPU-heavy SQL function that runs on a stack of its own,
 *	  with a frame pointer that points into unmapped memory below the main
 *	  stack, as a coroutine of a PL runtime might leave it.  Built and loaded
 *	  by test/t/040_frame_walk_off_main_stack.pl.
 *
 * jp_altstack_spin(n) maps an inaccessible page inside the range glibc
 * reports for the main thread's stack (top - RLIMIT_STACK, far below what
 * the stack uses), switches to a malloc'd stack (makecontext and
 * swapcontext), points the frame pointer into that page, spins n iterations
 * adding them up, and returns n * (n + 1) / 2 (mod 2^64).  A profiler's
 * SIGPROF handler that trusts any frame pointer inside the main stack's
 * range, without checking that SP is on that stack, reads the page and
 * crashes the backend.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  test/modules/jp_altstack.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "fmgr.h"

PG_MODULE_MAGIC;

#define COROUTINE_STACK		(256 * 1024)

static ucontext_t main_context;
static ucontext_t spin_context;
static uint64 spin_n;
static uint64 spin_result;
static uintptr_t bogus_fp;
static void *trap_page = NULL;

PG_FUNCTION_INFO_V1(jp_altstack_spin);
PG_FUNCTION_INFO_V1(jp_altstack_bogus_fp);

static void
spin(void)
{
	uint64		n = spin_n;
	uint64		acc = 0;

#if defined(__x86_64__)
	__asm__ volatile(
					 "push %%rbp\n\t"
					 "mov %[fp], %%rbp\n\t"
					 "test %[n], %[n]\n\t"
					 "jz 2f\n"
					 "1:\n\t"
					 "add %[n], %[acc]\n\t"
					 "sub $1, %[n]\n\t"
					 "jnz 1b\n"
					 "2:\n\t"
					 "pop %%rbp\n\t"
					 :[n] "+r"(n),[acc] "+r"(acc)
					 :[fp] "r"(bogus_fp)
					 :"cc", "memory");
#else
#error "jp_altstack supports x86-64 only"
#endif
	spin_result = acc;
}

static void
compute_bogus_fp(void)
{
	pthread_attr_t attr;
	void	   *addr = NULL;
	size_t		size = 0;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		elog(ERROR, "pthread_getattr_np failed");
	pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);

	/* an inaccessible page 64 kB above the range's low end */
	if (trap_page == NULL)
	{
		void	   *want = (void *) (((uintptr_t) addr + 65536) & ~(uintptr_t) 4095);
		void	   *got = mmap(want, 4096, PROT_NONE,
							   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
							   -1, 0);

		if (got == MAP_FAILED)
			elog(ERROR, "could not map a page at %p: %m", want);
		trap_page = got;
	}
	bogus_fp = (uintptr_t) trap_page + 64;
}

Datum
jp_altstack_spin(PG_FUNCTION_ARGS)
{
	int64		n = PG_GETARG_INT64(0);
	char	   *stack;

	compute_bogus_fp();
	stack = malloc(COROUTINE_STACK);
	if (stack == NULL)
		elog(ERROR, "out of memory");
	if (getcontext(&spin_context) != 0)
		elog(ERROR, "getcontext failed");
	spin_context.uc_stack.ss_sp = stack;
	spin_context.uc_stack.ss_size = COROUTINE_STACK;
	spin_context.uc_link = &main_context;
	makecontext(&spin_context, spin, 0);
	spin_n = (uint64) n;
	if (swapcontext(&main_context, &spin_context) != 0)
		elog(ERROR, "swapcontext failed");
	free(stack);
	PG_RETURN_INT64((int64) spin_result);
}

/* where the frame pointer points while spinning, and the stack it is on */
Datum
jp_altstack_bogus_fp(PG_FUNCTION_ARGS)
{
	compute_bogus_fp();
	PG_RETURN_INT64((int64) bogus_fp);
}
