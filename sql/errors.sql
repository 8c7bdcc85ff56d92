-- Bad settings, and failures while linking.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jitprof;
RESET client_min_messages;

-- Bad values are rejected with a message that says what is allowed.
SET jitprof.linker = 'gold';
SET jitprof.linker = '';
SET jitprof.no_such_setting = 1;
SET jitprof.linker = rtdyld;
SHOW jitprof.linker;
RESET jitprof.linker;

-- A jitprof.jitdump_dir too long for the files jitprof creates under it is
-- refused at SET: at most 961 bytes (MAXPGPATH, 1024, less the step file's
-- path under it with a 10-digit PID and the terminating zero byte).
SELECT length(set_config('jitprof.jitdump_dir', '/' || repeat('d', 960), false));
SELECT length(set_config('jitprof.jitdump_dir', '/' || repeat('d', 961), false));
SET jitprof.jitdump_dir = '';
RESET jitprof.jitdump_dir;

-- Only superusers may change what jitprof does.
CREATE ROLE jitprof_plain;
SET ROLE jitprof_plain;
SET jitprof.linker = rtdyld;
SET jitprof.llvmjit_library = '/tmp/evil';
SET jitprof.debug_fail_link = on;
RESET ROLE;
DROP ROLE jitprof_plain;

-- An injected link failure makes RuntimeDyld link the object instead: the
-- query succeeds, with one WARNING for the backend ...
SET jitprof.debug_fail_link = on;
DO $$
DECLARE
  context text;
BEGIN
  PERFORM sum(g) FROM generate_series(1, 100) g WHERE g % 2 = 0;
  RAISE NOTICE 'the query did not fail';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS context = PG_EXCEPTION_CONTEXT;
  RAISE NOTICE 'query failed: %',
    regexp_replace(regexp_replace(SQLERRM, '\{.*\}', '{...}'),
                   'evalexpr_[0-9_]+', 'evalexpr_N', 'g');
  RAISE NOTICE 'context: %', split_part(context, E'\n', 1);
END $$;
-- ... and the backend keeps working.
SET jitprof.debug_fail_link = off;
SELECT sum(g) FROM generate_series(1, 100) g WHERE g % 2 = 0;
SELECT name, value::bigint > 0 AS counted FROM jitprof_status
  WHERE name IN ('link_failures', 'rtdyld_fallbacks') ORDER BY name;
