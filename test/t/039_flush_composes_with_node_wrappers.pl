# jitprof's mid-query flush composes with another extension that wraps
# every plan node's ExecProcNode and re-wraps whenever it sees the pointer
# change (test/modules/jp_nodewrap.c, built here), with ExecProcNodeFirst
# and with EXPLAIN ANALYZE's instrumentation: flushes keep happening, and
# the query never gets an ERROR or a different result.  The same holds for
# the plan-node profile's persistent node wrapper (jitprof.plan_nodes).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('nodewrap', conf => q{
jitprof.sample_rate = 1000
jitprof.flush_interval = 0.05
});
my $so = build_test_module('jp_nodewrap', $node->basedir);
$node->safe_psql('postgres', qq{
CREATE FUNCTION jp_nodewrap_changes() RETURNS int AS '$so' LANGUAGE C;
CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, 200000) g;
VACUUM ANALYZE t;
});

# About half a second of CPU in one statement (500 samples at 1 kHz, 1.3 s
# on a slower machine), ten flush intervals of 50 ms at least: a nested loop
# with arithmetic.
my $query = q{SELECT count(*), sum(t.a * s + t.b) FROM t, generate_series(1, 40) s
 WHERE (t.a * s) % 7 <> 3 AND t.b * s > 5};
my $expected = $node->safe_psql('postgres', "SET jit = off; $query");
# Every JIT statement (these reads too) ends with a flush that counts its
# execution, so the flushes beyond the executions counted since a reading
# happened mid-query.  A reading sees neither its own flush nor its own
# execution; the next one sees both.
my $counters = sub {
	[ split /\|/, $node->safe_psql('postgres', q{
SELECT flushes, (SELECT sum(executions) FROM jitprof_queries) FROM jitprof_sampler}) ];
};
my $mid_flushes = sub {
	my ($before) = @_;
	my $now = $counters->();
	return ($now->[0] - $before->[0]) - ($now->[1] - $before->[1]);
};

# The wrapper sits above jitprof's trampoline and captures it.
my $before = $counters->();
my ($result, $changes) = split /\n/, $node->safe_psql('postgres', qq{
LOAD '$so';
$query;
SELECT jp_nodewrap_changes();
});
is($result, $expected, 'under another node wrapper the result is the interpreter\'s');
cmp_ok($changes, '>=', 2,
	"the wrapper re-wrapped a node after jitprof armed its flush ($changes pointer changes on one node)");
my $mid = $mid_flushes->($before);
cmp_ok($mid, '>=', 2, "mid-query flushes kept happening under the wrapper ($mid)");
my ($fallbacks) = $node->safe_psql('postgres', 'SELECT trampoline_fallbacks FROM jitprof_sampler');
diag("trampoline ran a node itself $fallbacks times (wrappers that captured each other)");

# A cursor fetched in pieces: the trampoline a wrapper captured in one FETCH
# keeps forwarding in the next ones.
my $cursor_expected = $node->safe_psql('postgres', q{SET jit = off;
SELECT count(*) || '|' || sum(t.a * s + t.b) FROM t, generate_series(1, 5) s WHERE (t.a * s) % 7 <> 3});
# the cursor read row by row in a DO block, after LOAD and SETTINGS
sub cursor_sums
{
	my ($settings) = @_;
	return $node->safe_psql('postgres', qq{
LOAD '$so';
$settings
BEGIN;
DECLARE c CURSOR FOR SELECT t.a * s + t.b AS v FROM t, generate_series(1, 5) s
  WHERE (t.a * s) % 7 <> 3;
CREATE TEMP TABLE sums (n bigint, total numeric);
DO \$\$
DECLARE
  cur refcursor := 'c';
  r record;
  n bigint := 0;
  total numeric := 0;
BEGIN
  LOOP
    FETCH cur INTO r;
    EXIT WHEN NOT FOUND;
    n := n + 1;
    total := total + r.v;
  END LOOP;
  INSERT INTO sums VALUES (n, total);
END \$\$;
SELECT n || '|' || total FROM sums;
COMMIT;
});
}
my $counts = cursor_sums('');
is($counts, $cursor_expected, 'a cursor read row by row under the wrapper returns every row');

