# Tiered JIT (jitprof.tiering, doc/tiering.md): a query starts interpreted
# and switches to compiled code mid-scan, after jitprof.tiering_threshold
# evaluations, with the same function names as eager JIT; an expression that
# never runs is never compiled; a failing compile leaves the query
# interpreted with one WARNING; an error after the switch frees the code;
# jit = off and jitprof.tiering = off are respected.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $rows = 100000;
my $node = jitprof_node('tiering_switch');
$node->safe_psql('postgres', qq{
CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, $rows) g;
ANALYZE t;
});

# unoptimized, so that deform functions stay functions of their own
my $common = "SET jit_optimize_above_cost = -1;\nSET jit_inline_above_cost = -1;\n";
my $scan = 'SELECT sum(a * 2), count(*) FROM t WHERE b % 3 = 0';
# the introspection queries run without JIT, so that they add no functions
my $names = "SET jit = off; SELECT string_agg(symbol, ' ' ORDER BY symbol) FROM jitprof_functions";
my $linked = "SET jit = off; SELECT value FROM jitprof_status WHERE name = 'objects_linked'";

sub session
{
	my ($settings, @sql) = @_;
	return psql_lines($node, $common, $settings, @sql);
}

my ($off) = session(['jit = off'], $scan);
my $expected = $off->[0];

# eager JIT: the reference names
my ($eager) = session([], $scan, $names);
is($eager->[0], $expected, 'eager JIT: the interpreter\'s result');
my $eager_names = $eager->[1];
like($eager_names, qr/SeqScan_qual/, 'eager JIT names the scan\'s qual');
like($eager_names, qr/_deform_scan/, 'eager JIT has a deform function');

# tiering off (the test clusters' setting; the default is on) is eager JIT
my ($dflt, $dflt_err) = session(['client_min_messages = debug1'], 'SHOW jitprof.tiering', $scan, $names,
	"SELECT boot_val FROM pg_settings WHERE name = 'jitprof.tiering'");
is($dflt->[0], 'off', 'jitprof.tiering is off in the test clusters');
is($dflt->[3], 'on', 'jitprof.tiering is on by default');
is($dflt->[2], $eager_names, 'tiering off: the eager names');
unlike($dflt_err, qr/jitprof tiering/, 'tiering off: no tiering round');

# threshold never reached: the whole query runs interpreted, nothing is linked
my ($cold, $cold_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 1000000000',
	'client_min_messages = debug1'], $scan, $names, $linked);
is($cold->[0], $expected, 'below the threshold: the interpreter\'s result');
is($cold->[1], '', 'below the threshold: no JIT function');
is($cold->[2], '0', 'below the threshold: no object linked');
unlike($cold_err, qr/jitprof tiering: round/, 'below the threshold: no round');

# the switch mid-scan: after 1000 evaluations of a scan of 100000 rows
my ($mid, $mid_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 1000',
	'client_min_messages = debug1'], $scan, $names);
is($mid->[0], $expected, 'switched mid-scan: the interpreter\'s result');
like($mid_err, qr/jitprof tiering: round 1 after 1001 evaluations compiled [1-9]\d* expressions/,
	'the switch happened at evaluation 1001 of a 100000-row scan');
