/*-------------------------------------------------------------------------
 *
 * provider.c
 *	  jitprof as a JIT provider: PostgreSQL's llvmjit, wrapped.
 *
 * With jit_provider = 'jitprof' the server calls _PG_jit_provider_init here,
 * once per backend, at its first expression a plan asks to JIT-compile.  At
 * the first compilation (at once, or at a tiered query's first round, so a
 * tiered session whose queries never switch never loads LLVM), it loads
 * jitprof_llvm.so (llvm_library.c), then llvmjit.so, PostgreSQL's own
 * provider, and rebinds llvmjit.so's calls of the LLVM C API functions that
 * create its object layer to jitprof_llvm.so's replacements (got_patch.c).
 * That works in any load order and changes llvmjit.so only: see
 * doc/provider.md.  Then it passes llvmjit's callbacks through.
 *
 * If llvmjit.so cannot be rebound, llvmjit runs as without jitprof, after
 * one WARNING.  If jitprof.llvmjit_library leads back into jitprof, JIT is
 * off for the backend, after one WARNING: queries run, interpreted.
 *
 * The compile_expr wrapper sees each expression right after llvmjit has
 * generated its functions and before they are optimized and emitted: it names
 * them (naming.c) and asks for frame pointers so that profilers can unwind
 * through JIT frames (through jitprof_llvm.so, which calls LLVM).  With
 * jitprof.tiering on, it hands the expression to tiering.c instead, which
 * calls the same compile later, for the expressions that have run.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/provider/provider.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include "fmgr.h"
#include "jit/llvmjit.h"
#include "miscadmin.h"

#include "utils/guc.h"

#include "provider/provider.h"

/* GUC */
char	   *jitprof_llvmjit_library = NULL;

/* true once this backend uses jitprof as its JIT provider */
static bool provider_active = false;

static JitProviderCallbacks llvmjit_callbacks;

/* the server's callbacks, which a failed load of llvmjit.so replaces */
static JitProviderCallbacks *server_callbacks = NULL;

/* loading llvmjit.so was tried; it succeeded and jitprof links its code */
static bool llvmjit_tried = false;
static bool llvmjit_bound = false;

/* llvmjit.so is being loaded; it called back into jitprof's provider */
static bool in_llvmjit_load = false;
static bool llvmjit_reentered = false;

/* most functions llvmjit generates for one expression we name */
#define MAX_FUNCTIONS_PER_EXPR 64

static bool jp_compile_expr(ExprState *state);
static bool compile_now(ExprState *state, ExprStateEvalFunc *llvmjit_entry);
static void jp_release_context(JitContext *context);
static void jp_reset_after_error(void);
static char *jp_llvmjit_path(const char *name);
static bool jp_library_is_jitprof(const char *path);

/*
 * Resolve a library name the way the dynamic loader of PostgreSQL does,
 * so that a missing file can be reported by its full path.
 */
static char *
jp_llvmjit_path(const char *name)
{
	char	   *path;

	if (strncmp(name, "$libdir/", 8) == 0)
		path = psprintf("%s/%s", pkglib_path, name + 8);
	else if (strchr(name, '/') == NULL)
		path = psprintf("%s/%s", pkglib_path, name);
	else
		path = pstrdup(name);

	if (strlen(path) < strlen(DLSUFFIX) ||
		strcmp(path + strlen(path) - strlen(DLSUFFIX), DLSUFFIX) != 0)
		path = psprintf("%s%s", path, DLSUFFIX);
	return path;
}

static bool
same_file(const struct stat *st, const char *path)
{
	struct stat other;

	return path != NULL && stat(path, &other) == 0 &&
		st->st_dev == other.st_dev && st->st_ino == other.st_ino;
}

/*
 * Is the library file at "path" one of jitprof's own (under any name, hard
 * and symbolic links included)?
 */
static bool
jp_library_is_jitprof(const char *path)
{
	struct stat st;
	Dl_info		self;
	char	   *llvm_path;
	bool		is_llvm;

	if (stat(path, &st) != 0)
		return false;

	/*
	 * Not dladdr(_PG_jit_provider_init): that exported name may resolve to
	 * another library's (llvmjit's, if it was loaded first).
	 */
	if (dladdr((void *) jp_library_is_jitprof, &self) != 0 &&
		same_file(&st, self.dli_fname))
		return true;

	llvm_path = psprintf("%s/%s%s", pkglib_path, JP_LLVM_LIBRARY, DLSUFFIX);
	is_llvm = same_file(&st, llvm_path);
	pfree(llvm_path);
	return is_llvm;
}

