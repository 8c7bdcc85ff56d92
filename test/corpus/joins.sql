-- The three join methods, each forced with enable_* settings, on inner,
-- outer, semi and anti joins.  The results of each method must equal the
-- others' and the interpreter's.

-- nested loop
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT plan_has($$SELECT count(*) FROM customer JOIN orders ON o_custkey = c_custkey$$, 'Nested Loop') AS uses_nestloop;
SELECT c_mktsegment, n_name, count(*), sum(o_totalprice)
FROM customer JOIN nation ON c_nationkey = n_nationkey
     JOIN orders ON o_custkey = c_custkey AND o_totalprice > c_acctbal * 10
GROUP BY c_mktsegment, n_name
ORDER BY c_mktsegment, n_name;
SELECT s_suppkey, count(l_orderkey)
FROM supplier LEFT JOIN lineitem ON l_suppkey = s_suppkey AND l_quantity > 49
GROUP BY s_suppkey ORDER BY s_suppkey LIMIT 30;
SELECT count(*) FROM part WHERE NOT EXISTS (SELECT 1 FROM lineitem WHERE l_partkey = p_partkey AND l_discount = 0.10);

-- hash join
SET enable_nestloop = off;
SET enable_hashjoin = on;
SELECT plan_has($$SELECT count(*) FROM customer JOIN orders ON o_custkey = c_custkey$$, 'Hash Join') AS uses_hashjoin;
SELECT c_mktsegment, n_name, count(*), sum(o_totalprice)
FROM customer JOIN nation ON c_nationkey = n_nationkey
     JOIN orders ON o_custkey = c_custkey AND o_totalprice > c_acctbal * 10
GROUP BY c_mktsegment, n_name
ORDER BY c_mktsegment, n_name;
SELECT s_suppkey, count(l_orderkey)
FROM supplier LEFT JOIN lineitem ON l_suppkey = s_suppkey AND l_quantity > 49
GROUP BY s_suppkey ORDER BY s_suppkey LIMIT 30;
SELECT count(*) FROM part WHERE NOT EXISTS (SELECT 1 FROM lineitem WHERE l_partkey = p_partkey AND l_discount = 0.10);
SELECT p_type, count(*) FROM part FULL JOIN partsupp ON p_partkey = ps_partkey AND ps_availqty > 5000
GROUP BY p_type ORDER BY p_type LIMIT 20;

-- merge join
SET enable_hashjoin = off;
SET enable_mergejoin = on;
SELECT plan_has($$SELECT count(*) FROM customer JOIN orders ON o_custkey = c_custkey$$, 'Merge Join') AS uses_mergejoin;
SELECT c_mktsegment, n_name, count(*), sum(o_totalprice)
FROM customer JOIN nation ON c_nationkey = n_nationkey
     JOIN orders ON o_custkey = c_custkey AND o_totalprice > c_acctbal * 10
GROUP BY c_mktsegment, n_name
ORDER BY c_mktsegment, n_name;
SELECT s_suppkey, count(l_orderkey)
FROM supplier LEFT JOIN lineitem ON l_suppkey = s_suppkey AND l_quantity > 49
GROUP BY s_suppkey ORDER BY s_suppkey LIMIT 30;
SELECT count(*) FROM part WHERE NOT EXISTS (SELECT 1 FROM lineitem WHERE l_partkey = p_partkey AND l_discount = 0.10);
SELECT p_type, count(*) FROM part FULL JOIN partsupp ON p_partkey = ps_partkey AND ps_availqty > 5000
GROUP BY p_type ORDER BY p_type LIMIT 20;

RESET enable_nestloop;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- hash aggregation versus sort-based grouping
SET enable_hashagg = off;
SELECT l_suppkey % 10 AS k, count(*), sum(l_tax) FROM lineitem GROUP BY 1 ORDER BY 1;
SET enable_hashagg = on;
SET enable_sort = off;
SELECT l_suppkey % 10 AS k, count(*), sum(l_tax) FROM lineitem GROUP BY 1 ORDER BY 1;
RESET enable_sort;
RESET enable_hashagg;
