/*
 * jitprof_powa--1.1--1.2.sql
 *	  Registers the modules jitprof and jitprof_advisor with PoWA 5 as well
 *	  as PoWA 4: powa_jitprof_register() and powa_jitprof_unregister() read
 *	  the major version of the installed powa extension when they run, and
 *	  write that version's registration tables (doc/monitoring.md, "PoWA 4
 *	  and PoWA 5").
 *
 *   PoWA 4 (4.1)  one row per module, operation and server in
 *                 powa_functions, and a (srvid, extname) row in
 *                 powa_extensions: what 1.1 did, now under the name
 *                 powa_jitprof_register_powa4()
 *   PoWA 5 (5.0 to 5.3)
 *                 a datasource is an "extension": one row per datasource in
 *                 powa_extensions, its functions (snapshot, aggregate,
 *                 purge, reset; PoWA 5 has no unregister operation) in
 *                 powa_extension_functions, both shared by every server, and
 *                 one row per server in powa_extension_config.  The two
 *                 modules are the datasources "jitprof" (named after the
 *                 extension it reads, so that PoWA's event triggers enable
 *                 and disable it with CREATE and DROP EXTENSION jitprof
 *                 locally, and powa-collector records a monitored server's
 *                 jitprof version) and "jitprof_advisor", each enabled per
 *                 server.  Both are registered as internal to PoWA
 *                 (external = false): PoWA and powa-collector then call the
 *                 functions in powa's schema, where this extension's are
 *                 (public, which the foreign keys to public.powa_servers
 *                 already require).
 *
 * The purge functions ask PoWA for a server's retention through
 * powa_jitprof_retention(), since PoWA 5.1.2 replaced
 * powa_get_server_retention(srvid) by powa_get_server_retention(srvid,
 * datasource, datasource type).  Tables and history are unchanged.
 */
\echo Use "ALTER EXTENSION jitprof_powa UPDATE TO '1.2'" to load this file. \quit

-- the major version of the installed powa extension (NULL without one)
CREATE FUNCTION public.powa_jitprof_powa_major() RETURNS integer AS $_$
	SELECT pg_catalog.split_part(e.extversion, '.', 1)::integer
	FROM pg_catalog.pg_extension e
	WHERE e.extname = 'powa';
$_$ LANGUAGE sql STABLE;

-- how long PoWA keeps the history of the datasource _datasource of a server
CREATE FUNCTION public.powa_jitprof_retention(_srvid integer, _datasource text)
RETURNS interval AS $_$
DECLARE
	v_retention interval;
BEGIN
	IF pg_catalog.to_regprocedure('public.powa_get_server_retention(integer)') IS NOT NULL THEN
		-- PoWA 4 and PoWA 5 before 5.1.2: one retention per server
		EXECUTE 'SELECT public.powa_get_server_retention($1)'
			INTO v_retention USING _srvid;
	ELSE
		-- PoWA 5.1.2 on: a datasource may have its own
		EXECUTE 'SELECT public.powa_get_server_retention($1, $2, ''extension'')'
			INTO v_retention USING _srvid, _datasource;
	END IF;
	RETURN v_retention;
END;
$_$ LANGUAGE plpgsql STABLE;

CREATE OR REPLACE FUNCTION public.powa_jitprof_purge(_srvid integer) RETURNS void AS $PROC$
DECLARE
	v_funcname text := 'powa_jitprof_purge(' || _srvid || ')';
	v_rowcount bigint;
	v_retention interval;
