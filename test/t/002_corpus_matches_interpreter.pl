# The correctness corpus (test/corpus: TPC-H-style queries and every family
# of expressions) gives byte-identical output with JIT off and with JIT forced
# for every query: optimized and inlined, unoptimized (deform functions kept
# as functions of their own), and linked by RuntimeDyld instead of JITLink.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;


# jitprof.conf forces JIT (all three cost thresholds at 0) and keeps
# parallel query off, so that plans do not depend on worker timing.
my $node = jitprof_node('corpus');
# the forced-JIT runs also write a jitdump with unwinding records (issue 12),
# so that the linker reads every object's .eh_frame
my $jd = PostgreSQL::Test::Utils::tempdir;
my @jitdump = ('jitprof.perf_jitdump = on', "jitprof.jitdump_dir = '$jd'");
corpus_database($node);

my ($off_out, $off_err, $off_status) = run_corpus($node, ['jit = off']);

# The interpreter's run is the reference: it must be substantial, and the
# queries that are meant to fail must fail the same way with JIT.
cmp_ok(scalar(split /\n/, $off_out), '>', 3000, 'corpus produced output');
my @expected_errors = ($off_err =~ /ERROR:/g);
is(scalar(@expected_errors), 7, 'the seven intended errors (overflow, division by zero, domain) occur');
is($off_status->{objects_linked}, '0', 'jit = off compiles nothing');
unlike($off_out, qr/^f$/m, 'every forced join method is really used');

my %runs = (
	'forced JIT, optimized and inlined, JITLink' => {
		settings => ['jitprof.steps = on', @jitdump],
		linker => 'jitlink',
	},
	'forced JIT, unoptimized, JITLink' => {
		settings => ['jit_optimize_above_cost = -1', 'jit_inline_above_cost = -1', 'jitprof.steps = on', @jitdump],
		linker => 'jitlink',
		deform => 1,
	},
	'forced JIT, optimized and inlined, RuntimeDyld' => {
		settings => ['jitprof.linker = rtdyld', 'jitprof.steps = on', @jitdump],
		linker => 'rtdyld',
	},
);

for my $name (sort keys %runs)
{
	my $run = $runs{$name};
	my ($out, $err, $status) = run_corpus($node, $run->{settings});

	ok($out eq $off_out, "$name: output identical to the interpreter's");
	if ($out ne $off_out)
	{
		# show where they part, to make the failure actionable
		my @a = split /\n/, $off_out;
		my @b = split /\n/, $out;
		for my $i (0 .. $#a)
		{
			next if defined $b[$i] && $a[$i] eq $b[$i];
			diag("first difference at output line " . ($i + 1) . ":\n  interpreter: $a[$i]\n  JIT:         " . ($b[$i] // '<missing>'));
			last;
		}
	}
	is($err, $off_err, "$name: errors identical to the interpreter's");
	is($status->{linker}, $run->{linker}, "$name: linked by $run->{linker}");
	cmp_ok($status->{objects_linked}, '>=', 100, "$name: JIT code was linked for the corpus (>= 100 objects)");
	cmp_ok($status->{objects_linked} - $status->{objects_freed}, '<=', 1,
		"$name: every query's code was freed, failed queries included");
	cmp_ok($status->{deform_functions}, '>', 0, "$name: deform functions linked as functions of their own")
	  if $run->{deform};
	# jitprof_functions keeps the last 1024 functions: most of the corpus.
	cmp_ok($status->{recent_functions}, '>', 500, "$name: recent functions listed");
	is($status->{unnamed_functions}, '0', "$name: every generated function got a query/plan-node name");
	# with jitprof.steps on, every function got its step lines (issue 12)
	cmp_ok($status->{steps_functions_annotated}, '>=', $status->{objects_linked},
		"$name: functions given step debug information");
	is($status->{steps_functions_skipped}, '0', "$name: no function left without it");
	# every function's FDE was found and rewritten, and records written
	is($status->{jitdump_unwinding_missing}, '0', "$name: every function had unwinding information");
	cmp_ok($status->{jitdump_unwinding_records}, '>', 0, "$name: unwinding records written");
}

# EXPLAIN ANALYZE agrees that the corpus queries are JIT-compiled, with
# every option on (EXPLAIN prints its JIT section only with COSTS on).
my $plan = $node->safe_psql('corpus', q{
EXPLAIN (ANALYZE, FORMAT JSON)
SELECT l_returnflag, l_linestatus, sum(l_quantity), avg(l_discount), count(*)
FROM lineitem WHERE l_shipdate <= date '1998-09-02'
GROUP BY l_returnflag, l_linestatus ORDER BY 1, 2});
like($plan, qr/"JIT":.*"Functions": [1-9]/s, 'EXPLAIN ANALYZE shows JIT functions');
like($plan, qr/"Inlining": true.*"Optimization": true.*"Expressions": true.*"Deforming": true/s,
	'with inlining, optimization, expressions and deforming');

# The server survived all of it.
ok(!grep(/server process .* (terminated|was terminated) by signal/, slurp_file($node->logfile)),
	'no backend crashed');

$node->stop;
done_testing();
