# Tiering's rule (src/provider/tiering_rule.c, doc/tiering.md): a tiny query
# never switches; a long one switches part-way, after the number of
# interpreted steps at which the measured compile cost is paid back (or,
# when one sequential scan drives it to the end, once the scan's progress
# predicts that the rest pays back more), at the level that work makes pay
# best; under a LIMIT the scan's progress is not used, above a Sort it is;
# steps are weighted by kind, so that an expression of cheap steps weighs
# less than an int4pl expression of as many steps; a plan below
# jitprof.tiering_min_cost is not counted at all.  Every assertion is on
# counts (steps, weights, rounds, objects linked), none on time.
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

# the rule's DEBUG1 line: steps, their weight, the weight by CPU time, the
# gain done, the gain predicted to remain and where that came from,
# functions, steps and weight compiled, level
my $rule_re = qr/jitprof tiering rule: (\d+) steps interpreted, weighing (\d+) \((\d+) by CPU time\), gain (\d+), (\d+) predicted to remain \(([^)]*)\), compiling (\d+) functions of (\d+) steps weighing (\d+) pays at level (\S+)/;

# the long query: 1,000,000 rows of 87 steps, one sequential scan under a
# plain aggregate that reads it to the end, so the rule predicts the rest
# from the scan's progress through the table's blocks
my ($big_off) = session(['jit = off'], "SELECT count(*) FROM big WHERE $qual");
my ($big, $big_err) = session(\@rule, "SELECT count(*) FROM big WHERE $qual", $linked);
note($big_err);
is($big->[0], $big_off->[0], 'long query: the interpreter\'s result');
my @switches = ($big_err =~ /$rule_re/g);
is(scalar(@switches), 10, 'long query: the rule switched once');
my ($steps, $weighing, $bycpu, $gain, $rest, $from, $functions, $nsteps, $nweighing, $level) = @switches;
# 87 steps on PostgreSQL 15; other versions may count a step or two more
cmp_ok($nsteps, '>=', 85, "the round compiles the qual and the transition ($nsteps steps)");
cmp_ok($nsteps, '<=', 95, 'and nothing more');
# the weights are relative to the average step of an int4pl expression, so
# this one weighs about its step count (a column fetch and a call per term;
# the deform and last steps count as calls)
my $add_ratio = $nweighing / $nsteps;
cmp_ok($add_ratio, '>', 0.8, "int4pl steps weigh about one each ($nweighing for $nsteps steps)");
cmp_ok($add_ratio, '<', 1.25, 'and not more');
like($from, qr/^scan at \d+\.\d% of \d+ blocks, from 0\.0%$/,
	"long query: the rest is predicted from the scan's progress ($from)");
# "as much again" would switch at the round's break-even, about 4.5 million
# steps with tiering_rule.c's constants; the scan's progress predicts the
# rest of the 87 million at one of the rule's first checks (each about 1.4
# million apart)
cmp_ok($steps, '>', 1_000_000, "long query: not before the rule's first check ($steps steps)");
cmp_ok($steps, '<', 3_000_000, 'long query: switched before "as much again" would have');
cmp_ok($rest, '>', 40_000_000, "long query: most of the scan predicted to remain ($rest steps)");
cmp_ok($rest, '<', 200_000_000, 'and not far more than the scan holds');
# with that much to come, optimising pays, and a plan PostgreSQL itself
# compiles without it (its cost is under jit_optimize_above_cost) may have
# it: the level is the work's
like($level, qr/^(jit\+opt|all)$/, "long query: the level chosen from the work optimises ($level)");
like($big_err, qr/jitprof tiering: round 1 after \d+ evaluations compiled 2 expressions/,
	'the round compiled the two expressions that ran');
cmp_ok($big->[1], '>', 0, 'long query: an object linked');

# a threshold of -1 still forbids its level; unoptimised code is priced as
# saving nothing (bench/tiering_levels.sh), so with both at -1 no round pays
my ($nolevel, $nolevel_err) = session([@rule, 'jit_optimize_above_cost = -1', 'jit_inline_above_cost = -1'],
	"SELECT count(*) FROM big WHERE $qual", $linked);
