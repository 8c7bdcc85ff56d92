-- jitprof as the JIT provider: code is linked by JITLink and reported.
CREATE EXTENSION jitprof;

-- The regression config forces JIT for every query.
SHOW jit_provider;
SHOW jitprof.linker;

CREATE TABLE status_t AS
  SELECT g AS id, g % 7 AS grp, (g * 1.5)::numeric AS val
  FROM generate_series(1, 5000) g;

SELECT grp, count(*), sum(val), avg(id) FROM status_t
  WHERE id % 3 <> 0 GROUP BY grp ORDER BY grp;

-- The linker really in use, and what was linked and freed.
SELECT value AS linker FROM jitprof_status WHERE name = 'linker';
-- The LLVM jitprof was built against, as that LLVM's llvm-config reports it
-- (the Makefile's installcheck exports JITPROF_LLVM_VERSION; unset, the
-- query fails).
\getenv llvm_version JITPROF_LLVM_VERSION
SELECT value = :'llvm_version' AS built_llvm,
       value ~ '^[0-9]+\.[0-9]+\.[0-9]+' AS well_formed
  FROM jitprof_status WHERE name = 'llvm_version';
SELECT name, value::bigint > 0 AS positive FROM jitprof_status
  WHERE name IN ('objects_linked', 'objects_freed', 'functions_linked')
  ORDER BY name;

-- Code of finished queries is freed: the only live object is this query's.
SELECT (SELECT value::bigint FROM jitprof_status WHERE name = 'objects_linked')
     - (SELECT value::bigint FROM jitprof_status WHERE name = 'objects_freed')
     <= 1 AS freed_after_query;

-- Every row of the status view has a value.
SELECT count(*) >= 10 AS rows, bool_and(value IS NOT NULL) AS all_set
  FROM jitprof_status;

-- RuntimeDyld, as the escape hatch, in a fresh backend.
\c
SET jitprof.linker = rtdyld;
SELECT sum(val) FROM status_t WHERE grp = 3;
SELECT value AS linker FROM jitprof_status WHERE name = 'linker';
SELECT value::bigint > 0 AS linked FROM jitprof_status WHERE name = 'objects_linked';
SELECT count(*) > 0 AS named FROM jitprof_functions WHERE symbol LIKE 'q%#%';

-- Changing the GUC later does not change the linker of this backend.
SET jitprof.linker = jitlink;
SELECT sum(val) FROM status_t WHERE grp = 4;
SELECT value AS linker FROM jitprof_status WHERE name = 'linker';

DROP TABLE status_t;
