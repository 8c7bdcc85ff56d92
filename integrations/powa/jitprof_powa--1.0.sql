/*
 * jitprof_powa--1.0.sql
 *	  Extension jitprof_powa: jitprof as a PoWA 4 datasource (tested with
 *	  PoWA 4.1.4 and powa-collector 1.2.0, the Debian 12 packages).
 *
 * PoWA keeps a workload history per server by calling, at every snapshot,
 * the "snapshot" functions registered in powa_functions, and now and then
 * their "aggregate" and "purge" functions.  This extension adds a module
 * named jitprof, built the way PoWA 4.1 builds its pg_wait_sampling and
 * pg_stat_kcache modules:
 *
 *   powa_jitprof_src(srvid)         the source.  With srvid 0 it reads this
 *                                   server's jitprof_hotspots; with another
 *                                   srvid it reads the rows powa-collector
 *                                   copied into powa_jitprof_src_tmp.
 *   powa_jitprof_snapshot(srvid)    appends the source's rows to
 *                                   powa_jitprof_history_current and marks
 *                                   the snapshot in powa_jitprof_snapshots
 *   powa_jitprof_aggregate(srvid)   folds the current rows into arrays in
 *                                   powa_jitprof_history, one row per entry
 *   powa_jitprof_purge(srvid)       drops history older than the retention
 *   powa_jitprof_reset(srvid)       drops everything of a server
 *   powa_jitprof_register(srvid)    adds these to powa_functions, once
 *   powa_jitprof_unregister(srvid)  removes them
 *
 * The history holds jitprof's running totals, as PoWA's own modules do; the
 * view powa_jitprof_hotspots turns them into deltas between consecutive
 * snapshots of a server.  An entry created since the previous snapshot (new,
 * or re-created after an eviction, a jitprof_reset() or a restart with
 * jitprof.save off: its first_seen changed) counts all its samples.  The
 * first snapshot of a server has no baseline and yields no deltas.
 *
 * Only entries with samples are copied (at most jitprof.max_hotspots rows
 * per snapshot, 5,000 by default); an entry absent from a snapshot had none.
 *
 * What depends on PoWA 4 (a port to another PoWA major version starts
 * here): the foreign keys to powa_servers; powa_jitprof_register() and
 * powa_jitprof_unregister(), which write PoWA 4's powa_extensions and
 * powa_functions; and the calls to powa_log(),
 * powa_prevent_concurrent_snapshot() and powa_get_server_retention().
 * The rest reads only jitprof and this extension's own tables.
 *
 * The objects are those of integrations/powa/jitprof_powa.sql, the script
 * jitprof shipped before this extension existed;
 * jitprof_powa--unpackaged--1.0.sql adopts them where that script was run.
 * Later versions change them only through update scripts that keep the
 * tables' rows (doc/monitoring.md).
 */
\echo Use "CREATE EXTENSION jitprof_powa" to load this file. \quit

-- one entry's running totals at one snapshot
CREATE TYPE public.powa_jitprof_type AS (
	ts timestamp with time zone,
	first_seen timestamp with time zone,
	self_samples bigint,
	total_samples bigint,
	query_samples bigint
);

-- what powa-collector copies from a monitored server: "srvid" then the
-- columns of powa_jitprof_src(0), in that order
CREATE UNLOGGED TABLE public.powa_jitprof_src_tmp (
	srvid integer NOT NULL,
	ts timestamp with time zone NOT NULL,
	userid oid NOT NULL,
	dbid oid NOT NULL,
	queryid bigint NOT NULL,
	plan_node_id integer NOT NULL,
	node_type text,
	role text NOT NULL,
	symbol text NOT NULL,
	self_samples bigint NOT NULL,
	total_samples bigint NOT NULL,
	query_samples bigint NOT NULL,
	first_seen timestamp with time zone NOT NULL
);

CREATE TABLE public.powa_jitprof_history_current (
	srvid integer NOT NULL REFERENCES public.powa_servers (id)
		MATCH FULL ON UPDATE CASCADE ON DELETE CASCADE,
	userid oid NOT NULL,
	dbid oid NOT NULL,
	queryid bigint NOT NULL,
	plan_node_id integer NOT NULL,
	node_type text,
	role text NOT NULL,
	symbol text NOT NULL,
	record public.powa_jitprof_type NOT NULL
);
CREATE INDEX ON public.powa_jitprof_history_current (srvid);

