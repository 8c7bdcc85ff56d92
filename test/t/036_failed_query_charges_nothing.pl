# A failed query's samples belong to its own execution: the next query that
# ends adds nothing to the failed query's rows (before, a slot's "in query"
# flag belonged to the backend, so a failed qual showed self_pct = 105 and
# jit_pct = 12900).  A failed execution counts no execution.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# (no mid-query flush: the failed query's counts reach the store only
# after it failed)
my $node = jitprof_node('failed', conf => q{
jitprof.sample_rate = 1000
jitprof.flush_interval = 0
});
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 1500000) g;
VACUUM ANALYZE t;
});

# Fails with division by zero near the end of a heavy scan; the next query
# is much cheaper, so that charging its samples to the failed query's
# functions would show as a share above 100%.
my $failing = q{SELECT count(*) FROM t
  WHERE (a::float8 * 1.5 + a * 0.25) * (a % 13) + sqrt(a::float8) > 7
    AND (CASE WHEN a = 1499990 THEN a / (a - a) ELSE 1 END) = 1};
my $next = q{SELECT count(*) FROM t WHERE a % 10 = 1 AND a < 300000};
my $qid = sub {
	my ($sql) = @_;
	my ($id) = $node->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $sql") =~
	  /Query Identifier: (-?\d+)/;
	return $id;
};
my ($failed_id, $next_id) = ($qid->($failing), $qid->($next));
ok(defined $failed_id && defined $next_id, 'EXPLAIN shows both query IDs');

$node->safe_psql('postgres', 'SELECT jitprof_reset()');
my $session = background_session($node, 'postgres', on_error_stop => 0);
my ($out, $ret) = $session->query($failing);
like($session->{stderr}, qr/division by zero/, 'the first query fails');
$session->{stderr} = '';
my $count = $session->query_safe($next);
like($count, qr/^\d+$/, 'the next query answers');

my $summary = sub {
	my ($id) = @_;
	return $node->safe_psql('postgres',
		"SELECT executions || '|' || query_samples FROM jitprof_queries WHERE queryid = $id");
};
my $failed_rows = sub {
	return $node->safe_psql('postgres', qq{
SELECT string_agg(symbol || ':' || self_samples || '/' || total_samples || '/' || query_samples, ',' ORDER BY symbol)
  FROM jitprof_hotspots WHERE queryid = $failed_id});
};

my ($f_exec, $f_samples) = split /\|/, $summary->($failed_id);
is($f_exec, '0', 'the failed query counts no execution');
cmp_ok($f_samples, '>', 100, "its samples are its own ($f_samples)");
my ($qual_self, $qual_query) = split /\|/, $node->safe_psql('postgres', qq{
SELECT self_samples, query_samples FROM jitprof_hotspots
  WHERE queryid = $failed_id AND node_type = 'SeqScan' AND role = 'qual'});
cmp_ok($qual_self, '>', 0, "the failed query's qual was sampled ($qual_self)");
cmp_ok($qual_self, '<=', $qual_query, "and its self samples stay within its query's ($qual_self <= $qual_query)");
cmp_ok($qual_query, '<=', $f_samples, "which are the failed execution's ($qual_query <= $f_samples)");

my ($n_exec) = split /\|/, $summary->($next_id);
is($n_exec, '1', 'the next query counts one execution');

# More queries end: the failed query's rows do not move.
my $rows_before = $failed_rows->();
$session->query_safe($next) for 1 .. 2;
is($failed_rows->(), $rows_before, "later queries add nothing to the failed query's rows");
is($summary->($failed_id), "0|$f_samples", "nor to its summary");
$session->quit;

is($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_hotspots
  WHERE NOT (self_samples <= total_samples AND total_samples <= query_samples
             AND self_pct BETWEEN 0 AND 100 AND total_pct BETWEEN 0 AND 100)}),
	'0', 'every row: self <= total <= query samples, shares within 0..100');
is($node->safe_psql('postgres', 'SELECT count(*) FROM jitprof_queries WHERE NOT jit_pct BETWEEN 0 AND 100'),
	'0', 'every query: jit_pct within 0..100');

$node->stop;
done_testing();
