-- jitprof correctness corpus: schema and deterministic data.
--
-- TPC-H-like tables filled from generate_series with arithmetic (no
-- random()), so that every run of the corpus sees the same rows, plus a
-- table of assorted types (NULLs, floats, text, arrays, jsonb, domains)
-- and SQL and PL/pgSQL functions for the expression queries.

SET client_min_messages = warning;

CREATE TABLE region (
    r_regionkey int PRIMARY KEY,
    r_name      text NOT NULL,
    r_comment   text
);
INSERT INTO region
SELECT g, (ARRAY['AFRICA','AMERICA','ASIA','EUROPE','MIDDLE EAST'])[g + 1],
       'region comment ' || g
FROM generate_series(0, 4) g;

CREATE TABLE nation (
    n_nationkey int PRIMARY KEY,
    n_name      text NOT NULL,
    n_regionkey int NOT NULL,
    n_comment   text
);
INSERT INTO nation
SELECT g,
       (ARRAY['ALGERIA','ARGENTINA','BRAZIL','CANADA','EGYPT','ETHIOPIA',
              'FRANCE','GERMANY','INDIA','INDONESIA','IRAN','IRAQ','JAPAN',
              'JORDAN','KENYA','MOROCCO','MOZAMBIQUE','PERU','CHINA',
              'ROMANIA','SAUDI ARABIA','VIETNAM','RUSSIA','UNITED KINGDOM',
              'UNITED STATES'])[g + 1],
       (ARRAY[0,1,1,1,4,0,3,3,2,2,4,4,2,4,0,0,0,1,2,3,4,2,3,3,1])[g + 1],
       'nation ' || g
FROM generate_series(0, 24) g;

CREATE TABLE supplier (
    s_suppkey   int PRIMARY KEY,
    s_name      char(25) NOT NULL,
    s_address   varchar(40) NOT NULL,
    s_nationkey int NOT NULL,
    s_phone     char(15) NOT NULL,
    s_acctbal   numeric(15,2) NOT NULL,
    s_comment   varchar(101) NOT NULL
);
INSERT INTO supplier
SELECT g,
       'Supplier#' || lpad(g::text, 9, '0'),
       'addr ' || (g * 37 % 1000),
       g % 25,
       (10 + g % 25) || '-' || lpad((g * 97 % 1000)::text, 3, '0') || '-555-0100',
       ((g * 7919) % 1100000) / 100.0 - 999.99,
       CASE WHEN g % 17 = 0 THEN 'Customer Complaints about delays'
            WHEN g % 13 = 0 THEN 'careful requests sleep quickly'
            ELSE 'regular deposits ' || g END
FROM generate_series(1, 200) g;

CREATE TABLE customer (
    c_custkey    int PRIMARY KEY,
    c_name       varchar(25) NOT NULL,
    c_address    varchar(40) NOT NULL,
    c_nationkey  int NOT NULL,
    c_phone      char(15) NOT NULL,
    c_acctbal    numeric(15,2) NOT NULL,
    c_mktsegment char(10) NOT NULL,
    c_comment    varchar(117) NOT NULL
);
INSERT INTO customer
SELECT g,
       'Customer#' || lpad(g::text, 9, '0'),
       'street ' || (g * 53 % 997),
       (g * 7) % 25,
       (10 + (g * 7) % 25) || '-' || lpad((g * 31 % 1000)::text, 3, '0') || '-555-' || lpad((g % 10000)::text, 4, '0'),
       ((g * 104729) % 1100000) / 100.0 - 999.99,
       (ARRAY['AUTOMOBILE','BUILDING','FURNITURE','HOUSEHOLD','MACHINERY'])[1 + (g * 3) % 5],
       'customer comment ' || (g % 97)
FROM generate_series(1, 1500) g;

CREATE TABLE part (
    p_partkey     int PRIMARY KEY,
    p_name        varchar(55) NOT NULL,
    p_mfgr        char(25) NOT NULL,
    p_brand       char(10) NOT NULL,
    p_type        varchar(25) NOT NULL,
    p_size        int NOT NULL,
    p_container   char(10) NOT NULL,
    p_retailprice numeric(15,2) NOT NULL,
    p_comment     varchar(23) NOT NULL
);
INSERT INTO part
SELECT g,
       (ARRAY['almond','antique','aquamarine','azure','beige','bisque','black','blanched','blue','blush','brown','burlywood','forest','green'])[1 + g % 14]
         || ' ' ||
       (ARRAY['chiffon','chocolate','coral','cornflower','cream','cyan','dark','deep','dim','dodger','drab','firebrick','floral','frosted'])[1 + (g * 5) % 14],
       'Manufacturer#' || (1 + g % 5),
       'Brand#' || (1 + g % 5) || (1 + (g / 5) % 5),
       (ARRAY['STANDARD','SMALL','MEDIUM','LARGE','ECONOMY','PROMO'])[1 + g % 6] || ' ' ||
       (ARRAY['ANODIZED','BURNISHED','PLATED','POLISHED','BRUSHED'])[1 + (g / 6) % 5] || ' ' ||
       (ARRAY['TIN','NICKEL','BRASS','STEEL','COPPER'])[1 + (g / 30) % 5],
       1 + (g * 11) % 50,
       (ARRAY['SM','LG','MED','JUMBO','WRAP'])[1 + g % 5] || ' ' ||
       (ARRAY['CASE','BOX','BAG','JAR','PKG','PACK','CAN','DRUM'])[1 + (g / 5) % 8],
       (90000 + ((g / 10) % 20001) + 100 * (g % 1000)) / 100.0,
       'part ' || (g % 331)