CREATE TABLE public.powa_jitprof_history (
	srvid integer NOT NULL REFERENCES public.powa_servers (id)
		MATCH FULL ON UPDATE CASCADE ON DELETE CASCADE,
	coalesce_range tstzrange NOT NULL,
	userid oid NOT NULL,
	dbid oid NOT NULL,
	queryid bigint NOT NULL,
	plan_node_id integer NOT NULL,
	node_type text,
	role text NOT NULL,
	symbol text NOT NULL,
	records public.powa_jitprof_type[] NOT NULL,
	mins_in_range public.powa_jitprof_type NOT NULL,
	maxs_in_range public.powa_jitprof_type NOT NULL,
	PRIMARY KEY (srvid, coalesce_range, userid, dbid, queryid, plan_node_id, symbol)
);
CREATE INDEX powa_jitprof_history_query_ts ON public.powa_jitprof_history
	USING gist (srvid, queryid, coalesce_range);

-- the time of every snapshot, rows or not: a delta runs from the previous one
CREATE TABLE public.powa_jitprof_snapshots (
	srvid integer NOT NULL REFERENCES public.powa_servers (id)
		MATCH FULL ON UPDATE CASCADE ON DELETE CASCADE,
	ts timestamp with time zone NOT NULL,
	PRIMARY KEY (srvid, ts)
);

-- pg_dump dumps the rows of these (they are the history), not their
-- definitions; powa_jitprof_src_tmp holds rows only during a snapshot
SELECT pg_catalog.pg_extension_config_dump('public.powa_jitprof_history_current', '');
SELECT pg_catalog.pg_extension_config_dump('public.powa_jitprof_history', '');
SELECT pg_catalog.pg_extension_config_dump('public.powa_jitprof_snapshots', '');

CREATE FUNCTION public.powa_jitprof_src(IN _srvid integer,
	OUT ts timestamp with time zone,
	OUT userid oid,
	OUT dbid oid,
	OUT queryid bigint,
	OUT plan_node_id integer,
	OUT node_type text,
	OUT role text,
	OUT symbol text,
	OUT self_samples bigint,
	OUT total_samples bigint,
	OUT query_samples bigint,
	OUT first_seen timestamp with time zone)
RETURNS SETOF record STABLE AS $PROC$
DECLARE
	v_schema text;
BEGIN
	IF (_srvid = 0) THEN
		-- jitprof's views live in the schema its extension was created in
		SELECT n.nspname INTO v_schema
		FROM pg_catalog.pg_extension e
		JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'jitprof';
		IF v_schema IS NULL THEN
			RAISE EXCEPTION 'extension "jitprof" is not installed in database "%"',
				current_database()
				USING HINT = 'Run CREATE EXTENSION jitprof in the database PoWA connects to.';
		END IF;
		-- rows of other roles show no query ID unless the caller has the
		-- privileges of pg_read_all_stats: they are left out
		RETURN QUERY EXECUTE format(
			'SELECT now(), h.userid, h.dbid, h.queryid, h.plan_node_id,
					h.node_type, h.role, h.symbol, h.self_samples,
					h.total_samples, h.query_samples, h.first_seen
			 FROM %I.jitprof_hotspots h
			 WHERE h.queryid IS NOT NULL AND h.symbol IS NOT NULL
			   AND h.total_samples > 0', v_schema);
	ELSE
		RETURN QUERY
		SELECT s.ts, s.userid, s.dbid, s.queryid, s.plan_node_id, s.node_type,
			s.role, s.symbol, s.self_samples, s.total_samples, s.query_samples,
			s.first_seen
		FROM public.powa_jitprof_src_tmp s
		WHERE s.srvid = _srvid;
	END IF;
END;
$PROC$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_snapshot(_srvid integer) RETURNS void AS $PROC$
DECLARE
	v_funcname text := 'powa_jitprof_snapshot';
	v_rowcount bigint;
	v_ts timestamp with time zone;
BEGIN
	PERFORM public.powa_log(format('running %I', v_funcname));
	PERFORM public.powa_prevent_concurrent_snapshot(_srvid);

	WITH capture AS (
		SELECT * FROM public.powa_jitprof_src(_srvid)
	),
	inserted AS (
		INSERT INTO public.powa_jitprof_history_current (srvid, userid, dbid,
				queryid, plan_node_id, node_type, role, symbol, record)
			SELECT _srvid, c.userid, c.dbid, c.queryid, c.plan_node_id,
				c.node_type, c.role, c.symbol,
				ROW(c.ts, c.first_seen, c.self_samples, c.total_samples,
					c.query_samples)::public.powa_jitprof_type
			FROM capture c
			RETURNING (record).ts
	)
	SELECT count(*), max(i.ts) INTO v_rowcount, v_ts FROM inserted i;

	-- the source's clock (the monitored server's, in remote mode) when it
	-- returned rows, the repository's otherwise
	INSERT INTO public.powa_jitprof_snapshots (srvid, ts)
		VALUES (_srvid, coalesce(v_ts, now()))
		ON CONFLICT DO NOTHING;

	PERFORM public.powa_log(format('%I - rowcount: %s', v_funcname, v_rowcount));

	IF (_srvid != 0) THEN
		DELETE FROM public.powa_jitprof_src_tmp WHERE srvid = _srvid;
	END IF;
