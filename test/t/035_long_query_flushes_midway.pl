# A long query's samples reach the hotspot store while it still runs (every
# jitprof.flush_interval of CPU time), without counting an execution until
# it ends, and its results are those of the interpreter.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use JitprofTest;

my $node = jitprof_node('midway', conf => q{
jitprof.sample_rate = 1000
jitprof.flush_interval = 0.25
});

$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, 400000) g;
VACUUM ANALYZE t;
});

# A few seconds of CPU in one statement, many flush intervals: a nested
# loop over t and a 75-row series, with arithmetic in the qual and the
# aggregate.
my $query = q{SELECT count(*), sum(t.a * s + t.b) FROM t, generate_series(1, 75) s
 WHERE (t.a * s) % 7 <> 3 AND t.b * s > 5};
my $plan = $node->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $query");
my ($qid) = $plan =~ /Query Identifier: (-?\d+)/;
ok(defined $qid, 'EXPLAIN shows the query ID');

my $expected = $node->safe_psql('postgres', "SET jit = off; $query");
$node->safe_psql('postgres', 'SELECT jitprof_reset()');

my $bg = background_session($node, 'postgres');
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/started/, "\\echo started\n$query;\n");

# Poll while the query runs: its samples appear before it ends.
my ($seen, $running_after) = (0, 0);
my $executions_while_running;
for (1 .. 200)
{
	my $self = $node->safe_psql('postgres',
		"SELECT coalesce(sum(self_samples), 0) FROM jitprof_hotspots WHERE queryid = $qid");
	my $state = $node->safe_psql('postgres',
		"SELECT state FROM pg_stat_activity WHERE pid = $pid");
	if ($self > 0)
	{
		$seen = $self;
		$running_after = ($state eq 'active');
		$executions_while_running = $node->safe_psql('postgres',
			"SELECT coalesce(max(executions), 0) FROM jitprof_queries WHERE queryid = $qid");
		last;
	}
	last if $state ne 'active';
	usleep(100_000);
}
cmp_ok($seen, '>', 0, "samples of the running query reached the store ($seen self samples)");
ok($running_after, 'the query was still running when they were read');
is($executions_while_running, '0', 'no execution is counted before the query ends');

# Let the query finish and check what it returned and what was counted.
$bg->{stdout} = '';
my $result = $bg->query_safe('SELECT 1');
my $after = $node->safe_psql('postgres',
	"SELECT executions, query_samples FROM jitprof_queries WHERE queryid = $qid");
my ($executions, $query_samples) = split /\|/, $after;
is($executions, '1', 'one execution once the query ended');
my $self_total = $node->safe_psql('postgres',
	"SELECT sum(self_samples) FROM jitprof_hotspots WHERE queryid = $qid");
cmp_ok($self_total, '>', $seen, 'later flushes add to the earlier ones');
cmp_ok($self_total, '<=', $query_samples, "self samples stay within the query's ($self_total <= $query_samples)");
my $flushes = $node->safe_psql('postgres', 'SELECT flushes FROM jitprof_sampler');
cmp_ok($flushes, '>=', 2, "several flushes for one statement ($flushes)");

my $max_pct = $node->safe_psql('postgres',
	"SELECT max(self_pct) FROM jitprof_hotspots WHERE queryid = $qid");
cmp_ok($max_pct, '<=', 100, "shares stay percentages ($max_pct%)");

$bg->quit;

# A sub-second interval is kept: '100ms' is 0.1 s, not rounded down to 0
# (which means "only when the query ends").  The query above over 30 rows
# of the series takes about 1.7 s of CPU time (300 rows took 16,838 samples
# at 1 kHz in a run on a 2-core machine; 19 flushes were counted here), so
# it flushes about 17 times mid-way; without mid-query flushes the count
# would be 2: its own end, and that of the first read of the counter.
{
	(my $shorter = $query) =~ s/generate_series\(1, 75\)/generate_series(1, 30)/ or die;
	my $flushes_of = sub {
		$node->safe_psql('postgres', 'SELECT flushes FROM jitprof_sampler');
	};
	my $before = $flushes_of->();
	my $t0 = Time::HiRes::time();
	$node->safe_psql('postgres', "SET jitprof.flush_interval = '100ms'; $shorter");
	my $elapsed = Time::HiRes::time() - $t0;
	my $n = $flushes_of->() - $before;
	cmp_ok($n, '>=', 6,
		sprintf("flush_interval = '100ms' flushes mid-query (%d flushes in %.1f s)", $n, $elapsed));
}

# The query's result, under JIT with mid-query flushes, is the interpreter's.
is($node->safe_psql('postgres', $query), $expected,
	'result equals jit = off');
my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC|not watched by the sampler/, 'no crash, no stray trampoline');

$node->stop;
done_testing();
