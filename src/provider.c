/*-------------------------------------------------------------------------
 *
 * provider.c
 *	  jitprof as a JIT provider: PostgreSQL's llvmjit, wrapped.
 *
 * With jit_provider = 'jitprof' the server calls _PG_jit_provider_init here.
 * It loads llvmjit.so, PostgreSQL's own provider, and passes its callbacks
 * through.  Because jitprof.so is already loaded (RTLD_GLOBAL) when llvmjit.so
 * is, llvmjit's object layer comes from linker.cpp, not from libLLVM.
 *
 * The compile_expr wrapper sees each expression right after llvmjit has
 * generated its functions and before they are optimized and emitted: it names
 * them (naming.c) and asks for frame pointers so that profilers can unwind
 * through JIT frames.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include "access/parallel.h"
#include "fmgr.h"
#include "jit/llvmjit.h"
#include "miscadmin.h"
#include "utils/queryjumble.h"

#include <llvm-c/Core.h>

#include "jitprof.h"
#include "linker.h"

/* true once this backend uses jitprof as its JIT provider */
bool		jitprof_provider_active = false;

static JitProviderCallbacks llvmjit_callbacks;

/* most functions llvmjit generates for one expression we name */
#define MAX_FUNCTIONS_PER_EXPR 64

static bool jp_compile_expr(ExprState *state);
static void jp_release_context(JitContext *context);
static void jp_reset_after_error(void);

/*
 * Resolve the library name the way the dynamic loader of PostgreSQL does,
 * so that a missing file can be reported by its full path.
 */
static char *
llvmjit_path(void)
{
	const char *name = jitprof_llvmjit_library;
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

static void
loading_llvmjit_context(void *arg)
{
	errcontext("loading PostgreSQL's JIT provider \"%s\" for jitprof",
			   (const char *) arg);
}

void
_PG_jit_provider_init(JitProviderCallbacks *cb)
{
	char	   *path = llvmjit_path();
	struct stat st;
	void	   *handle;
	JitProviderInit init;
	ErrorContextCallback errcallback;

	if (stat(path, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("jitprof could not find PostgreSQL's JIT provider \"%s\": %m",
						path),
				 errhint("Install PostgreSQL's LLVM JIT support (llvmjit.so), or set jitprof.llvmjit_library to its path.")));

	/*
	 * If llvmjit is already loaded, its LLVM symbols were bound before
	 * jitprof could take them over, and its code would bypass jitprof.
	 *
	 * Not so in a parallel worker: it loads its leader's libraries, in the
	 * leader's order (RestoreLibraryState), before JIT starts, so llvmjit.so
	 * is there already but was loaded after jitprof.so and bound to it.  Had
	 * the order been wrong, the leader would have warned already.
	 */
	handle = IsParallelWorker() ? NULL : dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (handle != NULL)
	{
		dlclose(handle);
		ereport(WARNING,
				(errmsg("\"%s\" was loaded before jitprof; its code is not linked by jitprof",
						path),
				 errhint("Do not load llvmjit yourself: set jit_provider = 'jitprof' and let jitprof load it.")));
	}

	errcallback.callback = loading_llvmjit_context;
	errcallback.arg = path;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	init = (JitProviderInit)
		load_external_function(path, "_PG_jit_provider_init", true, NULL);
	init(&llvmjit_callbacks);

	error_context_stack = errcallback.previous;

	cb->reset_after_error = jp_reset_after_error;
	cb->release_context = jp_release_context;
	cb->compile_expr = jp_compile_expr;

	jitprof_provider_active = true;

	/* without preloading, this is the first chance to ask for query IDs */
	EnableQueryId();
}

/*
 * Ask LLVM to keep a frame pointer in a JIT function, so that perf -g and
 * jitprof's sampler can walk from JIT code into the executor.
 */
static void
keep_frame_pointer(LLVMValueRef fn)
{
	LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(fn));
	LLVMAttributeRef attr = LLVMCreateStringAttribute(ctx, "frame-pointer",
													  strlen("frame-pointer"),
													  "all", strlen("all"));

	LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, attr);
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

	if (jp_link_errors_reported > errors_before)
		errcontext("JIT code could not be linked: %s", jp_last_link_error);
}

static Datum
first_evaluation(ExprState *state, ExprContext *econtext, bool *isNull)
{
	FirstEvaluation *first = (FirstEvaluation *) state->evalfunc_private;
	uint64		errors_before = jp_link_errors_reported;
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

static bool
jp_compile_expr(ExprState *state)
{
	EState	   *estate = state->parent->state;
	LLVMJitContext *context;
	int			counter_before;
	const char *names[MAX_FUNCTIONS_PER_EXPR];
	bool		is_deform[MAX_FUNCTIONS_PER_EXPR];
	int			nfunctions = 0;
	int32		compiling;
	bool		compiled;

	/* llvmjit creates the JIT context on the query's first expression */
	context = (LLVMJitContext *) estate->es_jit;
	counter_before = context ? context->counter : 0;

	compiling = jp_sampler_compile_begin(state->parent);
	compiled = llvmjit_callbacks.compile_expr(state);
	jp_sampler_compile_end(compiling);
	if (!compiled)
		return false;

	watch_first_evaluation(state);

	context = (LLVMJitContext *) estate->es_jit;
	if (context == NULL || context->module == NULL)
		return true;

	/*
	 * llvm_expand_funcname() numbers every function it names with the
	 * context's counter, so the new functions are those numbered from
	 * counter_before on.
	 */
	for (int n = counter_before;
		 n < context->counter && nfunctions < MAX_FUNCTIONS_PER_EXPR; n++)
	{
		static const char *const prefixes[] = {"evalexpr", "deform"};

		for (int p = 0; p < lengthof(prefixes); p++)
		{
			char	   *name = psprintf("%s_%zu_%d", prefixes[p],
										context->module_generation, n);
			LLVMValueRef fn = LLVMGetNamedFunction(context->module, name);

			if (fn == NULL || LLVMIsDeclaration(fn))
			{
				pfree(name);
				continue;
			}
			keep_frame_pointer(fn);
			names[nfunctions] = name;
			is_deform[nfunctions] = (p == 1);
			nfunctions++;
			break;
		}
	}

	jp_naming_record_expr(state, &context->base, names, is_deform, nfunctions);

	for (int i = 0; i < nfunctions; i++)
		pfree((char *) names[i]);

	return true;
}

static void
jp_release_context(JitContext *context)
{
	llvmjit_callbacks.release_context(context);
	jp_naming_forget_context(context);
}

static void
jp_reset_after_error(void)
{
	llvmjit_callbacks.reset_after_error();
}