/*
 * jitprof.llvmjit_library must lead to PostgreSQL's provider, not back into
 * jitprof: jitprof would load itself as the library it wraps.
 */
static bool
check_llvmjit_library(char **newval, void **extra, GucSource source)
{
	char	   *path = jp_llvmjit_path(*newval);

	if (jp_library_is_jitprof(path))
	{
		GUC_check_errdetail("Library \"%s\" is part of jitprof, not PostgreSQL's JIT provider.",
							path);
		GUC_check_errhint("Set jitprof.llvmjit_library to PostgreSQL's llvmjit, for example '$libdir/llvmjit'.");
		pfree(path);
		return false;
	}
	pfree(path);
	return true;
}

/* the provider's own setting; called by _PG_init */
void
jp_provider_init(void)
{
	DefineCustomStringVariable("jitprof.llvmjit_library",
							   "PostgreSQL JIT provider library that generates the code jitprof links.",
							   NULL,
							   &jitprof_llvmjit_library,
							   "$libdir/llvmjit",
							   PGC_SUSET,
							   0,
							   check_llvmjit_library, NULL, NULL);
	jp_tiering_define_gucs();
}

/* true once this backend uses jitprof as its JIT provider */
bool
jp_provider_active(void)
{
	return provider_active;
}

/* Is code inside jitprof.so (this very copy of it)? */
static bool
in_this_library(const void *code)
{
	Dl_info		self;
	Dl_info		other;

	return dladdr((void *) jp_library_is_jitprof, &self) != 0 &&
		dladdr(code, &other) != 0 &&
		self.dli_fbase == other.dli_fbase;
}

static void
loading_llvmjit_context(void *arg)
{
	errcontext("loading PostgreSQL's JIT provider \"%s\" for jitprof",
			   (const char *) arg);
}

/* callbacks of a provider that compiles nothing: JIT is off */
static bool
no_compile_expr(ExprState *state)
{
	return false;
}

static void
no_release_context(JitContext *context)
{
}

static void
no_reset_after_error(void)
{
}

/* run this session without JIT, as a server without a JIT provider does */
static void
disable_jit(JitProviderCallbacks *cb)
{
	cb->reset_after_error = no_reset_after_error;
	cb->release_context = no_release_context;
	cb->compile_expr = no_compile_expr;
}

/*
 * jitprof.llvmjit_library leads back into jitprof.  The GUC's check hook
 * refuses such a value when it is set; this catches what it cannot see (a
 * library that loads jitprof in turn, a file changed since).  Loading on
 * would recurse without end, so JIT is turned off for this backend instead:
 * queries still run, interpreted, as when no JIT provider is installed.
 */
static void
refuse_self_reference(JitProviderCallbacks *cb, const char *path,
					  bool loads_jitprof)
{
	ereport(WARNING,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("jitprof.llvmjit_library leads back into jitprof"),
			 loads_jitprof ?
			 errdetail("Library \"%s\" loads jitprof's JIT provider in turn. JIT compilation is disabled for this session.",
					   path) :
			 errdetail("Library \"%s\" is part of jitprof. JIT compilation is disabled for this session.",
					   path),
			 errhint("Set jitprof.llvmjit_library to PostgreSQL's llvmjit, for example '$libdir/llvmjit'.")));

	disable_jit(cb);
}

/*
 * Load PostgreSQL's JIT provider.  If the loader fails (not a shared
 * library, a missing dependency, no _PG_jit_provider_init), say why once and
 * return NULL: the session then runs without JIT, instead of failing the
 * query that needed it.  Catching is safe here because a failed load holds
 * no resources.
 */
static JitProviderInit
load_llvmjit(const char *path)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	JitProviderInit init = NULL;

	PG_TRY();
	{
		init = (JitProviderInit)
			load_external_function(path, "_PG_jit_provider_init", true, NULL);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		ereport(WARNING,
				(errcode(edata->sqlerrcode),
				 errmsg("could not load PostgreSQL's JIT provider \"%s\", so JIT compilation is disabled for this session",
						path),
				 errdetail_internal("%s", edata->message),
				 errhint("Set jitprof.llvmjit_library to PostgreSQL's llvmjit, for example '$libdir/llvmjit'.")));
		FreeErrorData(edata);
		init = NULL;
	}
	PG_END_TRY();

	return init;
}

