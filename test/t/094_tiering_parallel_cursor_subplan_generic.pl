# Tiered JIT (doc/tiering.md) where the executor is not one plain run:
# - parallel workers tier independently: each worker counts its own
#   evaluations and switches on its own (EXPLAIN ANALYZE VERBOSE shows JIT
#   functions per worker, the DEBUG line of a round comes from each worker),
#   and the result is the interpreter's;
# - a cursor fetched in parts across the switch, scrolled back after it, and
#   a correlated SubPlan that switches mid-query give the interpreter's rows;
# - a generic cached plan (PREPARE, plan_cache_mode = force_generic_plan) is
#   the same after a tiered execution as before (EXPLAIN (VERBOSE, COSTS
#   OFF) identical), and its next execution tiers again and is right.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('tiering_exec', conf => q{
max_worker_processes = 8
max_parallel_workers = 4
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
});
$node->safe_psql('postgres', q{
CREATE TABLE big AS SELECT g AS a, g % 97 AS b, g % 1000 AS c FROM generate_series(1, 400000) g;
CREATE TABLE small AS SELECT g AS k, g * 3 AS v FROM generate_series(1, 500) g;
ANALYZE big, small;
});

my $common = "SET jit_optimize_above_cost = -1;\nSET jit_inline_above_cost = -1;\n";

sub session
{
	my ($settings, @sql) = @_;
	return psql_lines($node, $common, $settings, @sql);
}

my @tier = ('jitprof.tiering = on', 'jitprof.tiering_threshold = 2000');

# --- parallel workers ---
my @parallel = ('max_parallel_workers_per_gather = 2', 'parallel_leader_participation = off');
my $agg = 'SELECT b, sum(a * 2), count(*) FROM big WHERE c % 7 = 3 GROUP BY b ORDER BY b';
my ($p_off) = session(['jit = off'], $agg);
my ($p_tier, $p_err) = session([@tier, @parallel, 'client_min_messages = debug1'], $agg);
ok(join("\n", @$p_tier) eq join("\n", @$p_off), 'parallel: the interpreter\'s result');
# the leader takes no part, and its Finalize Aggregate sees 194 rows: the
# two rounds are the workers', each after its own 2,001 evaluations
my @worker_rounds = ($p_err =~ /DEBUG:  jitprof tiering: round 1 after 2001 evaluations compiled [1-9]/g);
note($p_err);
is(scalar(@worker_rounds), 2, 'parallel: each of the two workers switched on its own count');
my ($explain, $x_err) = session([@tier, @parallel, 'client_min_messages = debug1'],
	"EXPLAIN (ANALYZE, VERBOSE, TIMING OFF, SUMMARY OFF) $agg");
note($x_err);
my $plan = join("\n", @$explain);
note($plan);
like($plan, qr/Workers Launched: 2/, 'parallel: two workers launched');
# JIT sections: the summary and one per worker (the leader compiled nothing)
my @jit = ($plan =~ /JIT:\n\s+Functions: ([1-9]\d*)/g);
is(scalar(@jit), 3, 'parallel: EXPLAIN shows tiered JIT functions in the summary and in each worker');
for my $w (0, 1)
{
	like($plan, qr/Worker $w:[^\n]*\n(?:[^\n]*\n){0,3}?\s+JIT:\n\s+Functions: [1-9]/,
		"parallel: worker $w has JIT functions of its own");
}

# a threshold no worker reaches: no worker compiles
my ($p_cold, $p_cold_err) = session(['jitprof.tiering = on', 'jitprof.tiering_threshold = 100000000',
	@parallel, 'client_min_messages = debug1'], $agg);
ok(join("\n", @$p_cold) eq join("\n", @$p_off), 'parallel, below the threshold: the interpreter\'s result');
unlike($p_cold_err, qr/jitprof tiering: round/, 'parallel, below the threshold: no worker switched');

# --- cursors ---
my $cursor = "BEGIN; DECLARE c SCROLL CURSOR FOR SELECT a * 3, b FROM big WHERE c % 7 = 1 AND a <= 60000;\n"
  . join('', map { "FETCH 1000 c;\n" } 1 .. 5) . "MOVE ABSOLUTE 100 c;\nFETCH 2000 c;\nFETCH BACKWARD 50 c;\nCOMMIT";
