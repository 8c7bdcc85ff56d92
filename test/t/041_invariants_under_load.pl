# The profile never lies, under load: six clients mix successful, failing,
# cancelled and timed-out JIT queries, cursors fetched across other
# statements (some in transactions that fail), nested statements (DO, CALL,
# functions, EXPLAIN ANALYZE) and parallel queries, while another client
# cancels running queries at random and the sampler flushes mid-query.
# Afterwards:
#  - every row: self <= total <= query samples, percentages within 0..100;
#  - every query: the sum of its functions' self samples <= its query
#    samples, jit_pct <= 100;
#  - executions = pg_stat_statements.calls (track = top) for every
#    top-level statement that ran a JIT plan, both ways;
#  - the plan-node profile (jitprof.plan_nodes on): every node row has
#    jit_compile, jit_self <= self <= total <= query samples and shares in
#    0..100, and per query the nodes' self samples plus the outside row add
#    up to query_samples exactly (the outside row is never negative);
#  - the step profile (jitprof.steps on): every step row has self <= total
#    <= its function's total <= query samples and shares in 0..100, and a
#    function's steps never add up to more than its samples.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $clients = 6;
# Eight rounds per client: about 90 failed, 45 timed-out and 75 cancelled
# queries per run, each case many times over; six clients keep both
# cores busy, so every round costs the whole suite.
my $rounds = $ENV{JITPROF_LOAD_ROUNDS} // 8;

my $node = jitprof_node('invariants', conf => q{
shared_preload_libraries = 'jitprof, pg_stat_statements'
pg_stat_statements.track = top
jitprof.sample_rate = 1000
jitprof.flush_interval = 1
jitprof.plan_nodes = on
jitprof.steps = on
jit_optimize_above_cost = -1
jit_inline_above_cost = -1
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
max_connections = 40
});
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, 200000) g;
VACUUM ANALYZE t;
CREATE FUNCTION nested(i int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
  SELECT count(*) INTO r FROM t WHERE a % 17 = i AND sqrt(a::float8) > 2;
  RETURN r;
END $$;
CREATE PROCEDURE proc(i int) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM count(*) FROM t WHERE a % 19 = i;
END $$;
SELECT jitprof_reset(), pg_stat_statements_reset();
});

# One round of a client's work; errors do not stop psql (no ON_ERROR_STOP).
sub round
{
	my ($c, $r) = @_;
	my $k = 1 + ($c * 7 + $r) % 11;
	return <<"SQL";
SELECT count(*) FROM t WHERE a % 7 = $k AND sqrt(a::float8) * 2 > 5;
SELECT count(*) FROM t WHERE sqrt(a::float8) > 3 AND (CASE WHEN a = 150000 + $k THEN a / (a - a) ELSE 1 END) = 1;
SET statement_timeout = '150ms';
SELECT count(*) FROM t t1, generate_series(1, 300) s WHERE (t1.a * s) % 13 = $k;
RESET statement_timeout;
BEGIN;
DECLARE c CURSOR FOR SELECT a * 3 + b FROM t WHERE a % 3 <> $k % 3 AND sqrt(a::float8) > 1;
FETCH 500 FROM c;
SELECT sum(b) FROM t WHERE a % 5 = $k % 5;
FETCH 500 FROM c;
SELECT nested($k);
MOVE ALL IN c;
CLOSE c;
COMMIT;
BEGIN;
DECLARE d CURSOR FOR SELECT a FROM t WHERE a % 11 = $k;
FETCH 50 FROM d;
SELECT 1 / ($k - $k);
ROLLBACK;
DO \$\$ BEGIN FOR i IN 1 .. 2 LOOP PERFORM count(*) FROM t WHERE a % 23 = i; END LOOP; END \$\$;
CALL proc($k);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT count(*) FROM t WHERE a % 29 = $k;
SELECT count(*), sum(a * b) FROM t t1, generate_series(1, 40) s WHERE (t1.a + s) % 31 = $k;
SELECT count(*) FROM t WHERE b * $k % 37 = 1;
SELECT count(*) FROM t t1 JOIN t t2 ON t2.a = t1.b + $k WHERE t1.a % 5 = 0;
SELECT count(*) FROM t WHERE b = (SELECT max(b) FROM t WHERE a % 41 = $k) OR a IN (SELECT a + 1 FROM t WHERE a % 43 = $k);
SQL
}

my @runs;
for my $c (1 .. $clients)
{
	my $file = $node->basedir . "/client$c.sql";
	open my $fh, '>', $file or die;
	print $fh round($c, $_) for 1 .. $rounds;
	close $fh;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-X', '-q', '-o', '/dev/null', '-h', $node->host, '-p', $node->port,
		  '-d', 'postgres', '-f', $file ],
		'>', \$out, '2>', \$err);
	push @runs, [ $h, \$err ];
}

