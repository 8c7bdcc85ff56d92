/*
 * jitprof_powa--1.0--1.1.sql
 *	  Adds the PoWA module jitprof_advisor: the JIT advisor's per-query
 *	  payoff (jitprof_jit_payoff) and its advice (jitprof_jit_advice()) at
 *	  every snapshot, from jitprof 1.3 on (doc/monitoring.md).
 *
 *   powa_jitprof_advisor_src(srvid)      the source: with srvid 0 this
 *                                        server's payoff rows (one per query
 *                                        whose ID the caller may see, at
 *                                        most jitprof.advisor_max_queries)
 *                                        and one advice row (queryid NULL);
 *                                        otherwise the rows powa-collector
 *                                        copied into
 *                                        powa_jitprof_advisor_src_tmp
 *   powa_jitprof_advisor_snapshot(srvid) files them in
 *                                        powa_jitprof_payoff_history and
 *                                        powa_jitprof_advice_history
 *   powa_jitprof_advisor_purge(srvid)    drops rows older than the retention
 *   powa_jitprof_advisor_reset(srvid)    drops everything of a server
 *
 * The history holds each snapshot's values as jitprof gives them (running
 * totals since the last jitprof_reset(): executions, jit_gain_ms,
 * explore_loss_ms; the verdict and levels as they stood).  The rows are
 * few (a query per row, not a function), so there is no aggregate step.
 * powa_jitprof_register() now registers this module too; the 1.0 module
 * and its history are unchanged.
 */
\echo Use "ALTER EXTENSION jitprof_powa UPDATE TO '1.1'" to load this file. \quit

-- what powa-collector copies from a monitored server: "srvid" then the
-- columns of powa_jitprof_advisor_src(0), in that order
CREATE UNLOGGED TABLE public.powa_jitprof_advisor_src_tmp (
	srvid integer NOT NULL,
	ts timestamp with time zone NOT NULL,
	userid oid,
	dbid oid,
	queryid bigint,
	plan_cost double precision,
	pg_level text,
	best_level text,
	verdict text,
	enforced_level text,
	executions bigint,
	explored bigint,
	saving_ms double precision,
	jit_gain_ms double precision,
	explore_loss_ms double precision,
	jit boolean,
	jit_above_cost double precision,
	jit_optimize_above_cost double precision,
	jit_inline_above_cost double precision,
	current_cpu_ms double precision,
	advised_cpu_ms double precision,
	advice_saving_ms double precision,
	unserved integer
);

CREATE TABLE public.powa_jitprof_payoff_history (
	srvid integer NOT NULL REFERENCES public.powa_servers (id)
		MATCH FULL ON UPDATE CASCADE ON DELETE CASCADE,
	ts timestamp with time zone NOT NULL,
	userid oid NOT NULL,
	dbid oid NOT NULL,
	queryid bigint NOT NULL,
	plan_cost double precision,
	pg_level text,
	best_level text,
	verdict text NOT NULL,
	enforced_level text,
	executions bigint NOT NULL,
	explored bigint NOT NULL,
	saving_ms double precision,
	jit_gain_ms double precision,
	explore_loss_ms double precision,
	PRIMARY KEY (srvid, ts, userid, dbid, queryid)
);
CREATE INDEX ON public.powa_jitprof_payoff_history (srvid, queryid, ts);

CREATE TABLE public.powa_jitprof_advice_history (
	srvid integer NOT NULL REFERENCES public.powa_servers (id)
		MATCH FULL ON UPDATE CASCADE ON DELETE CASCADE,
	ts timestamp with time zone NOT NULL,
	jit boolean NOT NULL,
	jit_above_cost double precision,
	jit_optimize_above_cost double precision,
	jit_inline_above_cost double precision,
	current_cpu_ms double precision NOT NULL,
	advised_cpu_ms double precision NOT NULL,
	saving_ms double precision NOT NULL,
	unserved integer NOT NULL,
	PRIMARY KEY (srvid, ts)
);

SELECT pg_catalog.pg_extension_config_dump('public.powa_jitprof_payoff_history', '');
SELECT pg_catalog.pg_extension_config_dump('public.powa_jitprof_advice_history', '');