my ($c_off) = session(['jit = off'], $cursor);
my ($c_tier, $c_err) = session([@tier, 'client_min_messages = debug1'], $cursor);
cmp_ok(scalar(@$c_off), '>', 7000, 'cursor: rows fetched');
ok(join("\n", @$c_tier) eq join("\n", @$c_off), 'cursor fetched and scrolled across the switch: the interpreter\'s rows');
like($c_err, qr/jitprof tiering: round 1 after 2001 evaluations compiled [1-9]/, 'cursor: the switch happened while fetching');

# a cursor closed before its round's code ever ran, then another query
my ($c2, $c2_err) = session([@tier, 'jitprof.tiering_threshold = 10'],
	"BEGIN; DECLARE d CURSOR FOR SELECT a FROM big WHERE c = 5; FETCH 3 d; CLOSE d; COMMIT",
	'SELECT count(*) FROM big WHERE c = 5',
	"SET jit = off; SELECT value FROM jitprof_status WHERE name = 'functions_live'");
is($c2->[-2], 400, 'cursor closed mid-way: the next query is right');
is($c2->[-1], 0, 'cursor closed mid-way: no code left live');

# --- SubPlans ---
# a correlated SubPlan run once per outer row: its expressions and the
# outer scan's switch mid-query
my $sub = 'SELECT sum(a + (SELECT max(v) FROM small WHERE small.k = big.c % 500 + 1)) FROM big WHERE a <= 20000';
my ($s_off) = session(['jit = off'], $sub);
my ($s_tier, $s_err) = session([@tier, 'client_min_messages = debug1'], $sub,
	"SET jit = off; SELECT string_agg(DISTINCT node_type, ' ' ORDER BY node_type) FROM jitprof_functions");
note("$s_tier->[1]\n$s_err");
is($s_tier->[0], $s_off->[0], 'SubPlan: the interpreter\'s result');
like($s_err, qr/jitprof tiering: round 1 after 2001 evaluations compiled [1-9]/, 'SubPlan: the switch happened');
like($s_tier->[1], qr/SeqScan/, 'SubPlan: scans were compiled');
# an uncorrelated InitPlan and a hashed SubPlan
my $init = 'SELECT count(*) FROM big WHERE a > (SELECT avg(v) FROM small) AND b NOT IN (SELECT k FROM small WHERE k % 2 = 0)';
my ($i_off) = session(['jit = off'], $init);
my ($i_tier) = session([@tier], $init);
is($i_tier->[0], $i_off->[0], 'InitPlan and hashed SubPlan: the interpreter\'s result');

# --- a generic cached plan ---
my $prep = "SET plan_cache_mode = force_generic_plan;\n"
  . "PREPARE q(int) AS SELECT b, sum(a * 2), count(*) FROM big WHERE c % 7 = \$1 GROUP BY b ORDER BY b LIMIT 5;\n"
  . "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE q(3);\n"
  . "\\echo ==\n"
  . "EXECUTE q(3);\n"
  . "\\echo ==\n"
  . "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE q(3);\n"
  . "\\echo ==\n"
  . "EXECUTE q(4);\n"
  . "\\echo ==\n"
  . "SET jit = off;\n"
  . "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'q'";
my ($g_off) = session(['jit = off'],
	"SELECT b, sum(a * 2), count(*) FROM big WHERE c % 7 = 3 GROUP BY b ORDER BY b LIMIT 5",
	"\\echo ==\nSELECT b, sum(a * 2), count(*) FROM big WHERE c % 7 = 4 GROUP BY b ORDER BY b LIMIT 5");
my ($g, $g_err) = session([@tier, 'client_min_messages = debug1'], $prep);
my @parts = split /\n==\n/, join("\n", @$g);
my @off_parts = split /\n==\n/, join("\n", @$g_off);
note(join("\n--\n", @parts));
like($parts[0], qr/Filter: \(\(big\.c % 7\) = \$1\)/, 'generic plan: EXPLAIN shows the generic plan');
is($parts[2], $parts[0], 'generic plan: EXPLAIN (VERBOSE, COSTS OFF) identical after a tiered execution');
is($parts[1], $off_parts[0], 'generic plan: the first execution gives the interpreter\'s rows');
is($parts[3], $off_parts[1], 'generic plan: the second execution gives the interpreter\'s rows');
like($parts[4], qr/^[1-9]\d*\|0$/, 'generic plan: no custom plan was made');
is(scalar(my @r = ($g_err =~ /jitprof tiering: round 1 after 2001 evaluations compiled [1-9]/g)), 2,
	'generic plan: each of the two executions switched');

ok(!grep(/server process .* (terminated|was terminated) by signal/, slurp_file($node->logfile)),
	'no backend crashed');
$node->stop;
done_testing();