# Meanwhile, cancel a running client query now and then.
my $cancels = 0;
while (grep { $_->[0]->pumpable } @runs)
{
	$cancels += $node->safe_psql('postgres', q{
SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
  WHERE backend_type = 'client backend' AND state = 'active'
    AND pid <> pg_backend_pid() AND random() < 0.3});
	select(undef, undef, undef, 0.4);
	$_->[0]->pump_nb for grep { $_->[0]->pumpable } @runs;
}
$_->[0]->finish for @runs;
my $errors = join('', map { ${ $_->[1] } } @runs);
my $failures = () = $errors =~ /division by zero/g;
my $timeouts = () = $errors =~ /statement timeout/g;
my $cancelled = () = $errors =~ /due to user request/g;
diag("$failures failed, $timeouts timed out, $cancelled cancelled queries; $cancels cancel requests");
cmp_ok($failures, '>', 0, 'some queries failed');
cmp_ok($timeouts + $cancelled, '>', 0, 'some queries were cancelled or timed out');
unlike($errors, qr/server closed|terminated|PANIC|not watched/, 'no backend crashed');

is($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_hotspots
  WHERE NOT (self_samples <= total_samples AND total_samples <= query_samples
             AND self_samples >= 0
             AND self_pct BETWEEN 0 AND 100 AND total_pct BETWEEN 0 AND 100)}),
	'0', 'every row: self <= total <= query samples, percentages within 0..100');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_queries
  WHERE NOT (jit_self_samples <= query_samples AND jit_pct BETWEEN 0 AND 100)}),
	'0', 'every query: sum of self samples <= query samples, jit_pct within 0..100');
cmp_ok($node->safe_psql('postgres', 'SELECT sum(query_samples) FROM jitprof_queries'),
	'>', 1000, 'the load was sampled');

is($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_plan_nodes
  WHERE NOT (jit_self_samples <= self_samples AND jit_compile_samples <= self_samples
             AND self_samples >= 0 AND self_samples <= total_samples
             AND total_samples <= query_samples
             AND self_pct BETWEEN 0 AND 100 AND total_pct BETWEEN 0 AND 100)}),
	'0', 'every plan node: jit_self, jit_compile <= self <= total <= query samples, shares within 0..100');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM (
  SELECT queryid, userid, dbid, sum(self_samples) FILTER (WHERE plan_node_id >= 0) AS nodes,
         sum(self_samples) AS all_rows, max(query_samples) AS q,
         min(query_samples) AS q_min
    FROM jitprof_plan_nodes GROUP BY queryid, userid, dbid) s
  WHERE NOT (nodes <= q AND all_rows = q AND q = q_min)}),
	'0', 'every query: node self samples + the outside row = query_samples');
cmp_ok($node->safe_psql('postgres',
	q{SELECT count(DISTINCT queryid) FROM jitprof_plan_nodes WHERE plan_node_id >= 0 AND self_samples > 0}),
	'>=', 5, 'the plan-node profile covers the load');
cmp_ok($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_plan_nodes n
  WHERE node_type = 'SeqScan' AND self_samples > 0
    AND EXISTS (SELECT 1 FROM jitprof_plan_nodes g
                WHERE g.queryid = n.queryid AND g.node_type = 'Gather')}),
	'>', 0, 'parallel queries: the scans below Gather have samples');

is($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_steps
  WHERE NOT (self_samples >= 0 AND self_samples <= total_samples
             AND total_samples <= function_total_samples
             AND function_total_samples <= query_samples
             AND pct_of_function BETWEEN 0 AND 100
             AND pct_of_query BETWEEN 0 AND 100)}),
	'0', 'every step: self <= total <= function total <= query samples, shares within 0..100');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM (
  SELECT userid, dbid, queryid, plan_node_id, symbol,
         sum(self_samples) AS self, sum(total_samples) AS total
    FROM jitprof_steps GROUP BY 1, 2, 3, 4, 5) s
  JOIN jitprof_hotspots h USING (userid, dbid, queryid, plan_node_id, symbol)
  WHERE s.self > h.self_samples OR s.total > h.total_samples}),
	'0', "every function: its steps add up to at most its self and total samples");
cmp_ok($node->safe_psql('postgres', 'SELECT count(DISTINCT queryid) FROM jitprof_steps'),
	'>=', 3, 'the step profile covers the load');

my $mismatch_j = q{
FROM jitprof_queries j
  LEFT JOIN pg_stat_statements s
    ON s.queryid = j.queryid AND s.userid = j.userid AND s.dbid = j.dbid AND s.toplevel
  WHERE j.executions > 0 AND s.calls IS DISTINCT FROM j.executions};
is($node->safe_psql('postgres', "SELECT count(*) $mismatch_j"),
	'0', 'every jitprof execution count equals top-level pg_stat_statements calls')
  or diag($node->safe_psql('postgres',
	"SELECT j.queryid, j.executions, s.calls, left(s.query, 60) $mismatch_j"));
my $mismatch_s = q{
FROM pg_stat_statements s
  LEFT JOIN jitprof_queries j
    ON s.queryid = j.queryid AND s.userid = j.userid AND s.dbid = j.dbid
  WHERE s.toplevel AND s.jit_functions > 0
    AND s.query NOT LIKE '%pg_stat_statements%' AND s.query NOT LIKE '%jitprof%'
    AND j.executions IS DISTINCT FROM s.calls};
is($node->safe_psql('postgres', "SELECT count(*) $mismatch_s"),
	'0', 'every statement pg_stat_statements saw JIT-compile has executions = calls')
  or diag($node->safe_psql('postgres',
	"SELECT s.queryid, s.calls, j.executions, left(s.query, 60) $mismatch_s"));

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC/, 'no crash in the server log');

$node->stop;
done_testing();
