/*
 * jitprof_powa--unpackaged--1.0.sql
 *	  Makes the objects that integrations/powa/jitprof_powa.sql created
 *	  members of jitprof_powa 1.0, whose objects are the same: their rows
 *	  (the history) and the module's rows in powa_functions stay as they
 *	  are.  Indexes, constraints and the array type come with their table
 *	  or type.
 */
\echo Use "ALTER EXTENSION jitprof_powa UPDATE" to load this file. \quit

ALTER EXTENSION jitprof_powa ADD TYPE public.powa_jitprof_type;
ALTER EXTENSION jitprof_powa ADD TABLE public.powa_jitprof_src_tmp;
ALTER EXTENSION jitprof_powa ADD TABLE public.powa_jitprof_history_current;
ALTER EXTENSION jitprof_powa ADD TABLE public.powa_jitprof_history;
ALTER EXTENSION jitprof_powa ADD TABLE public.powa_jitprof_snapshots;
ALTER EXTENSION jitprof_powa ADD FUNCTION public.powa_jitprof_src(integer);
ALTER EXTENSION jitprof_powa ADD FUNCTION public.powa_jitprof_snapshot(integer);
ALTER EXTENSION jitprof_powa ADD FUNCTION public.powa_jitprof_aggregate(integer);
ALTER EXTENSION jitprof_powa ADD FUNCTION public.powa_jitprof_purge(integer);
ALTER EXTENSION jitprof_powa ADD FUNCTION public.powa_jitprof_reset(integer);
ALTER EXTENSION jitprof_powa ADD FUNCTION public.powa_jitprof_register(integer);
ALTER EXTENSION jitprof_powa ADD FUNCTION public.powa_jitprof_unregister(integer);
ALTER EXTENSION jitprof_powa ADD VIEW public.powa_jitprof_hotspots;

-- as 1.0 does: pg_dump keeps the history
SELECT pg_catalog.pg_extension_config_dump('public.powa_jitprof_history_current', '');
SELECT pg_catalog.pg_extension_config_dump('public.powa_jitprof_history', '');
SELECT pg_catalog.pg_extension_config_dump('public.powa_jitprof_snapshots', '');
