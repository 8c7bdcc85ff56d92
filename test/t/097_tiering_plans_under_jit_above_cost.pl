# Which plans tiering takes (src/provider/tiering_plan.c, doc/tiering.md,
# "Which plans are tiered"): with jitprof.tiering on and PostgreSQL's own
# thresholds, a plan priced under jit_above_cost but above tiering's floor
# starts interpreted and is compiled once it has done the work (the
# underestimate case); a session's jit = off, jit_above_cost = -1 and the
# floor keep it interpreted; a plan PostgreSQL would JIT that is below the
# floor runs as with jit = off; a cached generic plan keeps its flags; the
# workers of a promoted parallel plan tier too; with another jit_provider
# nothing is promoted; a server that sets nothing but jitprof tiers
# (jitprof.tiering is on by default).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $rows = 3000000;
my $node = jitprof_node('tiering_plans');
# few_rows() is priced at 50,000 rows and returns 3,000,000: the planner
# prices the plan under jit_above_cost's default, and it runs long.  Its own
# query (a scan of long_t) is priced between the floor and jit_above_cost
# too, so each execution promotes two plans.
my $few_rows = qq{
CREATE TABLE long_t AS SELECT g AS k, g * 0.37::float8 AS v FROM generate_series(1, $rows) g;
CREATE FUNCTION few_rows() RETURNS TABLE (k int, v float8)
  LANGUAGE plpgsql STABLE ROWS 50000
  AS \$\$ BEGIN RETURN QUERY SELECT s.k, s.v FROM long_t s; END \$\$;
ANALYZE long_t;
};
$node->safe_psql('postgres', $few_rows . q{
CREATE TABLE tiny AS SELECT g AS a FROM generate_series(1, 100) g;
CREATE TABLE par AS SELECT g AS a, g % 97 AS b FROM generate_series(1, 200000) g;
ANALYZE tiny, par;
});

sub session
{
	my ($settings, @sql) = @_;
	return psql_lines($node, '', $settings, @sql);
}

# read with jit = off, so that the read is neither promoted nor lowered
sub counters
{
	return ('SET jit = off',
		map { "SELECT value FROM jitprof_status WHERE name = '$_'" } @_);
}

# PostgreSQL's default thresholds (the test clusters force 0)
my @pg_defaults = ('jit_above_cost = 100000', 'jit_optimize_above_cost = 500000',
	'jit_inline_above_cost = 500000');
my @tiered = (@pg_defaults, 'jitprof.tiering = on', 'client_min_messages = debug1');
my $query = 'SELECT k % 10, sum(v * 1.5 + k), avg(v - k), max(v * k), count(*) '
  . 'FROM few_rows() GROUP BY 1 ORDER BY 1';
my $explain = "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) $query";

my ($plan_json) = $node->safe_psql('postgres', "EXPLAIN (FORMAT JSON) $query");
my ($total) = $plan_json =~ /"Total Cost": ([0-9.]+)/;
cmp_ok($total, '>=', 1000, "the plan is priced above tiering's floor ($total)");
cmp_ok($total, '<', 100000, 'and under jit_above_cost\'s default');

my ($off) = session(['jit = off'], $query);
cmp_ok(scalar(@$off), '==', 10, 'the interpreter\'s result has ten groups');

# stock decision: PostgreSQL does not JIT it
my ($stock) = session(\@pg_defaults, $explain);
unlike(join("\n", @$stock), qr/\nJIT:/, 'without tiering, PostgreSQL does not JIT the plan');

# tiered: promoted, then switched part-way once the work paid
my ($tier, $tier_err) = session(\@tiered, $query,
	counters('tiering_plans_promoted', 'tiering_switches'));
note($tier_err);
is(join("\n", @$tier[0 .. 9]), join("\n", @$off), 'tiered: the interpreter\'s result');
is($tier->[10], '2', 'tiered: the plan and its function\'s query count as promoted (tiering_plans_promoted)');
cmp_ok($tier->[11], '>=', 1, 'tiered: its code switched (tiering_switches)');
like($tier_err, qr/jitprof tiering rule: \d+ steps interpreted, weighing \d+ \(\d+ by CPU time\), gain \d+, \d+ predicted to remain \([^)]*\), compiling \d+ functions of \d+ steps weighing \d+ pays at level (jit|jit\+opt|all)\n/,
	'tiered: the rule decided the switch, at a level it chose from the work');
my ($tier_plan) = session(\@tiered, $explain);
like(join("\n", @$tier_plan), qr/\nJIT:\n\s+Functions: [1-9]/,
	'tiered: EXPLAIN ANALYZE shows the functions compiled mid-query');

# what keeps a plan interpreted, as without tiering
for my $case (['jit = off', 'a session\'s jit = off'],
	['jit_above_cost = -1', 'jit_above_cost = -1'],
	['jitprof.tiering_min_cost = 1e9', 'a floor above the plan\'s cost'])
{
	my ($setting, $what) = @$case;
	my ($kept, $kept_err) = session([ @tiered, $setting ], $query,
		counters('tiering_plans_promoted', 'tiering_queries'));
	is(join("\n", @$kept[0 .. 9]), join("\n", @$off), "$what: the interpreter's result");
	is($kept->[10], '0', "$what: the plan is not promoted");
	is($kept->[11], '0', "$what: no expression deferred");
	unlike($kept_err, qr/jitprof tiering/, "$what: no round");
}

# plain EXPLAIN runs nothing and is not promoted
my ($plain) = session(\@tiered, "EXPLAIN $query", counters('tiering_plans_promoted'));
is($plain->[-1], '0', 'plain EXPLAIN: not promoted');

