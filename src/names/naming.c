/*-------------------------------------------------------------------------
 *
 * naming.c
 *	  Readable, stable names for JIT-compiled functions.
 *
 * llvmjit's names (evalexpr_<module>_<n>) come from per-backend counters.
 * When an expression is compiled this file records its origin (query ID,
 * plan node, and its role from roles.c), and when the linker reports the
 * function it names it q<queryid>#<plan_node_id>_<NodeType>_<role>...
 *
 * Contract: a name depends only on the query and the plan, never on the
 * data or on how often code was compiled; a role is given only when the
 * expression is found in its plan node ("expr" otherwise); every symbol is
 * made in one place, build_symbol, from the fields of its origin.  The
 * grammar, roles and numbering: doc/names.md.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/names/naming.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "names/names.h"
#include "names/roles.h"

/* the functions one JIT context (one query execution) generated */
typedef struct ContextNames
{
	JitContext *context;
	NamedFunction *functions;	/* in TopMemoryContext */
	int			nfunctions;
	int			maxfunctions;
	int			nresolved;		/* functions[0 .. nresolved-1] have names */
	int			nhelpers;		/* helpers of its objects linked so far */
	struct ContextNames *next;
} ContextNames;

/* where to find a generated function's entry, by llvmjit's name */
typedef struct PendingName
{
	char		llvm_name[JP_LLVM_NAME_LEN];	/* hash key */
	ContextNames *names;
	int			index;
} PendingName;

static HTAB *pending_names = NULL;
static ContextNames *all_contexts = NULL;

/*
 * Set when jitprof was loaded in the middle of a statement (by its first JIT
 * compilation) with compute_query_id = auto and nothing else asking for
 * query IDs: that statement was parsed without one.
 */
static bool queryids_enabled_late = false;
static TimestampTz late_statement_start = 0;
static bool queryid_hint_given = false;

