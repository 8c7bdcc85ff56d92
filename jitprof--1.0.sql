/* jitprof--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION jitprof" to load this file. \quit

-- Facts about the calling backend's JIT linking, one per row.
CREATE FUNCTION jitprof_status(
    OUT name text,
    OUT value text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_status_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW jitprof_status AS
  SELECT * FROM jitprof_status();

-- The functions the calling backend linked most recently, live and freed.
CREATE FUNCTION jitprof_functions(
    OUT symbol text,
    OUT llvm_name text,
    OUT queryid bigint,
    OUT plan_node_id integer,
    OUT node_type text,
    OUT role text,
    OUT address text,
    OUT size bigint,
    OUT live boolean
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'jitprof_functions_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW jitprof_functions AS
  SELECT * FROM jitprof_functions();

GRANT SELECT ON jitprof_status TO PUBLIC;
GRANT SELECT ON jitprof_functions TO PUBLIC;
