-- Queries covering every family of expressions the JIT compiles.  Each
-- ends with an ORDER BY over a unique key, or returns one row.

-- CASE: simple, searched, nested, with NULL results
SELECT id,
       CASE i4 % 3 WHEN 0 THEN 'zero' WHEN 1 THEN 'one' WHEN -1 THEN 'minus one' ELSE 'other' END AS simple_case,
       CASE WHEN f8 IS NULL THEN 'null' WHEN f8 < 0 THEN 'neg'
            WHEN f8 < 100 THEN CASE WHEN b THEN 'small t' ELSE 'small f' END
            ELSE NULL END AS searched,
       CASE WHEN txt LIKE 'a%' THEN length(txt) END AS no_else
FROM misc
WHERE id % 37 = 1
ORDER BY id;

-- NULL logic: three-valued AND/OR/NOT, IS [NOT] DISTINCT FROM, COALESCE, NULLIF, IS TRUE
SELECT count(*) FILTER (WHERE b AND i4 > 0) AS and_t,
       count(*) FILTER (WHERE (b AND i4 > 0) IS NULL) AS and_null,
       count(*) FILTER (WHERE b OR i4 > 0) AS or_t,
       count(*) FILTER (WHERE (b OR i4 > 0) IS NULL) AS or_null,
       count(*) FILTER (WHERE NOT b) AS not_b,
       count(*) FILTER (WHERE b IS NOT TRUE) AS not_true,
       count(*) FILTER (WHERE b IS UNKNOWN) AS unknown,
       count(*) FILTER (WHERE i4 IS DISTINCT FROM i2) AS distinct_from,
       count(*) FILTER (WHERE i4 IS NOT DISTINCT FROM NULL) AS not_distinct_null,
       sum(coalesce(i4, i2, -1)) AS coalesced,
       count(NULLIF(i4 % 4, 0)) AS nullif_count,
       count(*) FILTER (WHERE (i4, i2) IS NULL) AS row_null,
       count(*) FILTER (WHERE (i4, i2) IS NOT NULL) AS row_not_null
FROM misc;

SELECT id, i4, i2, b,
       b AND i4 > 0 AS a, b OR i2 < 0 AS o, NOT b AS n,
       greatest(i4, i2, 0) AS g, least(i4, i2) AS l
FROM misc
WHERE id <= 30
ORDER BY id;

-- IN, ANY, ALL, with constants, arrays and NULLs
SELECT id, i4 % 10 IN (1, 3, 5, NULL) AS in_null,
       i2 % 7 NOT IN (0, 1) AS not_in,
       3 = ANY (arr) AS any3,
       i4 % 5 = ANY (ARRAY[1, 2, NULL]) AS any_null,
       2 < ALL (arr) AS all_gt,
       txt = ANY (ARRAY['apple1', 'Banana2', 'cherry pie13']) AS txt_any
FROM misc
WHERE id % 3 = 1 AND id < 120
ORDER BY id;

SELECT count(*) FROM misc WHERE i4 % 100 IN (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, -1, -2, -3, -5, -8, -13, -21, -34, -55, -89);

-- LIKE, ILIKE, SIMILAR TO, regular expressions
SELECT id, txt,
       txt LIKE '%a%' AS like_a, txt ILIKE 'b%' AS ilike_b,
       txt LIKE 'fig\%%' AS like_escape, txt NOT LIKE '_e%' AS not_like,
       txt SIMILAR TO '(apple|cherry)%' AS similar,
       txt ~ '^[a-z]+[0-9]{2}$' AS re, txt ~* 'ELDER' AS re_ci, txt !~ 'i' AS not_re,
       regexp_replace(txt, '[aeiou]', '*', 'g') AS replaced,
       (regexp_match(txt, '([a-z]+)([0-9]+)'))[2] AS matched_digits,
       substring(txt FROM '[0-9]+') AS substr_re
FROM misc
WHERE id % 29 = 2
ORDER BY id;