is($nolevel->[0], $big_off->[0], 'thresholds at -1: the interpreter\'s result');
unlike($nolevel_err, qr/jitprof tiering/, 'thresholds at -1: no round pays, no switch');
is($nolevel->[1], '0', 'thresholds at -1: nothing linked');

# under a LIMIT, the scan may stop before its end: the rule does not use
# its progress, and predicts "as much again", switching at the break-even
# (about 43 million steps at jit+opt with tiering_rule.c's constants)
my ($lim, $lim_err) = session(\@rule,
	"SELECT count(*) FROM (SELECT a FROM big WHERE $qual LIMIT 999999) s");
is($lim->[0], $big_off->[0], 'under a LIMIT: the interpreter\'s result');
my @lim = ($lim_err =~ /$rule_re/);
is($lim[5], 'as much again', 'under a LIMIT: the rest predicted as much again');
cmp_ok($lim[0], '>', 20_000_000, "under a LIMIT: switched at the break-even ($lim[0] steps)");
is($lim[4], $lim[3], 'under a LIMIT: the rest predicted equals the gain done');
is($lim[9], 'jit+opt', 'under a LIMIT: at jit+opt');

# a LIMIT above a Sort of an aggregate (TPC-H's ORDER BY ... LIMIT): the
# sort reads all of its input first, so the scan's progress is used
my $top = "SELECT a % 7 AS k, count(*) FROM big WHERE $qual GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3";
my ($top_off) = session(['jit = off'], $top);
my ($top_out, $top_err) = session(\@rule, $top);
is(join(',', @$top_out), join(',', @$top_off), 'LIMIT above a Sort: the interpreter\'s result');
my @top = ($top_err =~ /$rule_re/);
like($top[5] // '', qr/^scan at /, 'LIMIT above a Sort: the rest predicted from the scan');

# a promoted plan (under jit_above_cost) priced under
# jit_optimize_above_cost, with inlining forbidden: 3,000,000 rows leave so
# much work after the first check that optimising pays
$node->safe_psql('postgres', qq{
CREATE TABLE huge AS SELECT (g % 1000)::int AS a FROM generate_series(1, 3000000) g;
ANALYZE huge;
});
my ($huge, $huge_err) = session([@rule, 'jit_above_cost = 1e9', 'jit_optimize_above_cost = 1e10',
	'jit_inline_above_cost = -1'],
	"SELECT count(*) FROM huge WHERE $qual",
	"SET jit = off; SELECT value FROM jitprof_status WHERE name = 'tiering_plans_promoted'");
note($huge_err);
is($huge->[0], '2997000', 'promoted plan: the interpreter\'s result');
is($huge->[1], '1', 'promoted plan: the plan was under jit_above_cost');
my @huge = ($huge_err =~ /$rule_re/);
like($huge[5], qr/^scan at /, 'promoted plan: the rest predicted from the scan');
is($huge[9], 'jit+opt', 'promoted plan: compiled at jit+opt although its cost is under jit_optimize_above_cost');

# cheap steps: a column fetch, a NULL test and a qual step cost a fraction
# of an int4pl expression's average step, which the interpreter's speed was
# measured on, so the rule weighs them by kind; and it counts no more than
# the CPU time since the query started would hold at that speed.  Under a
# LIMIT, so that the rule predicts "as much again" and waits for the
# break-even; over 3,000,000 rows, since only the column fetches count as
# gain.
my $cheap = join(' AND ', ('a IS NOT NULL') x 40);
my ($cheap_out, $cheap_err) = session(\@rule,
	"SELECT count(*) FROM (SELECT a FROM huge WHERE $cheap LIMIT 2999999) s");
is($cheap_out->[0], '2999999', 'cheap steps: the interpreter\'s result');
my ($csteps, $cweighing, $ccpu, $cgain, $crest, $cfrom, $cfunctions, $cnsteps, $cnweighing) = $cheap_err =~ $rule_re;
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