BEGIN
	PERFORM public.powa_log(format('running %I', v_funcname));
	PERFORM public.powa_prevent_concurrent_snapshot(_srvid);

	v_retention := public.powa_jitprof_retention(_srvid, 'jitprof');

	-- as PoWA's modules do, only aggregated rows are purged
	DELETE FROM public.powa_jitprof_history
	WHERE upper(coalesce_range) < (now() - v_retention)
	  AND srvid = _srvid;
	GET DIAGNOSTICS v_rowcount = ROW_COUNT;
	PERFORM public.powa_log(format('%I (powa_jitprof_history) - rowcount: %s',
		v_funcname, v_rowcount));

	-- snapshot marks go with the oldest history left, so that the oldest
	-- remaining rows count as a baseline, never as new entries
	DELETE FROM public.powa_jitprof_snapshots s
	WHERE s.srvid = _srvid
	  AND s.ts < (now() - v_retention)
	  AND s.ts < coalesce((SELECT min(lower(h.coalesce_range))
						   FROM public.powa_jitprof_history h
						   WHERE h.srvid = _srvid), 'infinity');
END;
$PROC$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION public.powa_jitprof_advisor_purge(_srvid integer) RETURNS void AS $PROC$
DECLARE
	v_funcname text := 'powa_jitprof_advisor_purge(' || _srvid || ')';
	v_retention interval;
BEGIN
	PERFORM public.powa_log(format('running %I', v_funcname));
	PERFORM public.powa_prevent_concurrent_snapshot(_srvid);
	v_retention := public.powa_jitprof_retention(_srvid, 'jitprof_advisor');
	DELETE FROM public.powa_jitprof_payoff_history
	WHERE srvid = _srvid AND ts < (now() - v_retention);
	DELETE FROM public.powa_jitprof_advice_history
	WHERE srvid = _srvid AND ts < (now() - v_retention);
END;
$PROC$ LANGUAGE plpgsql;

-- 1.1's registration, which writes PoWA 4's tables
ALTER FUNCTION public.powa_jitprof_register(integer)
	RENAME TO powa_jitprof_register_powa4;

-- true if the local jitprof has the JIT advisor's views (jitprof 1.3)
CREATE FUNCTION public.powa_jitprof_local_advisor() RETURNS boolean AS $_$
	SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension e
				   JOIN pg_catalog.pg_depend d
					 ON d.refclassid = 'pg_catalog.pg_extension'::regclass
					AND d.refobjid = e.oid AND d.deptype = 'e'
					AND d.classid = 'pg_catalog.pg_proc'::regclass
				   JOIN pg_catalog.pg_proc p ON p.oid = d.objid
				   WHERE e.extname = 'jitprof'
					 AND p.proname = 'jitprof_jit_payoff');
$_$ LANGUAGE sql STABLE;

CREATE FUNCTION public.powa_jitprof_register_powa5(_srvid integer) RETURNS bool AS $_$
DECLARE
	v_schema text;
