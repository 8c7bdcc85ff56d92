# Tiered JIT per query (doc/tiering.md, "Counters"): jitprof_queries counts
# each query's tiered executions, switches, functions and expressions
# compiled and never compiled, and they add up to the backend's
# jitprof_status rows; jitprof_explain shows, per plan node, the rounds that
# compiled its expressions, the evaluations at those rounds and the compile
# time; the counts survive a clean restart and go with jitprof_reset(); a
# nested statement, a cursor and a parallel plan count in the row their
# samples go to.
# With jitprof.plan_nodes on, a node's samples before the switch are
# interpreted (not JIT code) and after it JIT code: a scan that never
# switches has no JIT-code sample, one that switches halfway has a smaller
# JIT-code share than one that switches at its first row.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('tiering_per_query', conf => qq{
jitprof.plan_nodes = on
jitprof.sample_rate = 1000
});
my $rows = 1000000;
$node->safe_psql('postgres', qq{
CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, $rows) g;
ANALYZE t;
});

# unoptimized, so that deform functions stay functions of their own
my $common = "SET jit_optimize_above_cost = -1;\nSET jit_inline_above_cost = -1;\n";
my $scan = 'SELECT sum(a * 2), count(*) FROM t WHERE b % 3 = 0';
# the second branch never runs: its expressions are never compiled
my $union = 'SELECT sum(x) FROM ((SELECT a * 2 AS x FROM t WHERE b % 3 = 0)'
  . ' UNION ALL (SELECT a * 7 FROM t WHERE b % 5 = 1) LIMIT 10) s';
my @status_rows = qw(tiering_queries tiering_switches tiering_functions_compiled
  tiering_expressions_compiled tiering_expressions_never_compiled);
my $status = "SET jit = off; SELECT string_agg(value, ' ' ORDER BY name) FROM jitprof_status"
  . " WHERE name IN (" . join(', ', map { "'$_'" } @status_rows) . "); SET jit = on";
# the same five, summed over the store, in jitprof_status's order (by name)
my $sums = 'SET jit = off; SELECT concat_ws(\' \', sum(tiering_expressions_compiled),'
  . ' sum(tiering_expressions_never_compiled), sum(tiering_functions),'
  . ' sum(tiered_executions), sum(tiering_switches)) FROM jitprof_queries';

sub qid
{
	my ($sql) = @_;
	my $plan = $node->safe_psql('postgres', "SET jit = off; EXPLAIN (VERBOSE, COSTS OFF) $sql");
	$plan =~ /Query Identifier: (-?\d+)/ or die "no query identifier";
	return $1;
}
my $scan_id = qid($scan);
my $union_id = qid($union);

$node->safe_psql('postgres', 'SELECT jitprof_reset()');
my ($out, $err) = psql_lines($node, $common,
	[ 'jitprof.tiering = on', 'jitprof.tiering_threshold = 1000', 'client_min_messages = debug1' ],
	$status, $scan, $scan, $union, 'RESET client_min_messages', $status, $sums);
note(join("\n", @$out) . "\n" . join("\n", grep { /jitprof tiering/ } split /\n/, $err));
my @before = split / /, $out->[0];
my @after = split / /, $out->[4];
my @delta = map { $after[$_] - $before[$_] } 0 .. 4;
# jitprof_status by name: expressions_compiled, expressions_never_compiled,
# functions_compiled, queries, switches
is($out->[5], join(' ', @delta),
	'the per-query counters add up to the backend\'s jitprof_status rows');
# the union's LIMIT stops it before its 1000th evaluation: no switch
is($delta[4], 2, 'two switches: the scan\'s');
is($delta[3], 3, 'three tiered queries');
cmp_ok($delta[1], '>', 0, 'some expressions were never compiled');

my $row = $node->safe_psql('postgres',
	"SELECT executions, tiered_executions, tiering_switches, tiering_functions > 0,"
	  . " tiering_expressions_compiled > 0 FROM jitprof_queries WHERE queryid = $scan_id");
like($row, qr/^2\|2\|2\|t\|t$/, 'the scan: two executions, both tiered, one switch each');
my $never = $node->safe_psql('postgres',
	"SELECT tiering_expressions_never_compiled FROM jitprof_queries WHERE queryid = $union_id");
cmp_ok($never, '>', 0, 'the union: its cold branch\'s expressions were never compiled');
is($node->safe_psql('postgres',
		'SELECT count(*) FROM jitprof_queries WHERE tiered_executions > executions'),
	'0', 'no query has more tiered executions than executions');

# jitprof_explain: tiered JIT's header line and a line per compiled node
my $explain = $node->safe_psql('postgres', "SET jit = off; SELECT * FROM jitprof_explain($scan_id)");
note($explain);
like($explain, qr/^tiered JIT: 2 of 2 executions tiered, 2 switches$/m,
	'jitprof_explain: the header counts the tiered executions and switches');
