# Tiered JIT (doc/tiering.md): an expression that never runs (a SubPlan on a
# CASE branch no row takes, the second branch of an Append that LIMIT stops
# first) is never compiled, where eager JIT compiles it; and jitprof_status
# reports the switch: tiering_switches, tiering_expressions_compiled,
# tiering_functions_compiled (equal to EXPLAIN ANALYZE's "Functions"),
# tiering_expressions_never_compiled and tiering_queries.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('tiering_cold');
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, 20000) g;
CREATE TABLE u AS SELECT g AS a, g % 13 AS c FROM generate_series(1, 2000) g;
ANALYZE t, u;
});

# unoptimized, so that deform functions stay functions of their own
my $common = "SET jit_optimize_above_cost = -1;\nSET jit_inline_above_cost = -1;\n";
my $status = "SET jit = off; SELECT string_agg(name || '=' || value, ' ' ORDER BY name)"
  . " FROM jitprof_status WHERE name LIKE 'tiering%' OR name IN ('functions_live', 'objects_linked', 'objects_freed');"
  . " SET jit = on";
# the SeqScan nodes that got JIT code, by plan node id
my $scans = "SET jit = off; SELECT coalesce(string_agg(DISTINCT plan_node_id::text, ' '), '') FROM jitprof_functions"
  . " WHERE node_type = 'SeqScan'";

sub session
{
	my ($settings, @sql) = @_;
	return psql_lines($node, $common, $settings, @sql);
}

sub parse_status
{
	my ($line) = @_;
	return { map { split /=/, $_, 2 } split / /, $line // '' };
}

# A SubPlan on a branch that no row takes (a > 0 for every row of t).
my $subplan = 'SELECT sum(CASE WHEN t.a > 0 THEN t.a * 2'
  . ' ELSE (SELECT max(u.c) FROM u WHERE u.a = t.b AND u.c > 3) END) FROM t';
my ($off) = session(['jit = off'], $subplan);
my ($eager) = session([], $subplan, $scans);
my ($tier, $tier_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 0',
	'client_min_messages = debug1'], $status, $subplan, $scans, $status);
note("eager scans: $eager->[1]; tiered: $tier->[2]\n$tier_err");

is($eager->[0], $off->[0], 'subplan: eager JIT gives the interpreter\'s result');
is($tier->[1], $off->[0], 'subplan: tiered JIT gives the interpreter\'s result');
# The outer scan has no expression of its own (the CASE is the Agg's), so
# the SubPlan's scan is eager JIT's only compiled scan.
my @eager_scans = split / /, $eager->[1];
is(scalar(@eager_scans), 1, 'subplan: eager JIT compiles the SubPlan\'s scan');
is($tier->[2], '', 'subplan: tiered JIT never compiles the SubPlan\'s scan');
my ($s0, $s1) = (parse_status($tier->[0]), parse_status($tier->[3]));
is($s1->{tiering_queries} - $s0->{tiering_queries}, 1, 'subplan: one tiered query counted');
cmp_ok($s1->{tiering_switches} - $s0->{tiering_switches}, '>=', 1, 'subplan: the switch is counted');
cmp_ok($s1->{tiering_expressions_never_compiled} - $s0->{tiering_expressions_never_compiled}, '>=', 2,
	'subplan: the SubPlan scan\'s qual and projection are counted as never compiled');
is($s1->{tiering_failures} - $s0->{tiering_failures}, 0, 'subplan: no failure counted');
is($s1->{functions_live}, 0, 'subplan: no code left live after the query');

# The second branch of an Append that LIMIT stops before it runs.
my $union = 'SELECT sum(x) FROM ((SELECT a * 2 AS x FROM t WHERE b % 3 = 0)'
  . ' UNION ALL (SELECT a * 7 FROM u WHERE c % 5 = 1) LIMIT 10) s';
my ($u_off) = session(['jit = off'], $union);
my ($u_eager) = session([], $union, $scans);
my ($u_tier) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 0'], $union, $scans);
is($u_tier->[0], $u_off->[0], 'cold Append branch: the interpreter\'s result');
my @u_eager = split / /, $u_eager->[1];
is(scalar(@u_eager), 2, 'cold Append branch: eager JIT compiles both scans');
is($u_tier->[1], $u_eager[0], 'cold Append branch: tiered JIT compiles the first scan only');

# The counters against EXPLAIN ANALYZE: the functions a tiered query
# compiled are what EXPLAIN reports, and a query below the threshold
# counts a tiered query and never-compiled expressions, no switch.
my $scan = 'SELECT sum(a * 2), count(*) FROM t WHERE b % 3 = 0';
my ($x, $x_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 1000',
	'client_min_messages = debug1'],
	$status, "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) $scan", $status);
my $plan = join("\n", @$x[1 .. $#$x - 1]);
note("$plan\n$x_err");
my ($functions) = $plan =~ /Functions: (\d+)/;
ok(defined $functions && $functions > 0, 'EXPLAIN ANALYZE of a tiered query reports JIT functions');
my @rounds = ($x_err =~ /jitprof tiering: round \d+ after \d+ evaluations compiled [1-9]/g);
($s0, $s1) = (parse_status($x->[0]), parse_status($x->[-1]));
is($s1->{tiering_functions_compiled} - $s0->{tiering_functions_compiled}, $functions // -1,
	'tiering_functions_compiled counts the functions EXPLAIN ANALYZE reports');
is($s1->{tiering_switches} - $s0->{tiering_switches}, scalar(@rounds),
	'tiering_switches counts the rounds that compiled code (DEBUG lines)');
my $exprs = 0;
$exprs += $_ for ($x_err =~ /round \d+ after \d+ evaluations compiled (\d+) expressions/g);
is($s1->{tiering_expressions_compiled} - $s0->{tiering_expressions_compiled}, $exprs,
	'tiering_expressions_compiled counts the expressions of those rounds');
is($s1->{objects_linked} - $s0->{objects_linked}, scalar(@rounds), 'one object linked per switch');

my ($cold) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 1000000000'],
	$status, $scan, $status);
($s0, $s1) = (parse_status($cold->[0]), parse_status($cold->[2]));
is($s1->{tiering_queries} - $s0->{tiering_queries}, 1, 'below the threshold: a tiered query');
is($s1->{tiering_switches} - $s0->{tiering_switches}, 0, 'below the threshold: no switch');
is($s1->{tiering_functions_compiled} - $s0->{tiering_functions_compiled}, 0, 'below the threshold: no function');
cmp_ok($s1->{tiering_expressions_never_compiled} - $s0->{tiering_expressions_never_compiled}, '>=', 3,
	'below the threshold: the scan\'s and the Agg\'s expressions never compiled');

# tiering off: the counters stay still
my ($eg) = session([], $status, $scan, $status);
($s0, $s1) = (parse_status($eg->[0]), parse_status($eg->[2]));
is($s1->{tiering_queries} - $s0->{tiering_queries}, 0, 'tiering off: no tiered query counted');

ok(!grep(/server process .* (terminated|was terminated) by signal/, slurp_file($node->logfile)),
	'no backend crashed');
$node->stop;
done_testing();
