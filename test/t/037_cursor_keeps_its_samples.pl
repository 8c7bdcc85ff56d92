# A cursor fetched in several pieces with other statements in between (what
# JDBC's setFetchSize does) keeps its own samples, under a query ID of its
# own: the DECLARE CURSOR statement's, as pg_stat_statements computes it.
# Its execution counts once, as pg_stat_statements counts the DECLARE.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('cursor', conf => q{
shared_preload_libraries = 'jitprof, pg_stat_statements'
pg_stat_statements.track = top
jitprof.sample_rate = 1000
});
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 500000) g;
VACUUM ANALYZE t;
SELECT jitprof_reset(), pg_stat_statements_reset();
});

$node->safe_psql('postgres', q{
BEGIN;
DECLARE c1 CURSOR FOR SELECT a FROM t WHERE sqrt(a::float8) * 3 + ln(a + 1.0) > 7 AND a % 3 <> 1;
MOVE 100000 IN c1;
SELECT count(*) FROM t WHERE sqrt(a::float8) * 2 + ln(a + 2.0) > 9;
MOVE 100000 IN c1;
SELECT count(*) FROM t WHERE sqrt(a::float8) * 2 + ln(a + 2.0) > 9;
MOVE ALL IN c1;
CLOSE c1;
DECLARE c2 CURSOR FOR SELECT a FROM t WHERE a % 7 = 1 AND sqrt(a::float8) > 3;
MOVE ALL IN c2;
COMMIT;
});

my $pgss = sub {
	my ($like) = @_;
	return split /\|/, $node->safe_psql('postgres',
		"SELECT queryid, calls FROM pg_stat_statements WHERE toplevel AND query LIKE '$like'");
};
my ($c1, $c1_calls) = $pgss->('DECLARE c1%');
my ($c2, $c2_calls) = $pgss->('DECLARE c2%');
my ($other, $other_calls) = $pgss->('SELECT count(*) FROM t WHERE sqrt%');
ok($c1 && $c2 && $c1 ne $c2, 'pg_stat_statements gives the two DECLAREs different query IDs');

my $jq = sub {
	my ($id) = @_;
	return split /\|/, $node->safe_psql('postgres',
		"SELECT executions, query_samples, jit_self_samples FROM jitprof_queries WHERE queryid = $id");
};
my ($c1_exec, $c1_samples, $c1_self) = $jq->($c1);
my ($c2_exec) = $jq->($c2);
my ($o_exec, $o_samples) = $jq->($other);
is($c1_exec, $c1_calls, "the first cursor: executions = pg_stat_statements calls ($c1_calls)");
is($c2_exec, $c2_calls, 'the second cursor too, under its own query ID');
is($o_exec, $other_calls, 'the statement run in between: executions = calls (2)');
is($node->safe_psql('postgres', 'SELECT count(*) FROM jitprof_queries WHERE queryid = 0'),
	'0', 'no cursor is left with query ID 0');

is($node->safe_psql('postgres', qq{
SELECT bool_and(symbol LIKE 'q' || $c1 || '#%') FROM jitprof_hotspots
  WHERE queryid = $c1 AND node_type IS NOT NULL}),
	't', "the cursor's functions are named after its query ID");

# The cursor's qual is charged with the cursor's own samples: all of them,
# none of the statement in between.  Its total (its code and the functions
# it calls: ln() of a numeric costs most) is most of the cursor's samples,
# 91 to 95% in three runs; its own code is about 1% (7 to 10 samples of
# 900), too few to assert on here.
my ($qual_total, $qual_query) = split /\|/, $node->safe_psql('postgres', qq{
SELECT total_samples, query_samples FROM jitprof_hotspots
  WHERE queryid = $c1 AND node_type = 'SeqScan' AND role = 'qual'});
cmp_ok($c1_samples, '>', 300, "the cursor was sampled across its FETCHes ($c1_samples)");
cmp_ok($qual_total, '>=', 0.5 * $c1_samples,
	"its qual, with what it calls, has most of them ($qual_total of $c1_samples)");
cmp_ok($qual_query, '<=', $c1_samples, "its qual's query samples are the cursor's ($qual_query <= $c1_samples)");
cmp_ok($qual_query, '>=', 0.9 * $c1_samples, "all of them, later FETCHes included ($qual_query)");
cmp_ok($c1_self, '<=', $c1_samples, 'the cursor\'s JIT self samples stay within its samples');

is($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_hotspots
  WHERE NOT (self_samples <= total_samples AND total_samples <= query_samples
             AND self_pct BETWEEN 0 AND 100)}),
	'0', 'every row: self <= total <= query samples');
is($node->safe_psql('postgres', 'SELECT count(*) FROM jitprof_queries WHERE NOT jit_pct BETWEEN 0 AND 100'),
	'0', 'every query: jit_pct within 0..100');

$node->stop;
done_testing();