like($explain,
	qr/Seq Scan on t  \(self [^\n]*\n(?:[^\n]*Top JIT step[^\n]*\n)?\s+Tiered JIT: compiled in 2 rounds, after 1001 evaluations on average, compile time \d+\.\d{3} ms$/m,
	'jitprof_explain: the scan was compiled in one round per execution, after 1001 evaluations');
my ($compile_ms) = $explain =~ /Seq Scan on t  .*?\n\s+Tiered JIT: .*compile time (\d+\.\d+) ms/s;
cmp_ok($compile_ms // 0, '>', 0, 'jitprof_explain: compiling the scan\'s code took time');
# the view's 1.3 entry point prints the lines of before
my $old = $node->safe_psql('postgres',
	"CREATE FUNCTION explain_1_1(bigint) RETURNS SETOF text AS '\$libdir/jitprof', 'jitprof_explain_1_1'"
	  . " LANGUAGE C STRICT; SET jit = off; SELECT * FROM explain_1_1($scan_id)");
unlike($old, qr/Tiered JIT|tiered JIT/, 'jitprof 1.3\'s jitprof_explain prints no tiering line');
is($old, join("\n", grep { !/tiered JIT/i } split /\n/, $explain),
	'... and otherwise the same lines');

# the counters survive a clean restart, and go with jitprof_reset()
my $snapshot = "SELECT executions, tiered_executions, tiering_switches, tiering_functions,"
  . " tiering_expressions_compiled, tiering_expressions_never_compiled"
  . " FROM jitprof_queries WHERE queryid IN ($scan_id, $union_id) ORDER BY queryid";
my $saved = $node->safe_psql('postgres', $snapshot);
$node->restart;
is($node->safe_psql('postgres', $snapshot), $saved, 'the counters survive a clean restart');
like($node->safe_psql('postgres', "SET jit = off; SELECT * FROM jitprof_explain($scan_id)"),
	qr/Tiered JIT: compiled in 2 rounds/, '... and so do the nodes\' rounds');
# (without JIT, so that these statements add no row of their own)
is($node->safe_psql('postgres',
		'SET jit = off; SELECT jitprof_reset(); SELECT count(*) FROM jitprof_queries'),
	"\n0", 'jitprof_reset() removes them');

# Which query a tiered execution counts in, as its samples do: a statement
# nested in a function counts in the top-level statement's row, a cursor in
# its DECLARE's, a parallel plan's workers' rounds in the leader's row (and
# their executions not at all).  Each case alone after a reset: the rows
# with tiered executions, "executions|tiered_executions|tiering_switches".
$node->safe_psql('postgres', q{
CREATE FUNCTION nested_scan() RETURNS bigint LANGUAGE plpgsql
  AS $$ BEGIN RETURN (SELECT sum(a * 2) FROM t WHERE b % 3 = 0); END $$;
});
my $tiered_rows = 'SET jit = off; SELECT string_agg(concat_ws(\'|\', executions,'
  . ' tiered_executions, tiering_switches), \' \') FROM jitprof_queries WHERE tiered_executions > 0';
my $cursor = "BEGIN; DECLARE c CURSOR FOR SELECT a * 3, b FROM t WHERE b % 7 = 1;\n"
  . join('', map { "FETCH 1500 c;\n" } 1 .. 3) . "CLOSE c; COMMIT";
for my $case (
	[ 'nested in a function', [], 'SELECT nested_scan()', qr/^1\|1\|1$/ ],
	[ 'a cursor fetched across the switch', [], $cursor, qr/^1\|1\|1$/ ],
	[ 'a parallel plan', [ 'max_parallel_workers_per_gather = 2', 'parallel_setup_cost = 0',
		'parallel_tuple_cost = 0', 'min_parallel_table_scan_size = 0' ],
		'SELECT sum(a * 3), count(*) FROM t WHERE b % 5 = 0', qr/^1\|1\|([2-9])$/ ])
{
	my ($name, $settings, $sql, $expected) = @$case;
	$node->safe_psql('postgres', 'SET jit = off; SELECT jitprof_reset()');
	my ($r, $e) = psql_lines($node, $common,
		[ 'jitprof.tiering = on', 'jitprof.tiering_threshold = 1000', @$settings ],
		$sql, $tiered_rows);
	note("$name: $r->[-1]");
	like($r->[-1], $expected, "$name: one execution, tiered, in one row, with its switches");
}

# Samples before the switch are the interpreter's, after it JIT code's: a
# scan with an expensive qual, 3 runs at each switch point (all of its
# expressions evaluate 2 x $rows times).
my $qual = join(' + ', ('a') x 41);
my $heavy = "SELECT count(*) FROM t WHERE $qual > 0";
my $heavy_id = qid($heavy);
my $node_row = "SET jit = off; SELECT self_samples, jit_self_samples FROM jitprof_plan_nodes"
  . " WHERE queryid = $heavy_id AND node_type = 'SeqScan'";
my %share;
for my $case ([ never => 1000000000 ], [ first => 0 ], [ halfway => $rows ])
{
	my ($name, $threshold) = @$case;
	$node->safe_psql('postgres', 'SELECT jitprof_reset()');
	my ($r, $e) = psql_lines($node, $common,
		[ 'jitprof.tiering = on', "jitprof.tiering_threshold = $threshold" ],
		$heavy, $heavy, $heavy, $node_row);
	my ($self, $jit) = split /\|/, $r->[3] // '0|0';
	note("$name: self $self, JIT code $jit");
	cmp_ok($self, '>', 100, "$name: the scan has its samples");
	$share{$name} = $self > 0 ? $jit / $self : 0;
}
is($share{never} * 1, 0, 'never switched: no sample of the scan is JIT code');
cmp_ok($share{first}, '>', 0.2, 'switched at the first row: the JIT code has its share');
cmp_ok($share{halfway}, '>', 0.05, 'switched halfway: samples after the switch are JIT code');
cmp_ok($share{halfway}, '<', $share{first} * 0.85,
	'switched halfway: samples before it are interpreted, not JIT code');

ok(!grep(/server process .* (terminated|was terminated) by signal/, slurp_file($node->logfile)),
	'no backend crashed');

$node->stop;
done_testing();
