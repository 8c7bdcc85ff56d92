# Tiered JIT (jitprof.tiering, doc/tiering.md) gives the interpreter's
# results on the whole correctness corpus (test/corpus), whether the switch
# to compiled code happens at a query's first evaluation or after the Nth,
# for several N, and with deform functions kept as functions of their own.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;


# jitprof.conf forces JIT for every query and keeps parallel query off
my $node = jitprof_node('tiering_corpus');
corpus_database($node);

my ($off_out, $off_err, $off_status) = run_corpus($node, ['jit = off', 'jitprof.tiering = on']);
cmp_ok(scalar(split /\n/, $off_out), '>', 3000, 'corpus produced output');
is(scalar(my @e = ($off_err =~ /ERROR:/g)), 7, 'the seven intended errors occur');
is($off_status->{objects_linked}, '0', 'jit = off with tiering on compiles nothing');

my @runs = (
	[ 'switch at the first evaluation', ['jitprof.tiering_threshold = 0'] ],
	[ 'switch after 1 evaluation', ['jitprof.tiering_threshold = 1'] ],
	[ 'switch after 100 evaluations', ['jitprof.tiering_threshold = 100'] ],
	[ 'switch after 3000 evaluations, unoptimized',
		['jitprof.tiering_threshold = 3000', 'jit_optimize_above_cost = -1', 'jit_inline_above_cost = -1'] ],
);

for my $run (@runs)
{
	my ($name, $settings) = @$run;
	my ($out, $err, $status) = run_corpus($node, ['jitprof.tiering = on', @$settings]);

	ok($out eq $off_out, "$name: output identical to the interpreter's");
	if ($out ne $off_out)
	{
		my @a = split /\n/, $off_out;
		my @b = split /\n/, $out;
		for my $i (0 .. $#a)
		{
			next if defined $b[$i] && $a[$i] eq $b[$i];
			diag("first difference at output line " . ($i + 1) . ":\n  interpreter: $a[$i]\n  tiered:      " . ($b[$i] // '<missing>'));
			last;
		}
	}
	is($err, $off_err, "$name: errors identical to the interpreter's");
	cmp_ok($status->{objects_linked}, '>', 0, "$name: tiered code was linked");
	cmp_ok($status->{objects_linked} - $status->{objects_freed}, '<=', 1,
		"$name: every query's code was freed, failed queries included");
	is($status->{unnamed_functions}, '0', "$name: every tiered function got a query/plan-node name");
}

ok(!grep(/server process .* (terminated|was terminated) by signal/, slurp_file($node->logfile)),
	'no backend crashed');

$node->stop;
done_testing();