BEGIN
	-- external = false below: PoWA calls the functions in its own schema
	SELECT n.nspname INTO v_schema
	FROM pg_catalog.pg_extension e
	JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
	WHERE e.extname = 'powa';
	IF v_schema IS DISTINCT FROM 'public' THEN
		RAISE EXCEPTION 'extension "powa" is in schema "%", not in schema "public" with jitprof_powa',
			v_schema
			USING HINT = 'Create the extension powa in schema public.';
	END IF;

	-- only the local server's extension can be checked from here
	IF (_srvid = 0 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_extension
								   WHERE extname = 'jitprof')) THEN
		RAISE WARNING 'extension "jitprof" is not installed in database "%"',
			current_database()
			USING HINT = 'Run CREATE EXTENSION jitprof, then call powa_jitprof_register() again.';
		RETURN false;
	END IF;

	PERFORM public.powa_log('registering jitprof');
	INSERT INTO public.powa_extensions (extname, external, added_manually)
		VALUES ('jitprof', false, true)
		ON CONFLICT DO NOTHING;
	INSERT INTO public.powa_extension_functions (extname, operation,
			function_name, query_source, added_manually)
	VALUES ('jitprof', 'snapshot',  'powa_jitprof_snapshot',  'powa_jitprof_src', true),
		   ('jitprof', 'aggregate', 'powa_jitprof_aggregate', NULL,               true),
		   ('jitprof', 'purge',     'powa_jitprof_purge',     NULL,               true),
		   ('jitprof', 'reset',     'powa_jitprof_reset',     NULL,               true)
	ON CONFLICT DO NOTHING;
	-- PoWA's own activation: a row in powa_extension_config, or its
	-- enabled flag set again
	IF NOT public.powa_activate_extension(_srvid, 'jitprof') THEN
		RETURN false;
	END IF;

	-- the advisor's views need jitprof 1.3; a monitored server's version
	-- cannot be checked from here, and an older one fails the source alone
	IF (_srvid = 0 AND NOT public.powa_jitprof_local_advisor()) THEN
		RAISE WARNING 'extension "jitprof" is older than 1.3, so the jitprof_advisor module is not registered'
			USING HINT = 'Run ALTER EXTENSION jitprof UPDATE, then call powa_jitprof_register() again.';
		RETURN true;
	END IF;

	PERFORM public.powa_log('registering jitprof_advisor');
	INSERT INTO public.powa_extensions (extname, external, added_manually)
		VALUES ('jitprof_advisor', false, true)
		ON CONFLICT DO NOTHING;
	INSERT INTO public.powa_extension_functions (extname, operation,
			function_name, query_source, added_manually)
	VALUES ('jitprof_advisor', 'snapshot', 'powa_jitprof_advisor_snapshot', 'powa_jitprof_advisor_src', true),
		   ('jitprof_advisor', 'purge',    'powa_jitprof_advisor_purge',    NULL,                       true),
		   ('jitprof_advisor', 'reset',    'powa_jitprof_advisor_reset',    NULL,                       true)
	ON CONFLICT DO NOTHING;
	-- not powa_activate_extension(): for the local server it wants an
	-- installed extension of that name, and jitprof_advisor is a module of
	-- jitprof_powa; the same row it would write
	INSERT INTO public.powa_extension_config (srvid, extname, added_manually)
		VALUES (_srvid, 'jitprof_advisor', _srvid != 0)
		ON CONFLICT (srvid, extname) DO UPDATE SET enabled = true;

	RETURN true;
END;
$_$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_register(_srvid integer = 0) RETURNS bool AS $_$
DECLARE
	v_major integer := public.powa_jitprof_powa_major();
BEGIN
	IF v_major = 4 THEN
		RETURN public.powa_jitprof_register_powa4(_srvid);
	ELSIF v_major = 5 THEN
		RETURN public.powa_jitprof_register_powa5(_srvid);
	END IF;
	RAISE EXCEPTION 'jitprof_powa supports PoWA 4 and PoWA 5, not PoWA %',
		(SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'powa');
END;
$_$ LANGUAGE plpgsql;

-- removes both modules' registration for the server, and what no other
-- server still uses
CREATE OR REPLACE FUNCTION public.powa_jitprof_unregister(_srvid integer = 0) RETURNS bool AS $_$
DECLARE
	v_major integer := public.powa_jitprof_powa_major();
BEGIN
	PERFORM public.powa_log('unregistering jitprof');
	IF v_major = 4 THEN
		DELETE FROM public.powa_functions
		WHERE module IN ('jitprof', 'jitprof_advisor') AND srvid = _srvid;
		DELETE FROM public.powa_extensions
		WHERE extname = 'jitprof' AND srvid = _srvid;
	ELSIF v_major = 5 THEN
		DELETE FROM public.powa_extension_config
		WHERE extname IN ('jitprof', 'jitprof_advisor') AND srvid = _srvid;
		-- the functions go with their powa_extensions row (ON DELETE CASCADE)
		DELETE FROM public.powa_extensions e
		WHERE e.extname IN ('jitprof', 'jitprof_advisor')
		  AND NOT EXISTS (SELECT 1 FROM public.powa_extension_config c
						  WHERE c.extname = e.extname);
	ELSE
		RAISE EXCEPTION 'jitprof_powa supports PoWA 4 and PoWA 5, not PoWA %',
			(SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'powa');
	END IF;
	RETURN true;
END;
$_$ LANGUAGE plpgsql;