END;
$PROC$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_aggregate(_srvid integer) RETURNS void AS $PROC$
DECLARE
	v_funcname text := 'powa_jitprof_aggregate(' || _srvid || ')';
	v_rowcount bigint;
BEGIN
	PERFORM public.powa_log(format('running %I', v_funcname));
	PERFORM public.powa_prevent_concurrent_snapshot(_srvid);

	INSERT INTO public.powa_jitprof_history (coalesce_range, srvid, userid,
			dbid, queryid, plan_node_id, node_type, role, symbol, records,
			mins_in_range, maxs_in_range)
		SELECT tstzrange(min((record).ts), max((record).ts), '[]'),
			srvid, userid, dbid, queryid, plan_node_id, node_type, role, symbol,
			array_agg(record ORDER BY (record).ts),
			ROW(min((record).ts), min((record).first_seen),
				min((record).self_samples), min((record).total_samples),
				min((record).query_samples))::public.powa_jitprof_type,
			ROW(max((record).ts), max((record).first_seen),
				max((record).self_samples), max((record).total_samples),
				max((record).query_samples))::public.powa_jitprof_type
		FROM public.powa_jitprof_history_current
		WHERE srvid = _srvid
		GROUP BY srvid, userid, dbid, queryid, plan_node_id, node_type, role, symbol;

	GET DIAGNOSTICS v_rowcount = ROW_COUNT;
	PERFORM public.powa_log(format('%I (powa_jitprof_history) - rowcount: %s',
		v_funcname, v_rowcount));

	DELETE FROM public.powa_jitprof_history_current WHERE srvid = _srvid;
END;
$PROC$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_purge(_srvid integer) RETURNS void AS $PROC$
DECLARE
	v_funcname text := 'powa_jitprof_purge(' || _srvid || ')';
	v_rowcount bigint;
	v_retention interval;
BEGIN
	PERFORM public.powa_log(format('running %I', v_funcname));
	PERFORM public.powa_prevent_concurrent_snapshot(_srvid);

	SELECT public.powa_get_server_retention(_srvid) INTO v_retention;

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

CREATE FUNCTION public.powa_jitprof_reset(_srvid integer) RETURNS void AS $PROC$
DECLARE
	v_funcname text := 'powa_jitprof_reset(' || _srvid || ')';
BEGIN
	PERFORM public.powa_log(format('running %I', v_funcname));
	DELETE FROM public.powa_jitprof_history WHERE srvid = _srvid;
	DELETE FROM public.powa_jitprof_history_current WHERE srvid = _srvid;
	DELETE FROM public.powa_jitprof_snapshots WHERE srvid = _srvid;
	DELETE FROM public.powa_jitprof_src_tmp WHERE srvid = _srvid;
END;
$PROC$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_register(_srvid integer = 0) RETURNS bool AS $_$
BEGIN
	-- only the local server's extension can be checked from here
	IF (_srvid = 0 AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_extension
								   WHERE extname = 'jitprof')) THEN
		RAISE WARNING 'extension "jitprof" is not installed in database "%"',
			current_database()
			USING HINT = 'Run CREATE EXTENSION jitprof, then call powa_jitprof_register() again.';
		RETURN false;
	END IF;

	INSERT INTO public.powa_extensions (srvid, extname)
		VALUES (_srvid, 'jitprof')
		ON CONFLICT DO NOTHING;

	IF NOT EXISTS (SELECT 1 FROM public.powa_functions
				   WHERE module = 'jitprof' AND srvid = _srvid) THEN
		PERFORM public.powa_log('registering jitprof');
		INSERT INTO public.powa_functions (srvid, extname, module, operation,
				function_name, query_source, added_manually, enabled)
		VALUES (_srvid, 'jitprof', 'jitprof', 'snapshot',   'powa_jitprof_snapshot',   'powa_jitprof_src', true, true),
			   (_srvid, 'jitprof', 'jitprof', 'aggregate',  'powa_jitprof_aggregate',  NULL,               true, true),
			   (_srvid, 'jitprof', 'jitprof', 'unregister', 'powa_jitprof_unregister', NULL,               true, true),
			   (_srvid, 'jitprof', 'jitprof', 'purge',      'powa_jitprof_purge',      NULL,               true, true),
			   (_srvid, 'jitprof', 'jitprof', 'reset',      'powa_jitprof_reset',      NULL,               true, true);
	END IF;

	RETURN true;