-- Casts between numeric, float, int, text, boolean, dates, and domains
SELECT id, i4::numeric / 7 AS num_div, f4::float8 AS f4_to_f8, f8::real AS f8_to_f4,
       num::int AS num_to_int, num::float8 AS num_to_f8, f8::numeric(20,6) AS f8_to_num,
       i8::text AS i8_text, ('0' || (id % 10))::int AS text_int,
       (id % 2)::boolean AS int_bool, b::text AS bool_text,
       d::timestamp AS d_ts, ts::date AS ts_d, to_char(ts, 'YYYY-MM-DD HH24:MI') AS ts_char,
       pi::int + 1 AS dom_int, st::text || '!' AS dom_text,
       i2::bigint * 100000 AS widened, num::text::numeric = num AS roundtrip
FROM misc
WHERE id % 41 = 3
ORDER BY id;

-- Integer arithmetic, with the overflow checks JIT code inlines
SELECT sum(i2 + 1), sum(i2 * 2 - 1), sum(i4 * 3), sum(i4 / 7), sum(i4 % 13),
       sum(i8 / 1000 + i4), sum(-i4), sum(abs(i4)), sum(i4 & 255), sum(i4 | 1), sum(i4 # 21),
       sum(i4 << 2), sum(i8 >> 3), bit_and(i4), bit_or(i2), sum(@ i2)
FROM misc;

SELECT 2147483647 + id FROM misc WHERE id = 1;
SELECT (32767::smallint + id::smallint) FROM misc WHERE id = 1;
SELECT 9223372036854775807 * id FROM misc WHERE id = 2;
SELECT i4 / (id - id) FROM misc WHERE id = 1;
SELECT id FROM misc WHERE id = 5 AND 1 / (id - 5) > 0;

-- Floating point arithmetic and functions
SELECT id, f8 * 1.5 AS mul, f8 / 3 AS div, f4 + f8 AS mixed, f8 ^ 2 AS pow,
       sqrt(abs(f8)) AS sqrt, ln(abs(f8) + 1) AS ln, round(f8::numeric, 3) AS rnd,
       floor(f8) AS fl, ceil(f4) AS ce, trunc(f8) AS tr, sign(f8) AS sg,
       sin(f8) AS s, atan2(f8, 2) AS at, f4 / 0.3::real AS f4div
FROM misc
WHERE id % 43 = 4
ORDER BY id;

SELECT sum(f8), avg(f8), stddev(f8), variance(f4), min(f4), max(f8), sum(f4),
       corr(f8, i4), regr_slope(f8, i2), covar_pop(f4, f8)
FROM misc;

SELECT 'Infinity'::float8 * id, 'NaN'::float8 + id, -('Infinity'::float8) < id
FROM misc WHERE id = 1;
SELECT 1e308::float8 * (10 + id) FROM misc WHERE id = 1;

-- Numeric arithmetic
SELECT sum(num), avg(num), sum(num * num), sum(num / 3), sum(round(num / 7, 2)),
       max(num % 17), min(num), sum(num) FILTER (WHERE num > 0),
       sum(trunc(num, 1)), sum(power(abs(num), 0.5)), sum(mod(num, 3)),
       stddev_samp(num), var_pop(num)
FROM misc;

SELECT id, num, num * 1.0001 AS scaled, num::numeric(8,1) AS rounded,
       numeric_inc(num) AS inc, scale(num) AS sc, abs(num) AS ab, -num AS neg
FROM misc
WHERE id % 47 = 5
ORDER BY id;

-- Dates, timestamps and intervals
SELECT id, d, d + 30 AS plus30, d - date '2000-01-01' AS days, d + iv AS d_iv,
       extract(dow FROM d) AS dow, extract(epoch FROM ts) AS epoch,
       date_trunc('month', ts) AS month, date_part('quarter', d) AS q,
       age(ts, timestamp '2000-01-01') AS age, ts + iv * 2 AS ts_iv,
       justify_hours(iv) AS jh, d BETWEEN date '2002-01-01' AND date '2010-12-31' AS between,
       make_date(2020, 1 + id % 12, 1 + id % 28) AS made,
       tstz AT TIME ZONE 'UTC' AS utc, (ts, ts + iv) OVERLAPS (timestamp '2003-01-01', interval '1 year') AS ovl
FROM misc
WHERE id % 53 = 6
ORDER BY id;

SELECT date_trunc('year', d) AS y, count(*), min(d), max(ts), sum(iv), avg(iv)
FROM misc
GROUP BY 1
ORDER BY 1 NULLS FIRST;

-- String functions
SELECT id, upper(txt) AS up, lower(txt) AS lo, initcap(txt) AS ic, length(txt) AS len,
       octet_length(txt) AS octets, substr(txt, 2, 3) AS sub, position('e' IN txt) AS pos,
       left(txt, 3) AS l3, right(txt, 2) AS r2, lpad(vc, 6, '*') AS lp, rpad(bp, 8, '-') AS rp,
       trim(both 'a' FROM txt) AS tr, replace(txt, 'e', 'E') AS rep, reverse(txt) AS rev,
       split_part(txt, ' ', 1) AS sp, concat_ws('|', txt, vc, bp) AS cw, txt || vc AS cat,
       md5(txt) AS md, translate(txt, 'aeiou', 'AEIOU') AS tl, repeat(vc, 2) AS rep2,
       starts_with(txt, 'kiwi') AS sw, strpos(txt, 'i') AS sp2, format('%s-%s', id, vc) AS fmt,
       bp = 'b1' AS bpchar_eq, char_length(bp) AS bplen, encode(bin, 'hex') AS hex
FROM misc
WHERE id % 31 = 7
ORDER BY id;

SELECT vc, count(*), string_agg(txt, ',' ORDER BY id) FILTER (WHERE id < 200) AS agg
FROM misc
WHERE vc LIKE 'v1%'
GROUP BY vc
ORDER BY vc;

-- Aggregates: FILTER, DISTINCT, ordered-set, hypothetical-set, boolean, array, json
SELECT id % 7 AS k,
       count(*), count(DISTINCT i4 % 10), sum(DISTINCT i2),
       count(*) FILTER (WHERE b), avg(f8) FILTER (WHERE f8 > 0),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY f8) AS median,
       percentile_disc(0.9) WITHIN GROUP (ORDER BY i4) AS p90,
       mode() WITHIN GROUP (ORDER BY vc) AS mode_vc,
       rank(100) WITHIN GROUP (ORDER BY i4) AS hyp_rank,
       bool_and(b), bool_or(b), every(i4 > -5000),
       array_agg(id ORDER BY id DESC) FILTER (WHERE id < 50) AS ids,
       max(txt), min(d), jsonb_agg(i2 ORDER BY id) FILTER (WHERE id < 40) AS js
