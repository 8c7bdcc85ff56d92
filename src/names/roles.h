/*-------------------------------------------------------------------------
 *
 * roles.h
 *	  Inside the names folder: what roles.c works out for naming.c.  Other
 *	  folders include names/names.h only.
 *
 * naming.c records each generated function in a NamedFunction and asks
 * roles.c, at link time, what its expression is in its plan node.  roles.c
 * only reads the records of the JIT context (to find the host of a SubPlan
 * or of an array coercion) and calls nothing in naming.c.
 *
 * Copyright (c) 2026, The jitprof Developers
 * Distributed under the PostgreSQL License (the file LICENSE).
 *
 * IDENTIFICATION
 *	  src/names/roles.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JITPROF_NAMES_ROLES_H
#define JITPROF_NAMES_ROLES_H

#include "core/core.h"

/* a generated function, in the order llvmjit generated it */
typedef struct NamedFunction
{
	char		llvm_name[JP_LLVM_NAME_LEN];
	ExprState  *state;			/* expression it was generated for */
	PlanState  *parent;			/* state->parent, which outlives state */
	const char *deform_role;	/* NULL for the expression's own function */
	int			owner;			/* a deform function's expression, or -1 */
	JitprofOrigin origin;		/* role and symbol set once resolved */
	JitprofStepLabels *labels;	/* malloc'd (steps.c); NULL once handed over */
} NamedFunction;

/*
 * What is known of an expression's role once it is found in its plan node.
 * Most roles are numbered by generation order (ordinal = 0); roles whose
 * code may be generated during execution, in an order the data decides,
 * carry the number that identifies them (ordinal > 0).  Expressions built
 * for a partition that tuple routing opened are told apart by the
 * partition's relation OID.
 */
typedef struct ExprRole
{
	const char *role;
	int			ordinal;
	Oid			relid;
} ExprRole;

/* roles.c */
extern ExprRole jp_expr_role(ExprState *state,
							 const NamedFunction *functions, int nfunctions);
extern int	jp_deform_roles(ExprState *state, JitContext *context,
							const char **roles, int max_roles);

#endif							/* JITPROF_NAMES_ROLES_H */
