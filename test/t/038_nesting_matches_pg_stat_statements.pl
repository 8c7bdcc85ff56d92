# Nesting as pg_stat_statements counts it: statements inside DO, CALL,
# CREATE TABLE AS, EXPLAIN ANALYZE, functions and AFTER triggers are nested;
# EXECUTE runs its prepared statement at the top level; plain EXPLAIN runs
# nothing.  The triggers fire in the ExecutorFinish of a statement that does
# not JIT itself: an INSERT, and a SELECT whose data-modifying WITH inserts
# (a plain SELECT's ExecutorFinish, which can fire none, raises no level).  With
# pg_stat_statements.track = top, jitprof_queries.executions equals calls
# for every top-level statement that ran a JIT plan, and jitprof counts no
# execution pg_stat_statements does not list.  The functions of a CREATE
# TABLE AS's query carry the CTAS's query ID, as its rows do.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('nesting', conf => q{
shared_preload_libraries = 'jitprof, pg_stat_statements'
pg_stat_statements.track = top
jitprof.sample_rate = 1000
});
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 100000) g;
VACUUM ANALYZE t;
CREATE FUNCTION nested(i int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
  SELECT count(*) INTO r FROM t WHERE a % 17 = i;
  RETURN r;
END $$;
CREATE PROCEDURE proc() LANGUAGE plpgsql AS $$
BEGIN
  PERFORM count(*) FROM t WHERE a % 19 = 2;
END $$;
CREATE TABLE trig_t (x int);
CREATE FUNCTION after_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM count(*) FROM t WHERE a % 29 = 1;
  RETURN NULL;
END $$;
CREATE TRIGGER after_insert AFTER INSERT ON trig_t
  FOR EACH STATEMENT EXECUTE FUNCTION after_insert();
SELECT jitprof_reset(), pg_stat_statements_reset();
});

$node->safe_psql('postgres', q{
SELECT count(*) FROM t WHERE a % 3 = 1;
SELECT count(*) FROM t WHERE a % 3 = 1;
PREPARE p(int) AS SELECT count(*) FROM t WHERE a % 5 = $1;
EXECUTE p(1);
EXECUTE p(2);
EXECUTE p(3);
DEALLOCATE p;
DO $$ BEGIN FOR i IN 1 .. 3 LOOP PERFORM count(*) FROM t WHERE a % 7 = i; END LOOP; END $$;
CALL proc();
CREATE TABLE ctas AS SELECT a * 2 AS b FROM t WHERE a % 11 = 0;
EXPLAIN SELECT count(*) FROM t WHERE a % 13 = 3;
EXPLAIN ANALYZE SELECT count(*) FROM t WHERE a % 23 = 3;
SELECT nested(1) + nested(2);
SET jit_above_cost = 100;
INSERT INTO trig_t VALUES (1);
WITH ins AS (INSERT INTO trig_t VALUES (2) RETURNING x) SELECT count(*) FROM ins;
});

my $pgss_calls = sub {
	my ($like) = @_;
	return $node->safe_psql('postgres',
		"SELECT queryid || '|' || calls FROM pg_stat_statements WHERE toplevel AND query LIKE '$like'");
};
my $jitprof_exec = sub {
	my ($id) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(max(executions), 0) FROM jitprof_queries WHERE queryid = $id");
};

for my $case (
	[ 'SELECT count(*) FROM t WHERE a % $1 = $2', 'a plain statement', 2 ],
	[ 'PREPARE p%', 'EXECUTE of a prepared statement (charged to the PREPARE)', 3 ],
	[ 'DO %', 'DO, with its loop inside', 1 ],
	[ 'CALL proc()', 'CALL', 1 ],
	[ 'CREATE TABLE ctas%', 'CREATE TABLE AS', 1 ],
	[ 'EXPLAIN ANALYZE%', 'EXPLAIN ANALYZE', 1 ],
	[ 'SELECT nested($1) + nested($2)', 'a statement calling functions that run queries', 1 ],
	[ 'INSERT INTO trig_t%', 'an INSERT whose AFTER trigger runs a query', 1 ],
	[ 'WITH ins AS%', 'a SELECT whose data-modifying WITH fires that trigger', 1 ])
{
	my ($like, $what, $calls) = @$case;
	my ($id, $pgss) = split /\|/, $pgss_calls->($like);
	is($pgss, $calls, "pg_stat_statements: $what, $calls calls");
	is($jitprof_exec->($id), $pgss, "jitprof: $what, executions = calls");
}

# The query of a CREATE TABLE AS has no query ID of its own: its rows are
# charged to the CTAS, and so its functions are named with the CTAS's ID,
# the one pg_stat_statements shows for it.
my ($ctas_id) = split /\|/, $pgss_calls->('CREATE TABLE ctas%');
is($node->safe_psql('postgres', qq{
SELECT count(*) > 0 AND bool_and(substring(symbol FROM '^q(-?[0-9]+)[#_]') = '$ctas_id')
  FROM jitprof_hotspots WHERE queryid = $ctas_id AND symbol IS NOT NULL}),
	't', "CREATE TABLE AS: its functions are named with the CTAS's query ID");
is($node->safe_psql('postgres',
	"SELECT count(*) FROM jitprof_hotspots WHERE symbol ~ '^q0[#_]'"),
	'0', 'no function of any of these statements is named without a query ID');

my ($explain_id) = split /\|/, $pgss_calls->('EXPLAIN SELECT%');
ok(defined $explain_id, 'pg_stat_statements lists the plain EXPLAIN');
is($jitprof_exec->($explain_id), '0', 'plain EXPLAIN counts no execution');

# Both directions, over everything: every jitprof execution is a top-level
# pg_stat_statements call, and every statement pg_stat_statements saw
# JIT-compile has as many executions.
is($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_queries j
  LEFT JOIN pg_stat_statements s
    ON s.queryid = j.queryid AND s.userid = j.userid AND s.dbid = j.dbid AND s.toplevel
  WHERE j.executions > 0 AND s.calls IS DISTINCT FROM j.executions}),
	'0', 'every jitprof execution count equals a top-level pg_stat_statements calls');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM pg_stat_statements s
  LEFT JOIN jitprof_queries j
    ON s.queryid = j.queryid AND s.userid = j.userid AND s.dbid = j.dbid
  WHERE s.toplevel AND s.jit_functions > 0
    AND s.query NOT LIKE '%pg_stat_statements%' AND s.query NOT LIKE '%jitprof%'
    AND j.executions IS DISTINCT FROM s.calls}),
	'0', 'every statement pg_stat_statements saw JIT-compile has executions = calls');

$node->stop;
done_testing();