void
_PG_jit_provider_init(JitProviderCallbacks *cb)
{
	char	   *path;
	struct stat st;

	if (in_llvmjit_load)
	{
		/* the library being loaded called back in: the outer call warns */
		llvmjit_reentered = true;
		disable_jit(cb);
		return;
	}

	path = jp_llvmjit_path(jitprof_llvmjit_library);
	if (jp_library_is_jitprof(path))
	{
		refuse_self_reference(cb, path, false);
		return;
	}

	if (stat(path, &st) != 0)
	{
		ereport(WARNING,
				(errcode_for_file_access(),
				 errmsg("could not find PostgreSQL's JIT provider \"%s\": %m",
						path),
				 errdetail("JIT compilation is disabled for this session."),
				 errhint("Install PostgreSQL's LLVM JIT support (llvmjit.so), or set jitprof.llvmjit_library to its path.")));
		disable_jit(cb);
		return;
	}
	pfree(path);

	server_callbacks = cb;
	cb->reset_after_error = jp_reset_after_error;
	cb->release_context = jp_release_context;
	cb->compile_expr = jp_compile_expr;

	provider_active = true;

	/* without preloading, this is the first chance to ask for query IDs */
	EnableQueryId();
}

/*
 * Load llvmjit.so and bind it to jitprof's linker, on the first compilation.
 * True if jitprof links its code.  Otherwise the server's callbacks now say
 * what runs instead: nothing (JIT off for the session: llvmjit.so could not
 * be loaded, or leads back into jitprof) or stock llvmjit (it could not be
 * rebound), each after one WARNING.
 */
static bool
llvmjit_ready(void)
{
	char	   *path;
	const JitprofLlvmTable *llvm;
	JitProviderInit volatile init = NULL;
	volatile bool bound = false;
	ErrorContextCallback errcallback;

	if (likely(llvmjit_tried))
		return llvmjit_bound;
	llvmjit_tried = true;

	path = jp_llvmjit_path(jitprof_llvmjit_library);
	llvm = jp_llvm_load();

	errcallback.callback = loading_llvmjit_context;
	errcallback.arg = path;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	in_llvmjit_load = true;
	PG_TRY();
	{
		/*
		 * llvmjit.so may be loaded already (a parallel worker loads its
		 * leader's libraries first; anyone may LOAD it): that is fine, its
		 * LLVM session starts at its first compilation, after this.
		 */
		init = load_llvmjit(path);
		if (init != NULL && in_this_library((const void *) init))
			llvmjit_reentered = true;
		else if (init != NULL)
		{
			/* sets callbacks only (and may call back in here, see above) */
			init(&llvmjit_callbacks);
			if (!llvmjit_reentered && llvm != NULL)
				bound = jp_got_patch((const void *) init, path,
									 llvm->interposers, llvm->ninterposers);
		}
	}
	PG_FINALLY();
	{
		in_llvmjit_load = false;
	}
	PG_END_TRY();

	error_context_stack = errcallback.previous;

	if (init == NULL)
		disable_jit(server_callbacks);
	else if (llvmjit_reentered)
		refuse_self_reference(server_callbacks, path,
							  !in_this_library((const void *) init));
	else if (!bound)
	{
		/* stock llvmjit, as if jitprof were not there (a WARNING was given) */
		*server_callbacks = llvmjit_callbacks;
	}
	else
		llvmjit_bound = true;

	if (!llvmjit_bound)
		provider_active = false;
	return llvmjit_bound;
}

/*
 * llvmjit emits a query's code on the first evaluation of one of its
 * expressions, so that is where a link fails.  LLVM reports the cause only
 * to llvmjit's error reporter (a WARNING); the ERROR that ends the query says
 * "failed to materialize".  Evaluating each expression the first time
 * through first_evaluation() adds the cause to that ERROR as its context.
 */
typedef struct FirstEvaluation
{
	ExprStateEvalFunc evalfunc;
	void	   *evalfunc_private;
} FirstEvaluation;

static void
link_failure_context(void *arg)
{
	uint64		errors_before = *(uint64 *) arg;

	if (jp_registry_link_errors() > errors_before)
		errcontext("JIT code could not be linked: %s",
				   jp_registry_last_link_error());
}