static void
create_table(void)
{
	HASHCTL		ctl;

	ctl.keysize = JP_LLVM_NAME_LEN;
	ctl.entrysize = sizeof(PendingName);
	ctl.hcxt = TopMemoryContext;
	pending_names = hash_create("jitprof pending names", 256, &ctl,
								HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

static ContextNames *
context_names(JitContext *context)
{
	ContextNames *names;

	for (names = all_contexts; names != NULL; names = names->next)
		if (names->context == context)
			return names;

	names = MemoryContextAllocZero(TopMemoryContext, sizeof(ContextNames));
	names->context = context;
	names->maxfunctions = 16;
	names->functions = MemoryContextAlloc(TopMemoryContext,
										  names->maxfunctions * sizeof(NamedFunction));
	names->next = all_contexts;
	all_contexts = names;
	return names;
}

/*
 * Called by _PG_init before it enables query IDs: remember whether the
 * statement being run, if any, was parsed without one.
 */
void
jp_naming_note_load(void)
{
	if (compute_query_id == COMPUTE_QUERY_ID_AUTO && !IsQueryIdEnabled() &&
		IsTransactionState())
	{
		queryids_enabled_late = true;
		late_statement_start = GetCurrentStatementStartTimestamp();
	}
}

/*
 * A statement parsed before jitprof enabled query IDs has none, and no
 * later step can compute it without parsing the statement again (which
 * could fail the user's query).  Say so once per backend, in the log.
 */
static void
hint_missing_queryid(void)
{
	if (!queryids_enabled_late || queryid_hint_given ||
		GetCurrentStatementStartTimestamp() != late_statement_start)
		return;
	queryid_hint_given = true;
	ereport(LOG,
			(errmsg("JIT-compiled functions of a statement parsed before jitprof was loaded are named without a query ID"),
			 errdetail("jitprof was loaded by the statement's first JIT compilation, and compute_query_id is \"auto\"."),
			 errhint("Add jitprof to session_preload_libraries or shared_preload_libraries, or set compute_query_id to \"on\".")));
}

/*
 * Remember the functions that llvmjit just generated for "state", for the
 * query "queryid" (the caller's choice: see jp_execution_queryid()).
 * llvm_names lists them in generation order: the expression's own function
 * first, then its deform functions.
 *
 * Only the query and plan node are known now.  The role is found by looking
 * for the expression in its plan node's state, which the executor fills in
 * after compile_expr returns, so it is resolved when the code is linked.
 */
void
jp_naming_record_expr(ExprState *state, JitContext *context, int64 queryid,
					  const char *const *llvm_names, const bool *is_deform,
					  int nfunctions)
{
	PlanState  *ps = state->parent;
	ContextNames *names;
	const char *roles[16];
	int			nroles;
	int			next_deform = 0;
	int			owner = -1;

	if (pending_names == NULL)
		create_table();
	names = context_names(context);

	if (queryid == 0)
		hint_missing_queryid();

	nroles = jp_deform_roles(state, context, roles, lengthof(roles));

	for (int i = 0; i < nfunctions; i++)
	{
		NamedFunction *fn;
		PendingName *entry;

		if (names->nfunctions == names->maxfunctions)
		{
			names->maxfunctions *= 2;
			names->functions = repalloc(names->functions,
										names->maxfunctions * sizeof(NamedFunction));
		}
		fn = &names->functions[names->nfunctions];
		memset(fn, 0, sizeof(NamedFunction));
		strlcpy(fn->llvm_name, llvm_names[i], JP_LLVM_NAME_LEN);
		fn->state = state;
		fn->parent = ps;
		if (is_deform[i])
		{
			fn->deform_role = next_deform < nroles ? roles[next_deform++] : "deform";
			fn->owner = owner;
		}
		else
		{
			owner = names->nfunctions;
			fn->owner = -1;
		}
		fn->origin.queryid = queryid;
		fn->origin.plan_node_id = ps->plan->plan_node_id;
		strlcpy(fn->origin.node_type, jp_plan_node_name(ps->plan),
				JP_NODE_TYPE_LEN);

		entry = hash_search(pending_names, fn->llvm_name, HASH_ENTER, NULL);
		entry->names = names;
		entry->index = names->nfunctions;
		names->nfunctions++;
	}
}

/*
 * The one place where a symbol is made, from the parts in its origin
 * (doc/names.md has the grammar).  "expr" is the origin of the expression
 * the function belongs to: the function's own, except for a deform
 * function, which is named after its expression.
 *
 *		q<queryid>#<plan_node_id>_<NodeType>_<role>[_rel<oid>][_<n>]
 *		<its expression's symbol>_deform_<scan|outer|inner>
 *		q<queryid>_helper[_<n>]			(no plan node)
 */
static void
build_symbol(JitprofOrigin *origin, const JitprofOrigin *expr)
{
	char		rel[16] = "";
	char		nth[16] = "";
	char		deform[JP_ROLE_LEN + 1] = "";

	if (OidIsValid(expr->relid))
		snprintf(rel, sizeof(rel), "_rel%u", expr->relid);
	if (expr->ordinal > 1)
		snprintf(nth, sizeof(nth), "_%d", expr->ordinal);
	if (origin != expr)
		snprintf(deform, sizeof(deform), "_%s", origin->role);
	if (expr->plan_node_id < 0)
		snprintf(origin->symbol, JP_SYMBOL_LEN, "q" INT64_FORMAT "_%s%s",
				 expr->queryid, expr->role, nth);
	else
		snprintf(origin->symbol, JP_SYMBOL_LEN,
				 "q" INT64_FORMAT "#%d_%s_%s%s%s%s",
				 expr->queryid, expr->plan_node_id, expr->node_type,
				 expr->role, rel, nth, deform);
}

/*
 * Give roles and symbols to every function of "names" not resolved yet, in
 * generation order.  An expression's number counts the earlier expressions
 * of its node with the same role, unless the role brings its own; a deform
 * function is named after its expression, so that neither depends on how
 * many other expressions were compiled before it.
 */
static void
resolve_names(ContextNames *names)
{
	for (int i = names->nresolved; i < names->nfunctions; i++)
	{
		NamedFunction *fn = &names->functions[i];
		ExprRole	role;
		int			ordinal;

		if (fn->deform_role != NULL && fn->owner >= 0)
		{
			NamedFunction *owner = &names->functions[fn->owner];

			strlcpy(fn->origin.role, fn->deform_role, JP_ROLE_LEN);
			fn->origin.relid = owner->origin.relid;
			/* its name carries its expression's number, none of its own */
			fn->origin.ordinal = 0;
			build_symbol(&fn->origin, &owner->origin);
			continue;
		}

		if (fn->deform_role != NULL)
		{
			role.role = fn->deform_role;
			role.ordinal = 0;
			role.relid = InvalidOid;
		}
		else
			role = jp_expr_role(fn->state, names->functions, names->nfunctions);
		strlcpy(fn->origin.role, role.role, JP_ROLE_LEN);
		fn->origin.relid = role.relid;

		ordinal = role.ordinal;
		if (ordinal == 0)
		{
			ordinal = 1;
			for (int j = 0; j < i; j++)
			{
				NamedFunction *other = &names->functions[j];

				if (other->owner < 0 &&
					other->origin.plan_node_id == fn->origin.plan_node_id &&
					other->origin.relid == fn->origin.relid &&
					strcmp(other->origin.role, fn->origin.role) == 0)
					ordinal++;
			}
		}
		fn->origin.ordinal = ordinal;
		build_symbol(&fn->origin, &fn->origin);
	}
	names->nresolved = names->nfunctions;
}

/*
 * The pending entry of "llvm_name", its context's names resolved, or NULL.
 * Allocates nothing (see take()).
 */
static PendingName *
find_resolved(const char *llvm_name)
{
	char		key[JP_LLVM_NAME_LEN];
	PendingName *entry;

	if (pending_names == NULL)
		return NULL;
	strlcpy(key, llvm_name, JP_LLVM_NAME_LEN);
	entry = hash_search(pending_names, key, HASH_FIND, NULL);
	if (entry != NULL && entry->index >= entry->names->nresolved)
		resolve_names(entry->names);
	return entry;
}

/*
 * Hand over the origin of a function the linker reports, and the JIT
 * context it was generated in.  Called from inside LLVM, so it must not
 * throw, and it does not: resolving only reads the plan state, and finding
 * or removing a hash entry allocates nothing.
 */
static bool
take(const char *llvm_name, JitprofOrigin *origin,
	 JitprofStepLabels **labels, ContextNames **names)
{
	PendingName *entry;
	NamedFunction *fn;

	*labels = NULL;
	entry = find_resolved(llvm_name);
	if (entry == NULL)
		return false;
	fn = &entry->names->functions[entry->index];
	*origin = fn->origin;
	*labels = fn->labels;
	*names = entry->names;
	fn->labels = NULL;
	hash_search(pending_names, entry->llvm_name, HASH_REMOVE, NULL);
	return true;
}

/*
 * Give every function of a linked object its origin and step labels.  A
 * function that compile_expr did not report is a helper (for example an
 * inlined callee that was kept alive): it belongs to the query of the
 * object's other functions, has no plan node, and is numbered among the
 * helpers of its JIT context, in the order the context's objects are
 * linked and, within one object, in the order of llvmjit's names, which is
 * the same in every backend (they come from PostgreSQL's bitcode or differ
 * only in the module's counter; the linker's own order is not stable).  So
 * a helper's name is unique within one execution and the same in every
 * execution and every backend.  Same contract as take().
 */
void
jp_naming_take_object(JitprofFunction *functions, int nfunctions)
{
	ContextNames *names = NULL;
	int64		queryid = 0;
	int			nhelpers = 0;
	int			first = 1;

	for (int i = 0; i < nfunctions; i++)
	{
		JitprofFunction *fn = &functions[i];
		ContextNames *fn_names = NULL;

		if (take(fn->llvm_name, &fn->origin, &fn->step_labels, &fn_names))
		{
			if (names == NULL)
			{
				names = fn_names;
				queryid = fn->origin.queryid;
			}
			continue;
		}
		memset(&fn->origin, 0, sizeof(JitprofOrigin));
		nhelpers++;
	}
	if (nhelpers == 0)
		return;
	if (names != NULL)
	{
		first = names->nhelpers + 1;
		names->nhelpers += nhelpers;
	}

	/* helpers are the functions still without a symbol */
	for (int i = 0; i < nfunctions; i++)
	{
		JitprofOrigin *origin = &functions[i].origin;

		if (origin->symbol[0] != '\0')
			continue;
		origin->ordinal = first;
		for (int j = 0; j < nfunctions; j++)
			if (functions[j].origin.symbol[0] == '\0' &&
				strcmp(functions[j].llvm_name, functions[i].llvm_name) < 0)
				origin->ordinal++;
	}
	for (int i = 0; i < nfunctions; i++)
	{
		JitprofOrigin *origin = &functions[i].origin;

		if (origin->symbol[0] != '\0')
			continue;
		origin->queryid = queryid;
		origin->plan_node_id = -1;
		strlcpy(origin->role, "helper", JP_ROLE_LEN);
		build_symbol(origin, origin);
	}
}

/*
 * Keep the step labels steps.c made for a function until the linker
 * reports it; they go with its origin.  Takes ownership of "labels" (freed
 * here if the function is unknown).
 */
void
jp_naming_attach_labels(const char *llvm_name, JitprofStepLabels *labels)
{
	char		key[JP_LLVM_NAME_LEN];
	PendingName *entry = NULL;
	NamedFunction *fn;

	if (pending_names != NULL)
	{
		strlcpy(key, llvm_name, JP_LLVM_NAME_LEN);
		entry = hash_search(pending_names, key, HASH_FIND, NULL);
	}
	if (entry == NULL)
	{
		free(labels);
		return;
	}
	fn = &entry->names->functions[entry->index];
	free(fn->labels);
	fn->labels = labels;
}

/*
 * The symbol jp_naming_take_object will give "llvm_name", without handing
 * it over: the code arena asks for it before the link, to recognise an
 * object it has seen before.  Same contract as take().
 */
bool
jp_naming_peek(const char *llvm_name, char *symbol, size_t len)
{
	PendingName *entry = find_resolved(llvm_name);

	if (entry == NULL)
		return false;
	strlcpy(symbol, entry->names->functions[entry->index].origin.symbol, len);
	return true;
}

/*
 * Drop what is kept for a JIT context that is being released, including
 * functions that were never emitted.
 */
void
jp_naming_forget_context(JitContext *context)
{
	ContextNames **link;

	for (link = &all_contexts; *link != NULL; link = &(*link)->next)
	{
		ContextNames *names = *link;

		if (names->context != context)
			continue;
		for (int i = 0; i < names->nfunctions; i++)
		{
			hash_search(pending_names, names->functions[i].llvm_name,
						HASH_REMOVE, NULL);
			free(names->functions[i].labels);
		}
		*link = names->next;
		pfree(names->functions);
		pfree(names);
		return;
	}
}