FROM generate_series(1, 2000) g;

CREATE TABLE partsupp (
    ps_partkey    int NOT NULL,
    ps_suppkey    int NOT NULL,
    ps_availqty   int NOT NULL,
    ps_supplycost numeric(15,2) NOT NULL,
    PRIMARY KEY (ps_partkey, ps_suppkey)
);
INSERT INTO partsupp
SELECT p, 1 + (p + s * 50) % 200, 1 + (p * 13 + s * 7) % 9999,
       (100 + (p * 17 + s * 29) % 99900) / 100.0
FROM generate_series(1, 2000) p, generate_series(0, 1) s;

CREATE TABLE orders (
    o_orderkey      int PRIMARY KEY,
    o_custkey       int NOT NULL,
    o_orderstatus   char(1) NOT NULL,
    o_totalprice    numeric(15,2) NOT NULL,
    o_orderdate     date NOT NULL,
    o_orderpriority char(15) NOT NULL,
    o_clerk         char(15) NOT NULL,
    o_shippriority  int NOT NULL,
    o_comment       varchar(79) NOT NULL
);
INSERT INTO orders
SELECT g,
       1 + (g * 13) % 1500,
       (ARRAY['F','O','P'])[1 + g % 3],
       (g * 2654435761 % 50000000) / 100.0,
       date '1992-01-01' + (g * 7 % 2400),
       (ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[1 + g % 5],
       'Clerk#' || lpad((1 + g % 1000)::text, 9, '0'),
       0,
       CASE WHEN g % 23 = 0 THEN 'special packages requests' ELSE 'order ' || g END
FROM generate_series(1, 6000) g;

CREATE TABLE lineitem (
    l_orderkey      int NOT NULL,
    l_partkey       int NOT NULL,
    l_suppkey       int NOT NULL,
    l_linenumber    int NOT NULL,
    l_quantity      numeric(15,2) NOT NULL,
    l_extendedprice numeric(15,2) NOT NULL,
    l_discount      numeric(15,2) NOT NULL,
    l_tax           numeric(15,2) NOT NULL,
    l_returnflag    char(1) NOT NULL,
    l_linestatus    char(1) NOT NULL,
    l_shipdate      date NOT NULL,
    l_commitdate    date NOT NULL,
    l_receiptdate   date NOT NULL,
    l_shipinstruct  char(25) NOT NULL,
    l_shipmode      char(10) NOT NULL,
    l_comment       varchar(44) NOT NULL,
    PRIMARY KEY (l_orderkey, l_linenumber)
);
INSERT INTO lineitem
SELECT o.o_orderkey,
       1 + (o.o_orderkey * 31 + n * 7) % 2000,
       1 + ((1 + (o.o_orderkey * 31 + n * 7) % 2000) + (n % 2) * 50) % 200,
       n,
       1 + (o.o_orderkey + n * 11) % 50,
       ((1 + (o.o_orderkey + n * 11) % 50) * (900 + (o.o_orderkey * n) % 1100)) / 10.0,
       ((o.o_orderkey + n) % 11) / 100.0,
       ((o.o_orderkey * 3 + n) % 9) / 100.0,
       CASE WHEN o.o_orderdate + 1 + n * 5 > date '1995-06-17'
            THEN 'N'
            ELSE (ARRAY['R','A'])[1 + (o.o_orderkey + n) % 2] END,
       CASE WHEN o.o_orderdate + 1 + n * 5 > date '1995-06-17' THEN 'O' ELSE 'F' END,
       o.o_orderdate + 1 + n * 5 + o.o_orderkey % 7,
       o.o_orderdate + 30 + n * 3,
       o.o_orderdate + 2 + n * 5 + o.o_orderkey % 7 + (o.o_orderkey * n) % 30,
       (ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[1 + (o.o_orderkey + n) % 4],
       (ARRAY['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'])[1 + (o.o_orderkey * 3 + n) % 7],
       'line ' || o.o_orderkey || '/' || n
FROM orders o, generate_series(1, 7) n
WHERE n <= 1 + o.o_orderkey % 7;

CREATE INDEX lineitem_part ON lineitem (l_partkey);
CREATE INDEX orders_cust ON orders (o_custkey);

-- Assorted types, with NULLs every few rows.
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE DOMAIN short_text AS varchar(12) CHECK (VALUE <> '');
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE pair AS (a int, b text);

CREATE TABLE misc (
    id     int PRIMARY KEY,
    i2     smallint,
    i4     int,
    i8     bigint,
    f4     real,
    f8     double precision,
    num    numeric(12,4),
    txt    text,
    vc     varchar(20),
    bp     char(6),
    b      boolean,
    d      date,
    ts     timestamp,
    tstz   timestamptz,
    iv     interval,
    arr    int[],
    tarr   text[],
    js     jsonb,
    pi     posint,
    st     short_text,
    m      mood,
    pr     pair,
    bin    bytea
);
INSERT INTO misc
SELECT g,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 37 % 600 - 300)::smallint END,
       CASE WHEN g % 7 = 0 THEN NULL ELSE g * 1009 % 20000 - 10000 END,
       CASE WHEN g % 13 = 0 THEN NULL ELSE g::bigint * 2147483 % 99999999967 END,
       CASE WHEN g % 9 = 0 THEN NULL ELSE (g * 3.25 - 100)::real END,
       CASE WHEN g % 5 = 0 THEN NULL ELSE g / 7.0::float8 - 12.5 END,
       CASE WHEN g % 6 = 0 THEN NULL ELSE (g * 12.3457 % 1000 - 500)::numeric(12,4) END,
       CASE WHEN g % 8 = 0 THEN NULL
            ELSE (ARRAY['apple','Banana','cherry pie','date_fruit','Elderberry',
                        'fig%','grape\tjuice','hönig','kiwi-kiwi','lemon.'])[1 + g % 10] || g END,
       CASE WHEN g % 10 = 0 THEN NULL ELSE 'v' || (g * 7 % 100) END,
       CASE WHEN g % 12 = 0 THEN NULL ELSE 'b' || (g % 50) END,
       CASE WHEN g % 4 = 0 THEN NULL ELSE g % 3 = 1 END,
       CASE WHEN g % 15 = 0 THEN NULL ELSE date '2000-02-28' + g * 3 END,
       timestamp '2001-03-04 05:06:07' + g * interval '7 hours 13 minutes',
       timestamptz '2010-06-30 23:00:00+00' + g * interval '1 day 1 second',
       CASE WHEN g % 14 = 0 THEN NULL ELSE g * interval '37 minutes' END,
       CASE WHEN g % 16 = 0 THEN NULL WHEN g % 16 = 1 THEN '{}'::int[]
            ELSE ARRAY[g % 10, g % 7, NULLIF(g % 5, 0), g] END,
       ARRAY['t' || g % 3, 'x' || g % 4],
       CASE WHEN g % 17 = 0 THEN NULL
            ELSE jsonb_build_object('id', g, 'name', 'n' || g % 20,
                                    'tags', jsonb_build_array('a' || g % 3, g % 5),
                                    'nested', jsonb_build_object('v', g * 1.5, 'ok', g % 2 = 0)) END,
       CASE WHEN g % 18 = 0 THEN NULL ELSE (1 + g % 40)::posint END,
       CASE WHEN g % 19 = 0 THEN NULL ELSE ('s' || g % 33)::short_text END,
       (ARRAY['sad','ok','happy']::mood[])[1 + g % 3],
       ROW(g % 9, 'p' || g % 4)::pair,
       CASE WHEN g % 21 = 0 THEN NULL ELSE decode(lpad(to_hex(g * 2654435::bigint), 8, '0'), 'hex') END
FROM generate_series(1, 3000) g;

-- Functions the planner inlines (SQL) and ones it cannot (PL/pgSQL).
CREATE FUNCTION disc_price(p numeric, d numeric) RETURNS numeric
    LANGUAGE sql IMMUTABLE AS 'SELECT p * (1 - d)';
CREATE FUNCTION cust_band(bal numeric) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN bal < 0 THEN 'neg' WHEN bal < 5000 THEN 'low' ELSE 'high' END $$;
CREATE FUNCTION orders_of(c int) RETURNS SETOF orders
    LANGUAGE sql STABLE AS 'SELECT * FROM orders WHERE o_custkey = c';
CREATE FUNCTION collatz_steps(n bigint) RETURNS int
    LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    steps int := 0;
BEGIN
    IF n IS NULL OR n <= 0 THEN
        RETURN NULL;
    END IF;
    WHILE n <> 1 LOOP
        IF n % 2 = 0 THEN n := n / 2; ELSE n := 3 * n + 1; END IF;
        steps := steps + 1;
    END LOOP;
    RETURN steps;
END $$;
CREATE FUNCTION order_weight(ok int) RETURNS numeric
    LANGUAGE plpgsql STABLE AS $$
DECLARE
    w numeric;
BEGIN
    SELECT sum(l_quantity * (1 + l_tax)) INTO w FROM lineitem WHERE l_orderkey = ok;
    RETURN coalesce(w, 0);
END $$;

ANALYZE;

-- Does the plan of a query contain a node (to check that enable_* settings
-- forced the join method a query is meant to exercise)?
CREATE FUNCTION plan_has(query text, node text) RETURNS boolean
    LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF line LIKE '%' || node || '%' THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END $$;