static Datum
first_evaluation(ExprState *state, ExprContext *econtext, bool *isNull)
{
	FirstEvaluation *first = (FirstEvaluation *) state->evalfunc_private;
	uint64		errors_before = jp_registry_link_errors();
	ErrorContextCallback errcallback;
	Datum		result;
	int32		compiling;

	/* from now on llvmjit's own entry point, which installs the code */
	state->evalfunc = first->evalfunc;
	state->evalfunc_private = first->evalfunc_private;

	errcallback.callback = link_failure_context;
	errcallback.arg = &errors_before;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	compiling = jp_sampler_compile_begin(state->parent);
	result = state->evalfunc(state, econtext, isNull);
	jp_sampler_compile_end(compiling);

	error_context_stack = errcallback.previous;
	return result;
}

static void
watch_first_evaluation(ExprState *state)
{
	FirstEvaluation *first = palloc(sizeof(FirstEvaluation));

	first->evalfunc = state->evalfunc;
	first->evalfunc_private = state->evalfunc_private;
	state->evalfunc = first_evaluation;
	state->evalfunc_private = first;
}

static void
reset_llvmjit_after_error(void)
{
	if (llvmjit_bound)
		llvmjit_callbacks.reset_after_error();
}

static const JpTieringCompiler tiering_compiler = {
	.compile = compile_now,
	.reset_after_error = reset_llvmjit_after_error,
};

/* a query the JIT advisor runs at an eager level is compiled eagerly */
static bool
jp_compile_expr(ExprState *state)
{
	if (jitprof_tiering &&
		jp_advisor_tiering(state->parent->state) != JP_ADVISED_EAGER)
		return jp_tiering_defer(state, &tiering_compiler);
	return compile_now(state, NULL);
}

/*
 * Compile one expression with llvmjit, now, and name its functions.  If
 * llvmjit_entry is not NULL, it is set to the evalfunc llvmjit installed.
 */
static bool
compile_now(ExprState *state, ExprStateEvalFunc *llvmjit_entry)
{
	EState	   *estate = state->parent->state;
	LLVMJitContext *context;
	int			counter_before;
	char	   *names[MAX_FUNCTIONS_PER_EXPR];
	bool		is_deform[MAX_FUNCTIONS_PER_EXPR];
	int			nfunctions;
	int32		compiling;
	bool		compiled;

	if (unlikely(!llvmjit_ready()))
	{
		/* a tiered round leaves the query interpreted; else as the server */
		if (llvmjit_entry != NULL)
			return false;
		return server_callbacks->compile_expr(state);
	}

	/* llvmjit creates the JIT context on the query's first expression */
	context = (LLVMJitContext *) estate->es_jit;
	counter_before = context ? context->counter : 0;

	compiling = jp_sampler_compile_begin(state->parent);
	compiled = llvmjit_callbacks.compile_expr(state);
	jp_sampler_compile_end(compiling);
	if (!compiled)
		return false;

	/*
	 * llvmjit creates its object layers with its LLVM session, on its first
	 * compilation: by now jitprof's linker must be the one in use.
	 */
	if (jp_llvm_loaded()->linker_in_use() == JP_LINKER_NONE)
	{
		static bool warned = false;

		if (!warned)
			ereport(WARNING,
					(errmsg("jitprof does not link the JIT-compiled code of this session"),
					 errdetail("PostgreSQL's llvmjit created its object layer without jitprof, so jitprof names and profiles none of its code."),
					 errhint("Make sure nothing but jitprof loads and initializes llvmjit: set jit_provider = 'jitprof'.")));
		warned = true;
	}

	if (llvmjit_entry != NULL)
		*llvmjit_entry = state->evalfunc;
	watch_first_evaluation(state);

	context = (LLVMJitContext *) estate->es_jit;
	if (context == NULL || context->module == NULL)
		return true;

	nfunctions = jp_llvm_loaded()->new_functions(context, counter_before,
												 MAX_FUNCTIONS_PER_EXPR,
												 names, is_deform);

	jp_naming_record_expr(state, &context->base, jp_execution_queryid(estate),
						  (const char *const *) names, is_deform, nfunctions);

	/* the step listing and DWARF line tables (steps.c), if jitprof.steps */
	jp_steps_annotate(state, context, jp_llvm_loaded(), names, is_deform,
					  nfunctions);

	for (int i = 0; i < nfunctions; i++)
		pfree(names[i]);

	return true;
}

/* only llvmjit creates JIT contexts, so llvmjit.so is loaded by now */
static void
jp_release_context(JitContext *context)
{
	llvmjit_callbacks.release_context(context);
	jp_naming_forget_context(context);
}

static void
jp_reset_after_error(void)
{
	if (llvmjit_bound)
		llvmjit_callbacks.reset_after_error();
}
