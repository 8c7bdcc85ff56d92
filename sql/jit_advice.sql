-- The JIT advisor's threshold optimiser on hand-made workloads
-- (doc/jit_advisor.md): the known answer, the workload's CPU time under the
-- current and the advised settings, and the queries no thresholds serve.
SET jit = on;
SET jit_above_cost = 100000;
SET jit_optimize_above_cost = 500000;
SET jit_inline_above_cost = 500000;

-- Two cheap queries that lose with JIT, two expensive ones that gain most
-- at "all": JIT, optimise and inline from above the cost 5000.  Under the
-- current settings the 200000 query runs at "jit" (700 ms), so the advice
-- saves 10 x (700 - 550) = 1500 ms.
CREATE TEMP TABLE workload (pos int, cost float8, calls float8, cpu float8[]);
INSERT INTO workload VALUES
  (1, 50, 1000, '{1, 20, 40, 50, 60}'),
  (2, 5000, 100, '{10, 15, 30, 35, 40}'),
  (3, 200000, 10, '{1000, 700, 600, 650, 550}'),
  (4, 1000000, 5, '{5000, 3000, 2500, 2600, 2000}');
CREATE TEMP VIEW advice AS
  SELECT a.* FROM (SELECT array_agg(cost ORDER BY pos) AS cost,
                          array_agg(calls ORDER BY pos) AS calls,
                          array_agg(cpu ORDER BY pos) AS cpu FROM workload) w,
       jitprof_jit_advice(w.cost, w.calls, w.cpu) a;
SELECT * FROM advice;

-- A fifth query of the same cost as the third, where JIT loses: no
-- thresholds separate them.  For the two together JIT with optimisation
-- (9500 ms) beats off (11000 ms) and ties with inlining too (a tie goes to
-- the settings that JIT less), and it is neither query's best level: both
-- are listed as not served.
INSERT INTO workload VALUES (5, 200000, 10, '{100, 300, 350, 380, 400}');
SELECT * FROM advice;

-- Where JIT loses everywhere, the advice is jit = off.
UPDATE workload SET cpu = ARRAY[cpu[1], cpu[1] * 2, cpu[1] * 3, cpu[1] * 3, cpu[1] * 4];
SELECT jit, jit_above_cost, saving_ms > 0 AS saves, unserved FROM advice;

-- Against an exhaustive search: every combination of thresholds (-1, 0 and
-- each plan cost) on a workload of 12 queries with assorted costs and CPU
-- times; the optimiser's workload CPU time is the least of them.
CREATE TEMP TABLE mixed AS
  SELECT g AS pos, ((g * g * 37) % 1000) * 100.0 + g AS cost, (1 + g % 4)::float8 AS calls,
         ARRAY(SELECT (((g * 7 + l * 13 + g * l) % 17) + 1)::float8
               FROM generate_series(1, 5) l ORDER BY l) AS cpu
  FROM generate_series(1, 12) g;
WITH t AS (SELECT -1::float8 AS v UNION SELECT 0 UNION SELECT cost FROM mixed),
     totals AS (
       SELECT a.v AS a, o.v AS o, i.v AS i,
              sum(m.calls * m.cpu[CASE WHEN a.v >= 0 AND m.cost > a.v THEN
                    CASE WHEN o.v >= 0 AND m.cost > o.v AND i.v >= 0 AND m.cost > i.v THEN 5
                         WHEN o.v >= 0 AND m.cost > o.v THEN 3
                         WHEN i.v >= 0 AND m.cost > i.v THEN 4
                         ELSE 2 END
                  ELSE 1 END]) AS total
       FROM t a, t o, t i, mixed m GROUP BY 1, 2, 3)
SELECT (SELECT min(total) FROM totals) AS exhaustive, a.advised_cpu_ms AS optimiser,
       (SELECT count(*) FROM totals) AS combinations,
       (SELECT total FROM totals WHERE a = -1 AND o = -1 AND i = -1) AS jit_off,
       (SELECT total FROM totals WHERE a = 0 AND o = 0 AND i = 0) AS all_forced
  FROM (SELECT array_agg(cost ORDER BY pos) AS cost, array_agg(calls ORDER BY pos) AS calls,
               array_agg(cpu ORDER BY pos) AS cpu FROM mixed) w,
       jitprof_jit_advice(w.cost, w.calls, w.cpu) a;

-- A level not measured is assumed to cost what the mean of the measured
-- ones does, and counted.
SELECT jit, jit_above_cost, jit_optimize_above_cost, jit_inline_above_cost, assumed
  FROM jitprof_jit_advice('{100, 900000}', '{10, 10}',
                          '{{1, NULL, 5, NULL, NULL}, {900, NULL, 300, NULL, NULL}}');

-- Arrays that do not match are refused.
SELECT * FROM jitprof_jit_advice('{1, 2}', '{1}', '{{1, 2, 3, 4, 5}}');
SELECT * FROM jitprof_jit_advice('{1}', '{1}', '{1, 2, 3, 4, 5}');

-- From 1.4 a sixth CPU time per query may follow, tiered's.  Thresholds
-- cannot give tiered, so the advice is as without it, and a query whose
-- best time is tiered's is not served (enforce mode serves it).
SELECT jit, jit_above_cost, jit_optimize_above_cost, jit_inline_above_cost,
       saving_ms, assumed, unserved
  FROM jitprof_jit_advice('{50, 200000}', '{1000, 10}',
                          '{{1, 20, 40, 50, 60, 30}, {1000, 700, 600, 650, 550, 400}}');
SELECT * FROM jitprof_jit_advice('{1}', '{1}', '{{1, 2, 3, 4, 5, 6, 7}}');

-- The advisor's own table (empty here: the advisor is off).
SELECT jit, queries, unserved FROM jitprof_jit_advice();