FROM misc
GROUP BY id % 7
ORDER BY k;

SELECT percentile_cont(ARRAY[0.1, 0.25, 0.75]) WITHIN GROUP (ORDER BY num),
       count(DISTINCT (i4 % 10, i2 % 3)), string_agg(DISTINCT vc, ';' ORDER BY vc)
FROM misc;

-- Window functions: ranking, offsets, frames, running aggregates
SELECT id, i4,
       row_number() OVER w AS rn, rank() OVER w AS rk, dense_rank() OVER w AS drk,
       ntile(4) OVER w AS nt, lag(i4) OVER w AS lg, lead(i4, 2, -1) OVER w AS ld,
       first_value(id) OVER w AS fv, last_value(id) OVER w AS lv,
       sum(i4) OVER (PARTITION BY id % 5 ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS rsum,
       avg(f8) OVER (PARTITION BY id % 5 ORDER BY id RANGE BETWEEN 10 PRECEDING AND CURRENT ROW) AS ravg,
       count(*) OVER (PARTITION BY id % 5) AS cnt,
       percent_rank() OVER w AS pr, cume_dist() OVER w AS cd,
       nth_value(id, 3) OVER (PARTITION BY id % 5 ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS nv
FROM misc
WHERE id <= 60
WINDOW w AS (PARTITION BY id % 5 ORDER BY i4 NULLS LAST, id)
ORDER BY id;

-- run condition (PG 15) and GROUPS frames
SELECT * FROM (
    SELECT id, d, row_number() OVER (ORDER BY d NULLS LAST, id) AS rn,
           sum(id) OVER (ORDER BY id / 10 GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES) AS g
    FROM misc) s
WHERE rn <= 15
ORDER BY rn;

-- Grouping sets, rollup, cube
SELECT l_returnflag, l_linestatus, l_shipmode, count(*), sum(l_quantity),
       grouping(l_returnflag, l_linestatus, l_shipmode) AS g
FROM lineitem
GROUP BY GROUPING SETS ((l_returnflag, l_linestatus), (l_shipmode), ())
ORDER BY l_returnflag NULLS FIRST, l_linestatus NULLS FIRST, l_shipmode NULLS FIRST;

SELECT n_regionkey, c_mktsegment, count(*), avg(c_acctbal)
FROM customer JOIN nation ON c_nationkey = n_nationkey
GROUP BY ROLLUP (n_regionkey, c_mktsegment)
ORDER BY n_regionkey NULLS FIRST, c_mktsegment NULLS FIRST;

SELECT id % 2 AS a, id % 3 AS b, m, count(*), sum(i2)
FROM misc
GROUP BY CUBE (id % 2, id % 3, m)
ORDER BY a NULLS FIRST, b NULLS FIRST, m NULLS FIRST;

-- Subplans: correlated, hashed (NOT IN), initplans, EXISTS, ANY/ALL over subqueries, LATERAL
SELECT c_custkey,
       (SELECT count(*) FROM orders WHERE o_custkey = c_custkey) AS n_orders,
       (SELECT max(o_totalprice) FROM orders WHERE o_custkey = c_custkey) AS max_price,
       c_custkey IN (SELECT o_custkey FROM orders WHERE o_orderpriority = '1-URGENT') AS urgent,
       c_acctbal > ALL (SELECT s_acctbal FROM supplier WHERE s_nationkey = c_nationkey) AS richer,
       EXISTS (SELECT 1 FROM orders WHERE o_custkey = c_custkey AND o_orderstatus = 'P') AS has_p
FROM customer
WHERE c_custkey % 50 = 0
ORDER BY c_custkey;

SELECT count(*) FROM part
WHERE p_partkey NOT IN (SELECT l_partkey FROM lineitem WHERE l_quantity > 45)
  AND p_retailprice > (SELECT avg(p_retailprice) FROM part);

SELECT c.c_custkey, o.o_orderkey, o.o_totalprice
FROM customer c,
     LATERAL (SELECT * FROM orders WHERE o_custkey = c.c_custkey ORDER BY o_totalprice DESC, o_orderkey LIMIT 2) o
WHERE c.c_custkey <= 20
ORDER BY c.c_custkey, o.o_orderkey;

-- Recursive CTE and set operations
WITH RECURSIVE fib(n, a, b) AS (
    SELECT 1, 0::numeric, 1::numeric
    UNION ALL
    SELECT n + 1, b, a + b FROM fib WHERE n < 90)
SELECT n, a FROM fib WHERE n % 10 = 0 ORDER BY n;

SELECT x FROM (SELECT i4 % 20 AS x FROM misc INTERSECT SELECT i2 % 20 FROM misc) s ORDER BY x;
SELECT x FROM (SELECT id % 30 AS x FROM misc EXCEPT ALL SELECT id % 20 FROM misc WHERE id < 2900) s ORDER BY x;
SELECT DISTINCT ON (m) m, id, txt FROM misc ORDER BY m, id DESC;

-- SQL functions (inlined and not) and PL/pgSQL functions
SELECT l_orderkey, sum(disc_price(l_extendedprice, l_discount)) AS rev,
       cust_band(min(l_extendedprice)) AS band
FROM lineitem
WHERE l_orderkey <= 40
GROUP BY l_orderkey
ORDER BY l_orderkey;

SELECT o_orderkey, o_totalprice FROM orders_of(42) ORDER BY o_orderkey;

SELECT id, collatz_steps(id) AS steps, collatz_steps(i8 % 1000) AS steps_i8
FROM misc WHERE id <= 40 ORDER BY id;

SELECT o_orderkey, order_weight(o_orderkey) FROM orders WHERE o_orderkey % 500 = 0 ORDER BY o_orderkey;

-- Domains: checks at runtime, and a violating value
SELECT id, pi, (pi + 1)::posint AS bumped, st, upper(st)::short_text AS upper_st
FROM misc WHERE id % 59 = 8 ORDER BY id;
SELECT (i4 % 5)::posint FROM misc WHERE id = 5;
SELECT count(*) FROM misc WHERE pi::int > 20 AND st IS NOT NULL;

-- Arrays
SELECT id, arr, arr[1] AS first, arr[2:3] AS slice, array_length(arr, 1) AS len,
       cardinality(arr) AS card, arr || id AS appended, array_position(arr, id % 7) AS ap,
       array_remove(arr, NULL) AS no_nulls, arr @> ARRAY[id % 10] AS contains,
       arr && ARRAY[1, 2] AS overlaps, array_to_string(arr, ',', '?') AS str,
       tarr[2] AS t2, array_cat(tarr, ARRAY['z']) AS tcat, ARRAY[i2, i4] AS built
FROM misc
WHERE id % 61 = 9 OR id IN (16, 17, 32)
ORDER BY id;

SELECT u, count(*) FROM misc, unnest(arr) AS u GROUP BY u ORDER BY u NULLS FIRST;
SELECT array_agg(x ORDER BY x) FROM generate_series(1, 20) x WHERE x % 3 = 0;

-- jsonb
SELECT id, js -> 'name' AS name, js ->> 'id' AS id_text, js #> '{nested,v}' AS v,
       js #>> '{tags,0}' AS tag0, (js -> 'nested' ->> 'ok')::boolean AS ok,
       js ? 'tags' AS has_tags, js @> '{"name": "n5"}' AS contains,
       jsonb_array_length(js -> 'tags') AS ntags, js - 'nested' AS without,
       jsonb_set(js, '{name}', '"renamed"') AS renamed,
       jsonb_typeof(js -> 'nested' -> 'v') AS vtype, js @? '$.tags[*] ? (@ == 2)' AS path
FROM misc
WHERE id % 67 = 10 OR id = 17
ORDER BY id;

SELECT js ->> 'name' AS name, count(*), sum((js -> 'nested' ->> 'v')::numeric),
       jsonb_object_agg(id, js -> 'tags' -> 1 ORDER BY id) FILTER (WHERE id < 30)
FROM misc
WHERE js IS NOT NULL
GROUP BY js ->> 'name'
ORDER BY name;

SELECT k, v FROM misc, jsonb_each_text(js) AS e(k, v) WHERE id IN (3, 4) ORDER BY id, k;

-- Enums, composite types, bytea, row comparisons
SELECT id, m, m > 'sad' AS gt_sad, (pr).a AS pa, (pr).b AS pb, pr,
       (i4, i2) < (0, 0) AS row_lt, ROW(id, txt) IS NOT NULL AS row_nn,
       length(bin) AS blen, get_byte(bin, 0) AS b0
FROM misc
WHERE id % 71 = 11
ORDER BY id;

SELECT m, (pr).b, count(*) FROM misc GROUP BY m, (pr).b ORDER BY m, (pr).b;
