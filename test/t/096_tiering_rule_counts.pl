# Tiering's rule (src/provider/tiering_rule.c, doc/tiering.md): a tiny query
# never switches, a long one switches part-way, after the number of
# interpreted steps at which the measured compile cost is paid back, and at
# the unoptimised level; steps are weighted by kind, so that an expression of
# cheap steps weighs less than an int4pl expression of as many steps; a plan
# below jitprof.tiering_min_cost is not counted at all.  Every assertion is
# on counts (steps, weights, rounds, objects linked), none on time.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $rows = 1000000;
my $node = jitprof_node('tiering_rule');
# a qual of 40 additions: 87 steps per row with the count's transition
my $qual = join(' + ', ('a') x 41) . ' > 0';
$node->safe_psql('postgres', qq{
CREATE TABLE big AS SELECT (g % 1000)::int AS a FROM generate_series(1, $rows) g;
CREATE TABLE tiny AS SELECT g AS a FROM generate_series(1, 100) g;
ANALYZE big, tiny;
});
my $linked = "SET jit = off; SELECT value FROM jitprof_status WHERE name = 'objects_linked'";

sub session
{
	my ($settings, @sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		join('', map { "SET $_;\n" } 'client_min_messages = debug1', @$settings)
		  . join('', map { "$_;\n" } @sql),
		on_error_stop => 0);
	return ([ split /\n/, $out ], $err);
}

my @rule = ('jitprof.tiering = on', 'jitprof.tiering_min_cost = 0');

# the tiny query: 100 rows, far from paying back a compile
my ($tiny_off) = session(['jit = off'], "SELECT count(*) FROM tiny WHERE $qual");
my ($tiny, $tiny_err) = session(\@rule, 'SHOW jitprof.tiering_threshold',
	"SELECT count(*) FROM tiny WHERE $qual", $linked);
is($tiny->[0], '-1', 'the rule decides by default (jitprof.tiering_threshold = -1)');
is($tiny->[1], $tiny_off->[0], 'tiny query: the interpreter\'s result');
unlike($tiny_err, qr/jitprof tiering/, 'tiny query: the rule never switches');
is($tiny->[2], '0', 'tiny query: nothing linked');

# the long query: 1,000,000 rows of 87 steps
my ($big_off) = session(['jit = off'], "SELECT count(*) FROM big WHERE $qual");
my ($big, $big_err) = session(\@rule, "SELECT count(*) FROM big WHERE $qual", $linked);
note($big_err);
is($big->[0], $big_off->[0], 'long query: the interpreter\'s result');
my $rule_line = qr/jitprof tiering rule: (\d+) steps interpreted, weighing (\d+) \((\d+) by CPU time\), gain (\d+), compiling (\d+) functions of (\d+) steps weighing (\d+) pays at level (\S+)/;
my @switches = ($big_err =~ /$rule_line/g);
is(scalar(@switches), 8, 'long query: the rule switched once');
my ($steps, $weighing, $bycpu, $gain, $functions, $nsteps, $nweighing, $level) = @switches;
# 87 steps on PostgreSQL 15; other versions may count a step or two more
cmp_ok($nsteps, '>=', 85, "the round compiles the qual and the transition ($nsteps steps)");
cmp_ok($nsteps, '<=', 95, 'and nothing more');
# the break-even of tiering_rule.c's constants for these functions and steps
# is about 4.5 million steps (the rule's first check, for one function of
# one step, is at about 1.4 million): the switch is part-way, neither at
# the start nor at the end of the 87 million
cmp_ok($steps, '>', 2_000_000, "long query: not switched early ($steps steps)");
cmp_ok($steps, '<', 60_000_000, 'long query: switched well before the end');
is($level, 'jit', 'at the switch, the unoptimised level is predicted to pay best');
# the weights are relative to the average step of an int4pl expression, so
# this one weighs about its step count (a column fetch and a call per term;
# the deform and last steps count as calls)
my $add_ratio = $nweighing / $nsteps;
cmp_ok($add_ratio, '>', 0.8, "int4pl steps weigh about one each ($nweighing for $nsteps steps)");
cmp_ok($add_ratio, '<', 1.25, 'and not more');
like($big_err, qr/jitprof tiering: round 1 after \d+ evaluations compiled 2 expressions/,
	'the round compiled the two expressions that ran');
cmp_ok($big->[1], '>', 0, 'long query: an object linked');

# cheap steps: a column fetch, a NULL test and a qual step cost a fraction
# of an int4pl expression's average step, which the interpreter's speed was
# measured on, so the rule weighs them by kind; and it counts no more than
# the CPU time since the query started would hold at that speed
my $cheap = join(' AND ', ('a IS NOT NULL') x 40);
my ($cheap_out, $cheap_err) = session(\@rule, "SELECT count(*) FROM big WHERE $cheap");
is($cheap_out->[0], '1000000', 'cheap steps: the interpreter\'s result');
my ($csteps, $cweighing, $ccpu, $cgain, $cfunctions, $cnsteps, $cnweighing) = $cheap_err =~ $rule_line;
ok(defined $csteps, 'cheap steps: the rule switched');
note("cheap steps: $csteps steps, weighing $cweighing, $ccpu by CPU time, gain $cgain; round of $cnsteps steps weighing $cnweighing");
# fetch, NULL test and AND steps weigh a fraction of an int4pl expression's
# (measured: bench/results/2026-12-06-step-weights.md), so that, step for
# step, the cheap expression weighs less, in what a round would compile and
# in the work counted
my $cheap_ratio = $cnweighing / $cnsteps;
cmp_ok($cheap_ratio, '<', 0.75 * $add_ratio,
	sprintf('cheap steps weigh less than as many int4pl steps (%.2f against %.2f a step)', $cheap_ratio, $add_ratio));
cmp_ok($cweighing, '<', 0.75 * $csteps, "cheap steps: the work counted is weighted ($cweighing for $csteps steps)");
cmp_ok($ccpu, '<=', $cweighing, 'cheap steps: the work used is no more than the weighted count, nor than CPU time');
cmp_ok($ccpu, '>', 2_000_000, 'cheap steps: and the switch still waits for the break-even');

# the floor: the same long query, priced below jitprof.tiering_min_cost
my ($floor, $floor_err) = session(['jitprof.tiering = on', 'jitprof.tiering_min_cost = 1e12'],
	"SELECT count(*) FROM big WHERE $qual", $linked);
is($floor->[0], $big_off->[0], 'below the floor: the interpreter\'s result');
unlike($floor_err, qr/jitprof tiering/, 'below the floor: not counted, never switched');
is($floor->[1], '0', 'below the floor: nothing linked');

# a forced switch point overrides the rule and the floor (090, 091)
my ($forced, $forced_err) = session(['jitprof.tiering = on', 'jitprof.tiering_min_cost = 1e12',
	'jitprof.tiering_threshold = 10'], "SELECT count(*) FROM tiny WHERE $qual");
is($forced->[0], $tiny_off->[0], 'forced switch: the interpreter\'s result');
like($forced_err, qr/jitprof tiering: round 1 after 11 evaluations/, 'forced switch: at evaluation 11');
unlike($forced_err, qr/jitprof tiering rule:/, 'forced switch: the rule is not asked');

# jit = off is respected
my ($nojit, $nojit_err) = session([@rule, 'jit = off'], "SELECT count(*) FROM big WHERE $qual", $linked);
unlike($nojit_err, qr/jitprof tiering/, 'jit = off: no switch');
is($nojit->[1], '0', 'jit = off: nothing linked');

done_testing();