CREATE FUNCTION public.powa_jitprof_advisor_src(IN _srvid integer,
	OUT ts timestamp with time zone,
	OUT userid oid,
	OUT dbid oid,
	OUT queryid bigint,
	OUT plan_cost double precision,
	OUT pg_level text,
	OUT best_level text,
	OUT verdict text,
	OUT enforced_level text,
	OUT executions bigint,
	OUT explored bigint,
	OUT saving_ms double precision,
	OUT jit_gain_ms double precision,
	OUT explore_loss_ms double precision,
	OUT jit boolean,
	OUT jit_above_cost double precision,
	OUT jit_optimize_above_cost double precision,
	OUT jit_inline_above_cost double precision,
	OUT current_cpu_ms double precision,
	OUT advised_cpu_ms double precision,
	OUT advice_saving_ms double precision,
	OUT unserved integer)
RETURNS SETOF record STABLE AS $PROC$
DECLARE
	v_schema text;
BEGIN
	IF (_srvid = 0) THEN
		SELECT n.nspname INTO v_schema
		FROM pg_catalog.pg_extension e
		JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'jitprof';
		IF v_schema IS NULL THEN
			RAISE EXCEPTION 'extension "jitprof" is not installed in database "%"',
				current_database()
				USING HINT = 'Run CREATE EXTENSION jitprof in the database PoWA connects to.';
		END IF;
		-- payoff rows whose query ID the caller may see, then the advice
		RETURN QUERY EXECUTE format(
			'SELECT now(), p.userid, p.dbid, p.queryid, p.plan_cost, p.pg_level,
					p.best_level, p.verdict, p.enforced_level, p.executions,
					p.explored, p.saving_ms, p.jit_gain_ms, p.explore_loss_ms,
					NULL::boolean, NULL::float8, NULL::float8, NULL::float8,
					NULL::float8, NULL::float8, NULL::float8, NULL::integer
			 FROM %1$I.jitprof_jit_payoff p
			 WHERE p.queryid IS NOT NULL
			 UNION ALL
			 SELECT now(), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
					NULL, NULL, NULL, NULL, NULL,
					a.jit, a.jit_above_cost, a.jit_optimize_above_cost,
					a.jit_inline_above_cost, a.current_cpu_ms, a.advised_cpu_ms,
					a.saving_ms, coalesce(cardinality(a.unserved), 0)
			 FROM %1$I.jitprof_jit_advice() a', v_schema);
	ELSE
		RETURN QUERY
		SELECT s.ts, s.userid, s.dbid, s.queryid, s.plan_cost, s.pg_level,
			s.best_level, s.verdict, s.enforced_level, s.executions, s.explored,
			s.saving_ms, s.jit_gain_ms, s.explore_loss_ms, s.jit,
			s.jit_above_cost, s.jit_optimize_above_cost, s.jit_inline_above_cost,
			s.current_cpu_ms, s.advised_cpu_ms, s.advice_saving_ms, s.unserved
		FROM public.powa_jitprof_advisor_src_tmp s
		WHERE s.srvid = _srvid;
	END IF;
END;
$PROC$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_advisor_snapshot(_srvid integer) RETURNS void AS $PROC$
DECLARE
	v_funcname text := 'powa_jitprof_advisor_snapshot';
	v_rowcount bigint;
BEGIN
	PERFORM public.powa_log(format('running %I', v_funcname));
	PERFORM public.powa_prevent_concurrent_snapshot(_srvid);

	-- the source is read once; a payoff row has a query ID, the advice none
	WITH capture AS (
		SELECT * FROM public.powa_jitprof_advisor_src(_srvid)
	),
	payoff AS (
		INSERT INTO public.powa_jitprof_payoff_history (srvid, ts, userid, dbid,
				queryid, plan_cost, pg_level, best_level, verdict, enforced_level,
				executions, explored, saving_ms, jit_gain_ms, explore_loss_ms)
			SELECT _srvid, c.ts, c.userid, c.dbid, c.queryid, c.plan_cost,
				c.pg_level, c.best_level, c.verdict, c.enforced_level, c.executions,
				c.explored, c.saving_ms, c.jit_gain_ms, c.explore_loss_ms
			FROM capture c
			WHERE c.queryid IS NOT NULL
			ON CONFLICT DO NOTHING
			RETURNING 1
	),
	advice AS (
		INSERT INTO public.powa_jitprof_advice_history (srvid, ts, jit,
				jit_above_cost, jit_optimize_above_cost, jit_inline_above_cost,
				current_cpu_ms, advised_cpu_ms, saving_ms, unserved)
			SELECT _srvid, c.ts, c.jit, c.jit_above_cost, c.jit_optimize_above_cost,
				c.jit_inline_above_cost, c.current_cpu_ms, c.advised_cpu_ms,
				c.advice_saving_ms, c.unserved
			FROM capture c
			WHERE c.queryid IS NULL AND c.jit IS NOT NULL
			ON CONFLICT DO NOTHING
			RETURNING 1
	)
	SELECT (SELECT count(*) FROM payoff) + (SELECT count(*) FROM advice)
		INTO v_rowcount;

	PERFORM public.powa_log(format('%I - rowcount: %s', v_funcname, v_rowcount));

	IF (_srvid != 0) THEN
		DELETE FROM public.powa_jitprof_advisor_src_tmp WHERE srvid = _srvid;
	END IF;
END;
$PROC$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_advisor_purge(_srvid integer) RETURNS void AS $PROC$
DECLARE
	v_funcname text := 'powa_jitprof_advisor_purge(' || _srvid || ')';
	v_retention interval;
BEGIN
	PERFORM public.powa_log(format('running %I', v_funcname));
	PERFORM public.powa_prevent_concurrent_snapshot(_srvid);
	SELECT public.powa_get_server_retention(_srvid) INTO v_retention;
	DELETE FROM public.powa_jitprof_payoff_history
	WHERE srvid = _srvid AND ts < (now() - v_retention);
	DELETE FROM public.powa_jitprof_advice_history
	WHERE srvid = _srvid AND ts < (now() - v_retention);
END;
$PROC$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_advisor_reset(_srvid integer) RETURNS void AS $PROC$
BEGIN
	PERFORM public.powa_log(format('running %I', 'powa_jitprof_advisor_reset(' || _srvid || ')'));
	DELETE FROM public.powa_jitprof_payoff_history WHERE srvid = _srvid;
	DELETE FROM public.powa_jitprof_advice_history WHERE srvid = _srvid;
	DELETE FROM public.powa_jitprof_advisor_src_tmp WHERE srvid = _srvid;
END;
$PROC$ LANGUAGE plpgsql;

-- 1.0's registration of the hotspot module keeps its body under another
-- name; powa_jitprof_register() registers that module, then the advisor's,
-- each once
ALTER FUNCTION public.powa_jitprof_register(integer)
	RENAME TO powa_jitprof_register_hotspots;

CREATE FUNCTION public.powa_jitprof_register(_srvid integer = 0) RETURNS bool AS $_$
BEGIN
	IF NOT public.powa_jitprof_register_hotspots(_srvid) THEN
		RETURN false;
	END IF;

	-- the advisor's views need jitprof 1.3; a monitored server's version
	-- cannot be checked from here, and an older one fails the source alone
	IF (_srvid = 0 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_extension e
								   JOIN pg_catalog.pg_depend d
									 ON d.refclassid = 'pg_catalog.pg_extension'::regclass
									AND d.refobjid = e.oid AND d.deptype = 'e'
									AND d.classid = 'pg_catalog.pg_proc'::regclass
								   JOIN pg_catalog.pg_proc p ON p.oid = d.objid
								   WHERE e.extname = 'jitprof'
									 AND p.proname = 'jitprof_jit_payoff')) THEN
		RAISE WARNING 'extension "jitprof" is older than 1.3, so the jitprof_advisor module is not registered'
			USING HINT = 'Run ALTER EXTENSION jitprof UPDATE, then call powa_jitprof_register() again.';
	ELSIF NOT EXISTS (SELECT 1 FROM public.powa_functions
					  WHERE module = 'jitprof_advisor' AND srvid = _srvid) THEN
		PERFORM public.powa_log('registering jitprof_advisor');
		INSERT INTO public.powa_functions (srvid, extname, module, operation,
				function_name, query_source, added_manually, enabled)
		VALUES (_srvid, 'jitprof', 'jitprof_advisor', 'snapshot',   'powa_jitprof_advisor_snapshot', 'powa_jitprof_advisor_src', true, true),
			   (_srvid, 'jitprof', 'jitprof_advisor', 'unregister', 'powa_jitprof_unregister',       NULL,                       true, true),
			   (_srvid, 'jitprof', 'jitprof_advisor', 'purge',      'powa_jitprof_advisor_purge',    NULL,                       true, true),
			   (_srvid, 'jitprof', 'jitprof_advisor', 'reset',      'powa_jitprof_advisor_reset',    NULL,                       true, true);
	END IF;

	RETURN true;
END;
$_$ LANGUAGE plpgsql;

-- removes both modules
CREATE OR REPLACE FUNCTION public.powa_jitprof_unregister(_srvid integer = 0) RETURNS bool AS $_$
BEGIN
	PERFORM public.powa_log('unregistering jitprof');
	DELETE FROM public.powa_functions
	WHERE module IN ('jitprof', 'jitprof_advisor') AND srvid = _srvid;
	RETURN true;
END;
$_$ LANGUAGE plpgsql;