END;
$_$ LANGUAGE plpgsql;

CREATE FUNCTION public.powa_jitprof_unregister(_srvid integer = 0) RETURNS bool AS $_$
BEGIN
	PERFORM public.powa_log('unregistering jitprof');
	DELETE FROM public.powa_functions
	WHERE module = 'jitprof' AND srvid = _srvid;
	RETURN true;
END;
$_$ LANGUAGE plpgsql;

/*
 * Deltas between consecutive snapshots of each server, summed over the
 * roles that ran the same query: the samples each JIT function gained since
 * the previous snapshot.  Rows where nothing changed are left out.
 */
CREATE VIEW public.powa_jitprof_hotspots AS
WITH records AS (
	SELECT h.srvid, h.userid, h.dbid, h.queryid, h.plan_node_id, h.node_type,
		h.role, h.symbol, r.*
	FROM public.powa_jitprof_history h,
		LATERAL unnest(h.records) AS r
	UNION ALL
	SELECT c.srvid, c.userid, c.dbid, c.queryid, c.plan_node_id, c.node_type,
		c.role, c.symbol, (c.record).*
	FROM public.powa_jitprof_history_current c
),
marks AS (
	SELECT s.srvid, s.ts, lag(s.ts) OVER (PARTITION BY s.srvid ORDER BY s.ts) AS prev_ts
	FROM public.powa_jitprof_snapshots s
),
paired AS (
	SELECT r.*, m.prev_ts,
		lag(r.first_seen) OVER w AS p_first_seen,
		lag(r.self_samples) OVER w AS p_self,
		lag(r.total_samples) OVER w AS p_total,
		lag(r.query_samples) OVER w AS p_query
	FROM records r
	JOIN marks m ON m.srvid = r.srvid AND m.ts = r.ts
	WINDOW w AS (PARTITION BY r.srvid, r.userid, r.dbid, r.queryid,
				 r.plan_node_id, r.symbol ORDER BY r.ts)
),
deltas AS (
	SELECT p.srvid, p.ts, p.dbid, p.queryid, p.plan_node_id, p.node_type,
		p.role, p.symbol,
		-- the same entry, still growing: the difference
		(p.p_first_seen IS NOT DISTINCT FROM p.first_seen
		 AND p.self_samples >= p.p_self AND p.total_samples >= p.p_total
		 AND p.query_samples >= p.p_query) AS continues,
		p.prev_ts, p.self_samples, p.total_samples, p.query_samples,
		p.p_self, p.p_total, p.p_query
	FROM paired p
)
SELECT d.srvid, d.ts, d.dbid, d.queryid, d.plan_node_id, d.node_type, d.role,
	d.symbol,
	sum(CASE WHEN d.continues THEN d.self_samples - d.p_self ELSE d.self_samples END)::bigint AS self_samples,
	sum(CASE WHEN d.continues THEN d.total_samples - d.p_total ELSE d.total_samples END)::bigint AS total_samples,
	sum(CASE WHEN d.continues THEN d.query_samples - d.p_query ELSE d.query_samples END)::bigint AS query_samples
FROM deltas d
-- an entry seen before, or any entry once the server has a baseline
WHERE d.continues OR d.prev_ts IS NOT NULL
GROUP BY d.srvid, d.ts, d.dbid, d.queryid, d.plan_node_id, d.node_type,
	d.role, d.symbol
HAVING sum(CASE WHEN d.continues THEN d.total_samples - d.p_total ELSE d.total_samples END) > 0
	OR sum(CASE WHEN d.continues THEN d.query_samples - d.p_query ELSE d.query_samples END) > 0;

