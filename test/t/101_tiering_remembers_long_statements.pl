# Tiering's floor on measured work (src/provider/tiering_plan.c,
# doc/tiering.md, "Which plans are tiered"): a top-level statement priced
# under tiering's floor that runs long (a function declared ROWS 10 that
# returns 3,000,000 rows) runs interpreted once, is remembered by query ID,
# and is tiered from its next execution on, where the rule compiles it
# mid-query with the interpreter's result; a cheap statement under the
# floor run many times is never remembered; nothing is remembered with
# jitprof.sample_rate = 0 or with tiering off.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $rows = 3000000;
my $node = jitprof_node('tiering_remember');
$node->safe_psql('postgres', qq{
CREATE TABLE long_t AS SELECT g AS k, g * 0.37::float8 AS v FROM generate_series(1, $rows) g;
CREATE FUNCTION tiny_estimate() RETURNS TABLE (k int, v float8)
  LANGUAGE plpgsql STABLE ROWS 10
  AS \$\$ BEGIN RETURN QUERY SELECT s.k, s.v FROM long_t s; END \$\$;
CREATE TABLE tiny AS SELECT g AS a FROM generate_series(1, 100) g;
ANALYZE long_t, tiny;
});

my $query = 'SELECT k % 10, sum(v * 1.5 + k), avg(v - k), max(v * k), count(*) '
  . 'FROM tiny_estimate() GROUP BY 1 ORDER BY 1';
my ($plan_json) = $node->safe_psql('postgres', "EXPLAIN (FORMAT JSON) $query");
my ($total) = $plan_json =~ /"Total Cost": ([0-9.]+)/;
cmp_ok($total, '<', 1000, "the statement is priced under tiering's floor ($total)");
my $expected = $node->safe_psql('postgres', "SET jit = off; $query");

# PostgreSQL's default thresholds (the test clusters force 0), tiering on
my @tiered = ('jit_above_cost = 100000', 'jit_optimize_above_cost = 500000',
	'jit_inline_above_cost = 500000', 'jitprof.tiering = on');
# a statement above the floor: tiered, so the backend's sampler starts
my $starter = 'SELECT count(*) FROM long_t WHERE k % 3 = 0';
my @names = qw(tiering_plans_remembered tiering_plans_by_history
  tiering_switches tiering_remembered_replaced);

# the counters named in @names, read with jit = off so that the read is
# neither promoted nor timed
sub counters
{
	return ('SET jit = off',
		(map { "SELECT value FROM jitprof_status WHERE name = '$_'" } @names),
		'RESET jit');
}

sub session
{
	my ($settings, @sql) = @_;
	my ($lines, $err) = psql_lines($node, '', $settings, @sql);
	unlike($err // '', qr/ERROR|WARNING/, 'no ERROR and no WARNING in the session');
	return $lines;
}

# One session: the first execution runs interpreted and is remembered; the
# second is tiered (by history) and switches; the third too.
my $run = session(\@tiered, $starter, counters(), $query, counters(),
	$query, counters(), $query, counters());
my @out = @$run;
my $ngroups = 10;
shift @out;    # the starter's count
my @c0 = splice(@out, 0, 4);
my @r1 = splice(@out, 0, $ngroups);
my @c1 = splice(@out, 0, 4);
my @r2 = splice(@out, 0, $ngroups);
my @c2 = splice(@out, 0, 4);
my @r3 = splice(@out, 0, $ngroups);
my @c3 = splice(@out, 0, 4);
is(join("\n", @r1), $expected, 'first execution: the interpreter\'s result');
is(join("\n", @r2), $expected, 'second execution (tiered): the interpreter\'s result');
is(join("\n", @r3), $expected, 'third execution (tiered): the interpreter\'s result');
is($c1[0] - $c0[0], 1, 'the first execution ran long and was remembered');
is($c1[1] - $c0[1], 0, 'and was not tiered');
is($c1[2] - $c0[2], 0, 'and did not switch');
is($c2[1] - $c1[1], 1, 'the second execution was tiered by history');
cmp_ok($c2[2] - $c1[2], '>=', 1, 'and switched to compiled code mid-query');
is($c2[0] - $c1[0], 0, 'a tiered execution is not remembered again');
is($c3[1] - $c2[1], 1, 'the third execution was tiered by history too');
is($c3[3], 0, 'no remembered query ID was replaced');

# A cheap statement under the floor, run many times in a session whose
# sampler runs at 1 kHz, is never remembered: no single execution runs
# for 20 ms of CPU time.
my $cheap = session([@tiered, 'jitprof.sample_rate = 1000'], $starter,
	counters(), (map { 'SELECT count(*) FROM tiny WHERE a * 2 > 10' } 1 .. 300),
	counters());
my @cheap = @$cheap;
my @k0 = @cheap[1 .. 4];
my @k1 = @cheap[-4 .. -1];
is($k1[0] - $k0[0], 0, '300 cheap statements: none remembered');
is($k1[1] - $k0[1], 0, 'none tiered');

# With jitprof.sample_rate = 0 no statement is timed; with tiering off
# nothing is remembered.
my $no_rate = session([@tiered, 'jitprof.sample_rate = 0'], $starter, counters(),
	$query, counters());
my @no_rate = @$no_rate;
is($no_rate[-4] - $no_rate[1], 0, 'jitprof.sample_rate = 0: not remembered');
my $off = session([@tiered[0 .. 2], 'jitprof.tiering = off'], $starter,
	counters(), $query, counters());
my @off = @$off;
is($off[-4] - $off[1], 0, 'jitprof.tiering = off: not remembered');

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|TRAP/, 'no crash in the log');
$node->stop;
done_testing();
