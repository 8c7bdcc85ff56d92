/*
 * jitprof_powa--unpackaged.sql
 *	  An empty jitprof_powa, the first step of adopting the objects that
 *	  integrations/powa/jitprof_powa.sql (the script jitprof shipped before
 *	  this extension) created:
 *
 *	CREATE EXTENSION jitprof_powa VERSION 'unpackaged';
 *	ALTER EXTENSION jitprof_powa UPDATE;
 *
 * The update (jitprof_powa--unpackaged--1.0.sql) makes them members of the
 * extension, rows and registration untouched.
 */
\echo Use "CREATE EXTENSION jitprof_powa VERSION 'unpackaged'" to load this file. \quit

DO $$
BEGIN
	IF pg_catalog.to_regtype('public.powa_jitprof_type') IS NULL THEN
		RAISE EXCEPTION 'type "public.powa_jitprof_type" does not exist'
			USING DETAIL = 'Version "unpackaged" of jitprof_powa adopts the objects of a database where jitprof_powa.sql was run, and this one has none.',
				  HINT = 'Run CREATE EXTENSION jitprof_powa without VERSION.';
	END IF;
END;
$$;