# a plan PostgreSQL would JIT (the clusters' jit_above_cost = 0) that is
# below the floor runs as with jit = off: no JIT, no deferral
my $cheap = 'SELECT count(*) FROM tiny WHERE a * 2 > 10';
my ($cheap_off) = session(['jit = off'], $cheap);
my ($eager_cheap) = session([], "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) $cheap");
like(join("\n", @$eager_cheap), qr/\nJIT:\n\s+Functions: [1-9]/, 'cheap plan: PostgreSQL JITs it');
my ($low, $low_err) = session(['jitprof.tiering = on', 'client_min_messages = debug1'],
	"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) $cheap", $cheap,
	counters('tiering_plans_below_floor', 'tiering_queries'));
my $low_text = join("\n", @$low);
unlike($low_text, qr/\nJIT:/, 'cheap plan, tiering on: no JIT');
is($low->[-3], $cheap_off->[0], 'cheap plan, tiering on: the interpreter\'s result');
is($low->[-2], '2', 'cheap plan: both executions counted below the floor');
is($low->[-1], '0', 'cheap plan: no expression deferred');

# a cached generic plan keeps its flags: promoted while tiering is on, and
# not JIT-compiled once it is off again
my ($generic, $generic_err) = session([@tiered, 'plan_cache_mode = force_generic_plan'],
	"PREPARE p AS $query", 'EXECUTE p', 'EXECUTE p', 'SET jitprof.tiering = off',
	'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) EXECUTE p', counters('tiering_plans_promoted'));
my $generic_text = join("\n", @$generic);
is(join("\n", @$generic[0 .. 9]), join("\n", @$off), 'generic plan, tiered: the interpreter\'s result');
is(join("\n", @$generic[10 .. 19]), join("\n", @$off), 'generic plan, tiered again: the interpreter\'s result');
unlike($generic_text, qr/\nJIT:/, 'generic plan, tiering off again: the cached plan was not changed to JIT');
is($generic->[-1], '4', 'generic plan: both tiered executions promoted (with the function\'s query)');

# a promoted parallel plan: the workers get its flags and tier on their own
my @parallel = ('max_parallel_workers_per_gather = 2', 'parallel_leader_participation = off',
	'parallel_setup_cost = 0', 'parallel_tuple_cost = 0', 'min_parallel_table_scan_size = 0',
	'jitprof.tiering_threshold = 1000');
my $agg = 'SELECT b, sum(a * 2), count(*) FROM par WHERE a % 7 = 3 GROUP BY b ORDER BY b';
my ($p_off) = session(['jit = off'], $agg);
my ($p_tier) = session([@tiered, @parallel], $agg);
is(join("\n", @$p_tier), join("\n", @$p_off), 'parallel, promoted: the interpreter\'s result');
my ($p_explain, $p_err) = session([@tiered, @parallel],
	"EXPLAIN (ANALYZE, VERBOSE, TIMING OFF, SUMMARY OFF) $agg");
my $p_plan = join("\n", @$p_explain);
note($p_plan);
like($p_plan, qr/Workers Launched: 2/, 'parallel: two workers launched');
my ($scan) = ($p_plan =~ /Parallel Seq Scan on public\.par(.*?)(?:\nJIT:|\z)/s);
my %scan_rows = (($scan // '') =~ /Worker (\d):  actual rows=(\d+)/g);
my $workers_compiled = 0;
for my $w (sort keys %scan_rows)
{
	my $compiled = $p_plan =~ /Worker $w:[^\n]*\n(?:[^\n]*\n){0,3}?\s+JIT:\n\s+Functions: [1-9]/;
	$workers_compiled++ if $compiled;
	# each of a worker's rows out of the scan was one evaluation of its qual
	ok($compiled, "parallel: worker $w, past 1,000 evaluations, has JIT functions")
	  if $scan_rows{$w} > 1000;
}
cmp_ok($workers_compiled, '>=', 1, 'parallel: a worker of the promoted plan compiled');

# another JIT provider: promoting would make it compile before the first
# row, so nothing is promoted
$node->append_conf('postgresql.conf', "jit_provider = 'llvmjit'");
$node->restart;
my ($other) = session(\@tiered, $explain, counters('tiering_plans_promoted'));
my $other_text = join("\n", @$other);
unlike($other_text, qr/\nJIT:/, 'jit_provider = llvmjit: the plan is not JIT-compiled');
is($other->[-1], '0', 'jit_provider = llvmjit: nothing promoted');

# a server configured as README's first session (jitprof preloaded and the
# JIT provider, nothing else): tiered JIT is on by default, so the same
# long query priced under jit_above_cost is promoted and switches
my $dflt = jitprof_node('tiering_defaults', no_defaults => 1, conf => q{
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
compute_query_id = on
max_parallel_workers_per_gather = 0
});
$dflt->safe_psql('postgres', $few_rows);
my ($d_out) = psql_lines($dflt, '', [], 'SHOW jitprof.tiering', 'SHOW jit_above_cost', $query,
	counters('tiering_plans_promoted', 'tiering_switches'));
is($d_out->[0], 'on', 'server defaults: jitprof.tiering is on');
is($d_out->[1], '100000', 'server defaults: PostgreSQL\'s jit_above_cost');
is(join("\n", @$d_out[2 .. 11]), join("\n", @$off), 'server defaults: the interpreter\'s result');
is($d_out->[12], '2', 'server defaults: the plan and its function\'s query are promoted');
cmp_ok($d_out->[13], '>=', 1, 'server defaults: its code switched');

done_testing();