note("eager: $eager_names\ntiered: " . ($mid->[1] // '') . "\n$mid_err");
my @rounds = ($mid_err =~ /jitprof tiering: round (\d+)/g);
is($rounds[0], 1, 'the first round');
# Expressions that first run after the round (the Agg's projection, once at
# the end) wait for a next round, so the names are a subset of eager JIT's.
my %eager = map { $_ => 1 } split / /, $eager_names;
my @mid = split / /, $mid->[1] // '';
like($mid->[1], qr/SeqScan_qual\S* .*_deform_scan|_deform_scan.* \S*SeqScan_qual/,
	'after the switch: the scan\'s qual and deform function are compiled');
is(join(' ', grep { !$eager{$_} } @mid), '', 'after the switch: the same names as eager JIT');

# a cold expression: LIMIT stops the Append before its second branch runs
my $union = 'SELECT sum(x) FROM ((SELECT a * 2 AS x FROM t WHERE b % 3 = 0)'
  . ' UNION ALL (SELECT a * 7 FROM t WHERE b % 5 = 1) LIMIT 10) s';
my $scans = "SET jit = off; SELECT string_agg(DISTINCT plan_node_id::text, ' ') FROM jitprof_functions WHERE node_type = 'SeqScan'";
my ($u_off) = session(['jit = off'], $union);
my ($u_eager) = session([], $union, $scans);
my ($u_tier, $u_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 0',
	'client_min_messages = debug1'], $union, $scans);
is($u_eager->[0], $u_off->[0], 'cold branch, eager: the interpreter\'s result');
is($u_tier->[0], $u_off->[0], 'cold branch, tiered: the interpreter\'s result');
note("eager scans: $u_eager->[1]; tiered scans: $u_tier->[1]\n$u_err");
my @eager_scans = split / /, $u_eager->[1];
is(scalar(@eager_scans), 2, 'eager JIT compiles both scans');
is($u_tier->[1], $eager_scans[0], 'tiered JIT compiles the scan that ran, not the cold one');
like($u_err, qr/not run yet/, 'the DEBUG line of the round says so');

# a compile that fails: the query goes on interpreted, with one WARNING
my ($fail, $fail_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 10',
	'jitprof.debug_fail_tiering = on'], $scan, $names, $linked);
is($fail->[0], $expected, 'failed compile: the interpreter\'s result');
is(scalar(my @w = ($fail_err =~ /WARNING:  tiered JIT compilation failed/g)), 1,
	'failed compile: one WARNING');
is($fail->[2], '0', 'failed compile: nothing linked');

# an error after the switch: the query fails as interpreted, its code is freed
my ($err_run, $err_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 100'],
	'SELECT sum(1 / (a - 50000)) FROM t',
	$scan,
	"SET jit = off; SELECT (SELECT value FROM jitprof_status WHERE name = 'objects_linked')::int"
	  . " - (SELECT value FROM jitprof_status WHERE name = 'objects_freed')::int");
like($err_err, qr/ERROR:  division by zero/, 'error after the switch: the query\'s own error');
is($err_run->[0], $expected, 'error after the switch: the next query runs');
is($err_run->[1], '0', 'error after the switch: every object was freed');

# a cursor fetched in parts across the switch: the interpreter's rows
my $cursor = "BEGIN; DECLARE c CURSOR FOR SELECT a * 3, b FROM t WHERE b % 7 = 1;\n"
  . join('', map { "FETCH 1500 c;\n" } 1 .. 6) . "COMMIT";
my ($c_off) = session(['jit = off'], $cursor);
my ($c_tier, $c_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 2000',
	'client_min_messages = debug1'], $cursor);
cmp_ok(scalar(@$c_off), '>', 5000, 'cursor: rows fetched');
ok(join("\n", @$c_tier) eq join("\n", @$c_off), 'cursor fetched across the switch: the interpreter\'s rows');
like($c_err, qr/jitprof tiering: round 1 after 2001 evaluations/, 'cursor: the switch happened while fetching');

# plain EXPLAIN evaluates nothing, so tiering compiles nothing
my ($x_eager) = session([], "EXPLAIN $scan");
my ($x_tier) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 0'], "EXPLAIN $scan", $linked);
like(join("\n", @$x_eager), qr/JIT:/, 'EXPLAIN, eager: a JIT section');
unlike(join("\n", @$x_tier), qr/JIT:/, 'EXPLAIN, tiered: no JIT section');
is($x_tier->[-1], '0', 'EXPLAIN, tiered: nothing linked');

# jit = off is respected with tiering on
my ($nojit, $nojit_err) = session(['jit = off', 'jitprof.tiering = on', 'jitprof.tiering_threshold = 0',
	'client_min_messages = debug1'], $scan, $linked);
is($nojit->[0], $expected, 'jit = off, tiering on: the result');
is($nojit->[1], '0', 'jit = off, tiering on: nothing linked');
unlike($nojit_err, qr/jitprof tiering/, 'jit = off, tiering on: no round');

ok(!grep(/server process .* (terminated|was terminated) by signal/, slurp_file($node->logfile)),
	'no backend crashed');

$node->stop;
done_testing();
