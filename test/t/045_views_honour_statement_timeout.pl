# statement_timeout stops jitprof's big views while they work, not after:
# with a store of some forty thousand entries and thousands of plan-node rows,
# each view is timed first (the fastest of five runs, D), then run with
# statement_timeout at a third of D.  It must fail with "canceling
# statement due to statement timeout", and the backtrace of that error
# (backtrace_functions = 'ProcessInterrupts') must show the view's own C
# function: the cancel came from a check in its loops.  Without those
# checks the function runs to its end and the executor cancels the
# statement only when it reads the first row, with no jitprof frame on the
# stack.  The timeout is derived from D, so the test holds on a slow and a
# fast machine alike; D must be at least 3 ms, so that the timeout is at
# least 1 ms.
#
# The timed statement is a prepared one, run once before the timeout is
# set.  A new backend's first statement spends about 0.5 ms (quiet) in
# planning and catalog lookups before the view's function starts, and on a
# loaded machine that can exceed the timeout: the cancel then comes from
# the executor's check before the function's first call, not from the
# function (CI at 04e0b77, forky).  After one run, EXECUTE reaches the
# function within microseconds.  On the other side, the second run of a
# backend is slower than the warm runs that D is taken from (some 5,000
# page faults of memory first touched: 51 to 77 ms against 7.8 to 19 ms,
# on this host, 2026-12-05), and warm runs vary by under 20%, so the
# function does not end before D / 3.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $tables = 1200;
my $branches = 8;

# JIT unoptimised, so that the fill compiles fast; the views are read with
# JIT off, so that no compilation runs in the statements that are timed.
my $node = jitprof_node('timeout', conf => q{
jitprof.max_hotspots = 80000
jitprof.max_plan_nodes = 80000
jitprof.plan_nodes = on
jitprof.sample_rate = 1000
jit_optimize_above_cost = -1
jit_inline_above_cost = -1
backtrace_functions = 'ProcessInterrupts'
});

# One table per query, so one query ID each; each query's branches are
# scans with a qual and a projection (about 32 JIT functions a query) under
# an Append (9 plan nodes).
$node->safe_psql('postgres', qq{
SET jit = off;
DO \$\$
BEGIN
	FOR i IN 1..$tables LOOP
		EXECUTE format('CREATE TABLE t%s (a int, b int)', i);
		EXECUTE format('INSERT INTO t%s VALUES (1, 2)', i);
	END LOOP;
END
\$\$;
CREATE FUNCTION view_ms(q text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE
	t0 timestamptz;
	best float8;
BEGIN
	FOR i IN 1..5 LOOP
		t0 := clock_timestamp();
		EXECUTE q;
		best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
	END LOOP;
	RETURN best;
END \$\$;
SELECT jitprof_reset();
});
my $fill = '';
for my $i (1 .. $tables)
{
	$fill .= join(' UNION ALL ',
		map { "SELECT a + b FROM t$i WHERE a >= $_" } 1 .. $branches) . ";\n";
}
$node->safe_psql('postgres', $fill);

my ($entries, $nodes) = split /\|/, $node->safe_psql('postgres',
	'SELECT entries, plan_node_entries FROM jitprof_sampler');
cmp_ok($entries, '>=', 10000, "the store holds $entries entries");
cmp_ok($nodes, '>=', 2000, "and $nodes plan-node rows");

# view => the C function that fills it
my @views = (
	[ 'jitprof_folded()', 'jitprof_folded_1_1' ],
	[ 'jitprof_hotspots', 'jitprof_hotspots_1_0' ],
	[ 'jitprof_plan_nodes', 'jitprof_plan_nodes_1_1' ]);

for my $v (@views)
{
	my ($view, $cfunc) = @$v;
	my $query = "SELECT count(*) FROM $view";
	my $d = $node->safe_psql('postgres',
		"SET jit = off; SELECT view_ms('$query')");
	my $timeout = int($d / 3);
	cmp_ok($timeout, '>=', 1,
		"$view takes ${d} ms, so a third of it is at least 1 ms");

	my $offset = -s $node->logfile;
	my ($ret, $out, $err) = $node->psql('postgres', qq{
SET jit = off;
PREPARE timed AS $query;
EXECUTE timed;
SET statement_timeout = '${timeout}ms';
EXECUTE timed;});
	isnt($ret, 0, "$view fails with statement_timeout = ${timeout}ms");
	like($err, qr/canceling statement due to statement timeout/,
		"$view: canceling statement due to statement timeout");

	my $log = slurp_file($node->logfile, $offset);
	like($log,
		qr/canceling statement due to statement timeout\n[^\n]*BACKTRACE:[^\n]*(?:\n\t[^\n]*)*?\(\Q$cfunc\E\+/,
		"$view: canceled from within $cfunc");
}

# the views still answer afterwards
is($node->safe_psql('postgres',
	'SET jit = off; SELECT count(*) > 0 FROM jitprof_folded()'),
	't', 'jitprof_folded answers after the cancels');

$node->stop;
done_testing();
