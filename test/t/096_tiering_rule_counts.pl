# Tiering's rule (src/provider/tiering_rule.c, doc/tiering.md): a tiny query
# never switches, a long one switches part-way, after the number of
# interpreted steps at which the measured compile cost is paid back (or,
# when one sequential scan drives it to the end, once the scan's progress
# predicts that the rest pays back more), at the level that work makes pay
# best; under a LIMIT the scan's progress is not used; a plan below
# jitprof.tiering_min_cost is not counted at all.  Every assertion is on counts (steps, rounds, objects linked), none
# on time.
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

# the rule's DEBUG1 line: steps, steps by CPU time, the predicted rest,
# where the prediction came from, functions, steps compiled, level
my $rule_re = qr/jitprof tiering rule: (\d+) steps interpreted \((\d+) by CPU time\), (\d+) predicted to remain \(([^)]*)\), compiling (\d+) functions of (\d+) steps pays at level (\S+)/;

# the long query: 1,000,000 rows of 87 steps, one sequential scan under a
# plain aggregate that reads it to the end, so the rule predicts the rest
# from the scan's progress through the table's blocks
my ($big_off) = session(['jit = off'], "SELECT count(*) FROM big WHERE $qual");
my ($big, $big_err) = session(\@rule, "SELECT count(*) FROM big WHERE $qual", $linked);
note($big_err);
is($big->[0], $big_off->[0], 'long query: the interpreter\'s result');
my @switches = ($big_err =~ /$rule_re/g);
is(scalar(@switches), 7, 'long query: the rule switched once');
my ($steps, $cpu, $rest, $from, $functions, $nsteps, $level) = @switches;
# 87 steps on PostgreSQL 15; other versions may count a step or two more
cmp_ok($nsteps, '>=', 85, "the round compiles the qual and the transition ($nsteps steps)");
cmp_ok($nsteps, '<=', 95, 'and nothing more');
like($from, qr/^scan at \d+\.\d% of \d+ blocks, from 0\.0%$/,
	"long query: the rest is predicted from the scan's progress ($from)");
# "as much again" would switch at the round's break-even, about 4.5 million
# steps with tiering_rule.c's constants; the scan's progress predicts the
# rest of the 87 million at the rule's first check (about 1.4 million)
cmp_ok($steps, '>', 1_000_000, "long query: not before the rule's first check ($steps steps)");
cmp_ok($steps, '<', 3_000_000, 'long query: switched before "as much again" would have');
cmp_ok($rest, '>', 40_000_000, "long query: most of the scan predicted to remain ($rest steps)");
cmp_ok($rest, '<', 200_000_000, 'and not far more than the scan holds');
# with that much to come, inlining and optimising pay best, and a plan
# PostgreSQL itself compiles without them (its cost is under
# jit_optimize_above_cost) may have them: the level is the work's
is($level, 'all', 'long query: the level chosen from the work is all');
like($big_err, qr/jitprof tiering: round 1 after \d+ evaluations compiled 2 expressions/,
	'the round compiled the two expressions that ran');
cmp_ok($big->[1], '>', 0, 'long query: an object linked');

# a threshold of -1 still forbids its level
my (undef, $nolevel_err) = session([@rule, 'jit_optimize_above_cost = -1', 'jit_inline_above_cost = -1'],
	"SELECT count(*) FROM big WHERE $qual");
my @nolevel = ($nolevel_err =~ /$rule_re/);
is($nolevel[6], 'jit', 'thresholds at -1: the unoptimised level');

# under a LIMIT, the scan may stop before its end: the rule does not use
# its progress, and predicts "as much again", switching at the break-even
my ($lim, $lim_err) = session(\@rule,
	"SELECT count(*) FROM (SELECT a FROM big WHERE $qual LIMIT 999999) s");
is($lim->[0], $big_off->[0], 'under a LIMIT: the interpreter\'s result');
my @lim = ($lim_err =~ /$rule_re/);
is($lim[3], 'as much again', 'under a LIMIT: the rest predicted as much again');
cmp_ok($lim[0], '>', 3_000_000, "under a LIMIT: switched at the break-even ($lim[0] steps)");
is($lim[2], $lim[1], 'under a LIMIT: the rest predicted equals the work done');
is($lim[6], 'jit', 'under a LIMIT: at the unoptimised level');

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
like($huge[3], qr/^scan at /, 'promoted plan: the rest predicted from the scan');
is($huge[6], 'jit+opt', 'promoted plan: compiled at jit+opt although its cost is under jit_optimize_above_cost');

# cheap steps: a NULL test costs a fraction of the int4pl call the
# interpreter's speed was measured on, so the steps overstate the work, and
# the rule counts no more than the CPU time since the query started would
# hold at that speed (measured on this host, quiet: 5.7 million against
# 10.2 million steps, 0.56).  Under a LIMIT, so that the rule predicts "as
# much again" and the bound alone decides when it switches; the LIMIT's own
# work per row and a loaded host (0.88 measured with load 3.5 on 2 cores)
# loosen the bound, so the best of three runs is kept.
my $cheap = join(' AND ', ('a IS NOT NULL') x 40);
my ($csteps, $ccpu);
for my $try (1 .. 3)
{
	my ($cheap_out, $cheap_err) = session(\@rule,
		"SELECT count(*) FROM (SELECT a FROM big WHERE $cheap LIMIT 999999) s");
	is($cheap_out->[0], '999999', "cheap steps, run $try: the interpreter's result");
	my ($s, $c) = $cheap_err =~ /jitprof tiering rule: (\d+) steps interpreted \((\d+) by CPU time\)/;
	($csteps, $ccpu) = ($s, $c)
	  if defined $s && (!defined $csteps || $c / $s < $ccpu / $csteps);
}
ok(defined $csteps, 'cheap steps: the rule switched');
cmp_ok($ccpu, '<', 0.92 * $csteps, "cheap steps: CPU time bounds the work ($ccpu of $csteps steps)");
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