# EXPLAIN ANALYZE: the same plan and row counts with and without the
# wrapper, and no ERROR, while jitprof flushes mid-query.  BUFFERS OFF:
# PostgreSQL 18 prints buffer counts with ANALYZE by default, and a run
# that follows another reads a different number of catalog pages.
my $explain = "EXPLAIN (ANALYZE, BUFFERS OFF, COSTS OFF, TIMING OFF, SUMMARY OFF) $query";
my $plan_of = sub {
	my ($out) = @_;
	$out =~ s/\n\s*JIT:.*//s;
	return $out;
};
my $plain = $plan_of->($node->safe_psql('postgres', "SET jitprof.flush_interval = 0; $explain"));
$before = $counters->();
my $wrapped = $plan_of->($node->safe_psql('postgres', "LOAD '$so'; $explain"));
is($wrapped, $plain, 'EXPLAIN ANALYZE under the wrapper and mid-query flushes shows the same rows');
my $explain_mid = $mid_flushes->($before);
cmp_ok($explain_mid, '>=', 2, "and flushed mid-query ($explain_mid)");
# PostgreSQL 18 prints row counts with two decimals (rows=1.00)
like($wrapped, qr/actual rows=1(?:\.00)? loops=1/, 'the top node returned its row');

# Only the wrapper's own nodes: jp_nodewrap off, jitprof alone.
is($node->safe_psql('postgres', "LOAD '$so'; SET jp_nodewrap.enabled = off; $query"),
	$expected, 'without the wrapper the result is the same');

# The plan-node profile's persistent wrapper (jitprof.plan_nodes) composes
# the same way: with ExecProcNodeFirst alone, under the re-wrapping
# wrapper, in a cursor read row by row, and under EXPLAIN ANALYZE.
my $qid = $node->safe_psql('postgres', "EXPLAIN (VERBOSE) $query") =~ /Query Identifier: (-?\d+)/ ? $1 : die;
my $qsamples_sql = "SELECT coalesce(sum(query_samples), 0) FROM jitprof_queries WHERE queryid = $qid";
my $q_before = $node->safe_psql('postgres', $qsamples_sql);
is($node->safe_psql('postgres', "SET jitprof.plan_nodes = on; $query"),
	$expected, 'plan_nodes on: the result is the interpreter\'s');
$before = $counters->();
is($node->safe_psql('postgres', "LOAD '$so'; SET jitprof.plan_nodes = on; $query"),
	$expected, 'plan_nodes on under another node wrapper: the same result');
my $nodes_mid = $mid_flushes->($before);
cmp_ok($nodes_mid, '>=', 2, "and mid-query flushes kept happening, from node calls ($nodes_mid)");
# A flush that falls due before the plan runs, in ExecutorStart (which in
# a fresh backend loads the JIT provider: far more than 2 ms of CPU), is
# done at the first node calls, and flushes go on after it: about one per
# 2 ms of the query's half second or more, so 10 is a wide margin.
$before = $counters->();
is($node->safe_psql('postgres',
	"SET jitprof.plan_nodes = on; SET jitprof.flush_interval = '2ms'; $query"),
	$expected, 'plan_nodes on, a flush due before the run: the same result');
my $early_mid = $mid_flushes->($before);
cmp_ok($early_mid, '>=', 10,
	"a flush due in ExecutorStart does not stop the later ones ($early_mid)");

my ($nodes_self, $qsamples, $rows) = split /\|/, $node->safe_psql('postgres', qq{
SELECT sum(self_samples) FILTER (WHERE plan_node_id >= 0), max(query_samples), count(*)
  FROM jitprof_plan_nodes WHERE queryid = $qid});
my $q_on = $node->safe_psql('postgres', $qsamples_sql) - $q_before;
cmp_ok($nodes_self, '>', 0.9 * $q_on,
	"the plan nodes got the samples of the runs with plan_nodes on ($nodes_self of $q_on)");
cmp_ok($nodes_self, '<=', $qsamples, 'and no more');
is(cursor_sums('SET jitprof.plan_nodes = on;'), $cursor_expected, 'plan_nodes on: a cursor read row by row under the wrapper returns every row');
is($plan_of->($node->safe_psql('postgres', "LOAD '$so'; SET jitprof.plan_nodes = on; $explain")),
	$plain, 'plan_nodes on: EXPLAIN ANALYZE under the wrapper shows the same rows');

my $log = slurp_file($node->logfile);
unlike($log, qr/ERROR|terminated by signal|not watched/, 'no ERROR and no crash in the log');

$node->stop;
done_testing();
