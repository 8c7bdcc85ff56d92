# Parallel workers sample their share of a query and flush it under the
# leader's query ID and user: one execution, with the workers' samples added
# to the query's row.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('parallel', conf => q{
jitprof.sample_rate = 1000
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
});

$node->safe_psql('postgres', q{
CREATE TABLE p AS SELECT random() AS a, random() AS b FROM generate_series(1, 1500000);
VACUUM ANALYZE p;
});

# (not under EXPLAIN ANALYZE: there the workers carry the query ID of the
# EXPLAIN statement, as they do for pg_stat_statements)
my $query = 'SELECT count(*) FROM p WHERE a * b + sqrt(a) * sqrt(b) > 0.8';
my $plan = $node->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $query");
like($plan, qr/Workers Planned: 2/, 'the query is planned with parallel workers');
my ($qid) = $plan =~ /Query Identifier: (-?\d+)/;
ok(defined $qid, 'EXPLAIN shows the query ID');
my $samples = "SELECT query_samples FROM jitprof_queries WHERE queryid = $qid";

# The same query without workers, for the CPU time it needs.
my $expected = $node->safe_psql('postgres', "SET max_parallel_workers_per_gather = 0; $query");
my $serial = $node->safe_psql('postgres', $samples);
cmp_ok($serial, '>', 100, "the serial run was sampled ($serial samples)");

$node->safe_psql('postgres', 'SELECT jitprof_reset()');
my $flushes = $node->safe_psql('postgres', 'SELECT flushes FROM jitprof_sampler');
is($node->safe_psql('postgres', $query), $expected, 'the parallel query answers');
my $workers = $node->safe_psql('postgres', 'SELECT flushes FROM jitprof_sampler') - $flushes - 1;
cmp_ok($workers, '>=', 1, "workers flushed their samples ($workers)");

my ($executions, $parallel) = split /\|/, $node->safe_psql('postgres',
	"SELECT executions, query_samples FROM jitprof_queries WHERE queryid = $qid");
is($executions, '1', 'the workers do not count as executions');

# The leader alone does about a third of the scan; with the workers' samples
# the query's row holds about all of the CPU time the serial run needed.
cmp_ok($parallel, '>', 0.6 * $serial,
	"the workers' samples went to the leader's query ($parallel vs $serial serial)");
$node->stop;
done_testing();
