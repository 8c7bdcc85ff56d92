# The JIT advisor (doc/jit_advisor.md): per-query accounting, the explore
# mode and jitprof_jit_payoff.
#  - the corpus gives the interpreter's output under every forced JIT level,
#    and queries PostgreSQL would not JIT are explored;
#  - a query where compiled code wins is decided "jit pays", with a saving
#    interval above 0 against PostgreSQL's choice (off);
#  - a cheap query whose compiling dominates is decided "jit loses";
#  - a generic plan keeps its cached jitFlags after explored executions;
#  - a parallel query counts its workers' CPU time;
#  - jitprof.advisor_max_loss stops exploring, a session's jit = off is never
#    explored, out-of-scope statements are not recorded;
#  - one execution gets a bound with its assumption;
#  - enforce mode runs the decided queries at their best level (off for the
#    one JIT loses on, jit+opt for the one it pays on, where PostgreSQL
#    would not JIT it), the decisions survive a restart, jitprof_reset()
#    forgets them, and a session's jit = off is respected;
#  - privacy as in the hotspot views; the table's cap, counter and size.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# jitprof.conf forces JIT for every query (level "all"); the advisor records
# every top-level statement and explores only where a test asks it to.
my $node = jitprof_node('advisor', conf => q{
jitprof.jit_advisor = explore
jitprof.advisor_min_cost = 0
jitprof.advisor_fraction = 0
});

sub query_id
{
	my ($sql, $db) = @_;
	my $plan = $node->safe_psql($db // 'postgres', "EXPLAIN (VERBOSE, COSTS OFF) $sql");
	my ($qid) = $plan =~ /Query Identifier: (-?\d+)/;
	die "no query ID for $sql" unless defined $qid;
	return $qid;
}

sub payoff
{
	my ($qid, $cols) = @_;
	return $node->safe_psql('postgres',
		"SELECT $cols FROM jitprof_jit_payoff WHERE queryid = $qid");
}

# ---------------------------------------------------------------------------
# Results never change: the corpus under every forced level, against the
# interpreter.  Half the runs have PostgreSQL's thresholds at -1 (it would not
# JIT), so the forced JIT levels explore plans that stock PostgreSQL runs
# interpreted; "off" is forced over plans it would JIT.
corpus_database($node);

# the corpus's output and its number of errors, after a SET of each setting
sub corpus_errors
{
	my (@settings) = @_;
	my ($out, $err) = run_corpus($node, \@settings);
	my @errors = $err =~ /^(?:psql:\S+ )?ERROR:.*$/mg;
	return ($out, scalar(@errors));
}

my ($ref_out, $ref_errors) = corpus_errors('jit = off');
cmp_ok(scalar(split /\n/, $ref_out), '>', 3000, 'the corpus produced output');
for my $level (qw(off jit jit+opt jit+inline all))
{
	my @no_jit = $level eq 'off' ? () : ('jit_above_cost = -1');
	$node->safe_psql('postgres', 'SELECT jitprof_reset()');
	my ($out, $errors) = corpus_errors(@no_jit, "jitprof.debug_advisor_level = '$level'");
	ok($out eq $ref_out, "forced level $level: output identical to the interpreter's");
	is($errors, $ref_errors, "forced level $level: the same errors");
	my ($explored, $at_level) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT (SELECT explored FROM jitprof_advisor),
		       (SELECT coalesce(sum(executions), 0) FROM jitprof_jit_levels
		        WHERE level = '$level' AND NOT pg_choice)});
	cmp_ok($explored, '>', 50, "forced level $level: $explored executions explored");
	is($at_level, $explored, "forced level $level: all of them at $level");
}

# ---------------------------------------------------------------------------
# Accounting: one execution, its level, cost and compile phases.
$node->safe_psql('postgres', q{
CREATE TABLE small AS SELECT g::float8 AS a, (g % 7)::float8 AS b FROM generate_series(1, 1000) g;
VACUUM ANALYZE small;
});
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
my $lose = 'SELECT sum(a * b), sum(a + b), avg(a - b), max(a * a), min(b * b), '
  . 'sum(a / (b + 1)), sum(sqrt(a) * b), sum(a * a * b), avg(b * b - a), count(*) '
  . 'FROM small WHERE a * b >= 0 AND a + b > -1';
my $lose_id = query_id($lose);
$node->safe_psql('postgres', $lose);
is(payoff($lose_id, 'pg_level || executions || verdict'), 'all1undecided',
	'one execution at PostgreSQL\'s level "all", undecided');
my ($cost, $gen, $opt, $emit) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT p.plan_cost > 0, l.generation_ms > 0, l.optimization_ms > 0, l.emission_ms > 0
	FROM jitprof_jit_payoff p JOIN jitprof_jit_levels l USING (userid, dbid, queryid)
	WHERE queryid = $lose_id});
is("$cost$gen$opt$emit", 'tttt', 'plan cost and the compile phases are recorded');

# One execution cannot be compared: a bound from its own profile.
my ($bound, $assumption) = split /\|/, payoff($lose_id, 'bound_ms, assumption');
cmp_ok($bound, '>', 0, "compiling dominates: jit = off saves at least $bound ms");
like($assumption, qr/^compiling took \d+% of the CPU time at all; if the interpreter is at most 2 times slower/,
	'and the assumption is printed');

# ---------------------------------------------------------------------------
# JIT loses: alternate PostgreSQL's level with a forced "off".
my $alternate = sub {
	my ($sql, $level, $n) = @_;
	# the session loads LLVM first, so that no execution measured pays for it
	$node->safe_psql('postgres', "SELECT count(*) FROM small;\n" . join('', map {
		"SET jitprof.debug_advisor_level = '$level';\n$sql;\nRESET jitprof.debug_advisor_level;\n$sql;\n"
	} 1 .. $n));
};
$alternate->($lose, 'off', 6);
my ($verdict, $best, $saving, $low) = split /\|/,
  payoff($lose_id, 'verdict, best_level, saving_ms, saving_low_ms');
is($verdict, 'jit loses', 'a cheap query whose compiling dominates: jit loses');
is($best, 'off', 'its best level is off');
cmp_ok($low, '>', 0, "and off saves $saving ms per execution, interval above $low");

# Tiering leaves a query judged "jit loses" interpreted, untracked
# (tiering_rule.c): none of its expressions is even counted, while a query
# the advisor has not judged, the same but for one operator, is.  The
# advisor records nothing meanwhile (off), so the verdicts below stay.
my $tier_status = "SET jit = off; SELECT value FROM jitprof_status WHERE name = 'tiering_expressions_never_compiled'";
my $tiered_run = sub {
	my ($sql) = @_;
	my @out = split /\n/, $node->safe_psql('postgres', "$tier_status;
SET jitprof.jit_advisor = off; SET jit = on; SET jitprof.tiering = on; SET jitprof.tiering_min_cost = 0;
$sql;
$tier_status;");
	return ($out[-1] - $out[0], $out[1]);
};
my ($untracked, $lose_row) = $tiered_run->($lose);
is($untracked, 0, 'tiering: the query judged "jit loses" is not tracked');
my $other = $lose =~ s/a \+ b > -1/a + b >= -1/r;
my ($tracked, $other_row) = $tiered_run->($other);
cmp_ok($tracked, '>', 0, "tiering: a query not judged is tracked ($tracked expressions never compiled)");
is($lose_row, $other_row, 'and both give the same row');

# ---------------------------------------------------------------------------
# JIT pays: a wide aggregate PostgreSQL would not JIT (jit_above_cost = -1),
# explored at jit+opt.  Its seven aggregates and two quals are float8
# arithmetic over all eight columns, so that compiled code saves about a
# third: on 2,000,000 rows, with a CI run alongside, off took 900 to 950 ms
# and jit+opt 630 to 660 ms (EXPLAIN ANALYZE, PostgreSQL 15, five runs
# each), where the first four aggregates and one qual alone took 505 to 540
# and 483 to 505 ms.  With only those, a CI run's load on PostgreSQL 18
# spread each level's eight runs by a quarter (off 424 ms, sd 108; jit+opt
# 334 ms, sd 92) and left the saving's interval below zero.
$node->safe_psql('postgres', q{
CREATE TABLE wide AS SELECT g::float8 AS c1, (g % 13)::float8 AS c2, (g % 7)::float8 AS c3,
  (g % 11)::float8 AS c4, (g % 5)::float8 AS c5, (g % 3)::float8 AS c6,
  (g % 17)::float8 AS c7, (g % 19)::float8 AS c8 FROM generate_series(1, 2000000) g;
VACUUM ANALYZE wide;
});
my $pays = 'SELECT sum(c1 * c2 + c3 * c4 - c5 * c6 + c7 * c8), sum(c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8), '
  . 'max(c8 * c7 - c6), count(*), sum(c1 * c3 - c2 * c4 + c5 * c7 - c6 * c8), '
  . 'sum((c1 + c3) * (c2 + c4) - (c5 + c7) * (c6 + c8)), min(c2 * c3 * c4 - c5 * c6 * c7), '
  . 'sum(c8 * c8 + c7 * c7 + c6 * c6 + c5 * c5) FROM wide WHERE c1 * c2 > c3 - 100 AND c4 * c5 >= c6 - 50';
my $pays_id = query_id($pays);
$alternate->("SET jit_above_cost = -1;\n$pays", 'jit+opt', 8);
($verdict, $best, $saving, $low) = split /\|/,
  payoff($pays_id, 'verdict, best_level, saving_ms, saving_low_ms');
my $levels = $node->safe_psql('postgres', qq{
	SELECT string_agg(format('%s: %s runs, %s ms (sd %s), compile %s ms', level, executions,
	  round(mean_cpu_ms::numeric, 1), round(stddev_cpu_ms::numeric, 1),
	  round((generation_ms + inlining_ms + optimization_ms + emission_ms)::numeric, 1)), '; ')
	FROM jitprof_jit_levels WHERE queryid = $pays_id});
is(payoff($pays_id, 'pg_level'), 'off', 'PostgreSQL would not JIT the wide aggregate');
is($verdict, 'jit pays', "compiled code wins on the wide aggregate: jit pays ($levels)");
is($best, 'jit+opt', 'its best level is jit+opt');
cmp_ok($low, '>', 0, "jit+opt saves $saving ms per execution, interval above $low");

# The threshold optimiser on what was measured: JIT from above the cheap
# query's cost, at or below the wide aggregate's, optimised, not inlined
# (the wide aggregate was not measured at an inlining level, so those count
# as its cost at PostgreSQL's level, off); against this session's forced
# JIT (thresholds 0) it saves CPU.  Other queries here ran at one level
# only, which costs the same under any thresholds.
my ($advice, $lose_cost, $pays_cost) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT format('%s %s %s %s', jit, jit_above_cost, jit_optimize_above_cost, jit_inline_above_cost)
	       || CASE WHEN saving_ms > 0 THEN ' saves' ELSE '' END,
	       (SELECT plan_cost FROM jitprof_jit_payoff WHERE queryid = $lose_id),
	       (SELECT plan_cost FROM jitprof_jit_payoff WHERE queryid = $pays_id)
	FROM jitprof_jit_advice()});
my ($jit, $above, $optimize, $inline, $saves) = split / /, $advice;
is("$jit $inline " . ($saves // ''), 't -1 saves', "jitprof_jit_advice(): JIT, no inlining, a saving ($advice)");
ok($above >= $lose_cost && $above < $pays_cost && $optimize <= $above,
	"JIT and optimise from above the cheap query's cost $lose_cost, below the wide one's $pays_cost");

# ---------------------------------------------------------------------------
# Enforce mode.  Each decided query runs at its best measured level: the
# cheap query at off although PostgreSQL JITs it at "all", the wide
# aggregate at jit+opt although PostgreSQL (jit_above_cost = -1) would not
# JIT it.  jitprof_jit_levels counts the level each execution ran at, and
# the sampler's jitprof_queries counts the executions that JIT-compiled.
is(payoff($lose_id, 'enforced_level'), 'off', 'the query JIT loses on is enforced at off');
is(payoff($pays_id, 'enforced_level'), 'jit+opt', 'the one JIT pays on at jit+opt');
my $levels_of = sub {
	my ($qid) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT string_agg(level || '=' || executions, ',' ORDER BY level)
		       || ' jit=' || coalesce((SELECT sum(executions) FROM jitprof_queries WHERE queryid = $qid), 0)
		FROM jitprof_jit_levels WHERE queryid = $qid});
};
# "off=7,all=4 jit=4" plus n at level: the counts of a level, and of JIT runs
my $plus = sub {
	my ($counts, $level, $n, $jit) = @_;
	$counts =~ s/(^|,)\Q$level\E=(\d+)/$1 . $level . '=' . ($2 + $n)/e
	  or $counts =~ s/^/$level=$n,/;
	$counts =~ s/ jit=(\d+)$/' jit=' . ($1 + $jit)/e;
	return $counts;
};
my $enforce_run = sub {
	my ($settings) = @_;
	$node->safe_psql('postgres', "SET jitprof.jit_advisor = enforce;
$settings"
		  . "$lose;
$lose;
$lose;
SET jit_above_cost = -1;
$pays;
");
};
my ($lose_before, $pays_before) = ($levels_of->($lose_id), $levels_of->($pays_id));
my $enforced_before = $node->safe_psql('postgres', 'SELECT enforced FROM jitprof_advisor');
$enforce_run->('');
is($levels_of->($lose_id), $plus->($lose_before, 'off', 3, 0),
	"enforce: the cheap query ran three times at off, not JIT-compiled ($lose_before before)");
is($levels_of->($pays_id), $plus->($pays_before, 'jit+opt', 1, 1),
	"enforce: the wide aggregate ran at jit+opt, JIT-compiled ($pays_before before)");
is($node->safe_psql('postgres', 'SELECT enforced FROM jitprof_advisor') - $enforced_before, 4,
	'jitprof_advisor.enforced counts the four');

# A session's jit = off: nothing is JIT-compiled, whatever was decided.
($lose_before, $pays_before) = ($levels_of->($lose_id), $levels_of->($pays_id));
$enforce_run->("SET jit = off;
");
is($levels_of->($pays_id), $plus->($pays_before, 'off', 1, 0),
	'enforce with the session\'s jit = off: the wide aggregate ran at off');

# The decisions survive a restart (pg_stat/jitprof_advisor.stat), and apply.
my $decided = $node->safe_psql('postgres',
	'SELECT string_agg(queryid || verdict || enforced_level, \',\' ORDER BY queryid) FROM jitprof_jit_payoff WHERE enforced_level IS NOT NULL');
$node->restart;
ok(!-e $node->data_dir . '/pg_stat/jitprof_advisor.stat', 'the saved file was loaded and removed');
is($node->safe_psql('postgres',
	'SELECT string_agg(queryid || verdict || enforced_level, \',\' ORDER BY queryid) FROM jitprof_jit_payoff WHERE enforced_level IS NOT NULL'),
	$decided, 'after a restart the same queries are decided, at the same levels');
# The jit = off run above recorded one more interpreted execution of the
# wide aggregate, which can leave its verdict undecided (the interval of
# its saving then reaches 0): each query is expected at the level it is
# enforced at now, and an undecided one at PostgreSQL's (off).
my $pays_level = payoff($pays_id, 'coalesce(enforced_level, \'\')');
note('after the restart the wide aggregate is enforced at ' . ($pays_level || 'no level (undecided)'));
my ($pays_expect, $pays_jit) =
  $pays_level eq '' ? ('off', 0) : ($pays_level, $pays_level eq 'off' ? 0 : 1);
($lose_before, $pays_before) = ($levels_of->($lose_id), $levels_of->($pays_id));
$enforce_run->('');
is($levels_of->($lose_id) . ' ' . $levels_of->($pays_id),
	$plus->($lose_before, 'off', 3, 0) . ' ' . $plus->($pays_before, $pays_expect, 1, $pays_jit),
	"and enforce mode applies them after the restart (the wide aggregate at $pays_expect)");

# jitprof_reset() forgets them: PostgreSQL's levels again.
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
$enforce_run->('');
is($levels_of->($lose_id) . ' ' . $levels_of->($pays_id), 'all=3 jit=3 off=1 jit=0',
	'after jitprof_reset() enforce mode runs PostgreSQL\'s levels');

# ---------------------------------------------------------------------------
# A generic plan keeps its cached jitFlags: EXPLAIN EXECUTE shows the same
# JIT options before and after explored executions at "off", and the next
# execution at PostgreSQL's level still JITs.
# (EXPLAIN prints the JIT section only with COSTS on.)
my $generic = $node->safe_psql('postgres', q{
SET plan_cache_mode = force_generic_plan;
PREPARE g(float8) AS SELECT sum(a * b) FROM small WHERE a > $1;
EXPLAIN (VERBOSE) EXECUTE g(1);
SET jitprof.debug_advisor_level = 'off';
EXECUTE g(1); EXECUTE g(2); EXECUTE g(3);
RESET jitprof.debug_advisor_level;
EXPLAIN (VERBOSE) EXECUTE g(1);
EXECUTE g(4);
SELECT generic_plans FROM pg_prepared_statements WHERE name = 'g';
});
my @jit_options = $generic =~ /^\s*(Options: .*)$/mg;
is(scalar(@jit_options), 2, 'EXPLAIN EXECUTE shows the JIT options twice');
like($jit_options[0] // '', qr/Inlining true, Optimization true/, 'the generic plan JITs at all');
is($jit_options[1], $jit_options[0], 'the cached plan\'s jitFlags are unchanged after explored executions');
my ($generic_plans) = $generic =~ /(\d+)\s*$/;
cmp_ok($generic_plans, '>=', 4, 'the executions used the generic plan');
my ($g_id) = $generic =~ /Query Identifier: (-?\d+)/;
is($node->safe_psql('postgres', qq{
	SELECT string_agg(level || '=' || executions || ':' || pg_choice, ',' ORDER BY level)
	FROM jitprof_jit_levels WHERE queryid = $g_id}),
	'all=1:true,off=3:false',
	'three executions ran at off, the next one at the cached plan\'s level');

# ---------------------------------------------------------------------------
# A session's jit = off is never explored, whatever the fraction.
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
$node->safe_psql('postgres', "SET jit = off; SET jitprof.advisor_fraction = 1;\n"
	  . join('', map { "$lose;\n" } 1 .. 10));
is($node->safe_psql('postgres', qq{
	SELECT string_agg(level || '=' || executions, ',') FROM jitprof_jit_levels
	WHERE queryid = $lose_id}), 'off=10', 'with jit = off every execution ran at off');

# Out of scope (below jitprof.advisor_min_cost): not recorded.
$node->safe_psql('postgres', "SET jitprof.advisor_min_cost = 1e9; $lose; $lose;");
is(payoff($lose_id, 'executions'), '10',
	'statements below jitprof.advisor_min_cost are not recorded');

# ---------------------------------------------------------------------------
# jitprof.advisor_max_loss: a query PostgreSQL would not JIT, where every JIT
# level loses, explored at every execution.  With a budget of 0 the first
# explored execution that loses spends it, and exploring stops.
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
my $no_jit = "SET jit_above_cost = -1;\n";
$node->safe_psql('postgres', $no_jit . join('', map { "$lose;\n" } 1 .. 3)
	  . "SET jitprof.advisor_fraction = 1; SET jitprof.advisor_max_loss = 0;\n"
	  . join('', map { "$lose;\n" } 1 .. 10));
my ($explored, $loss, $loss_pct) = split /\|/, $node->safe_psql('postgres',
	'SELECT explored, explore_loss_ms > 0, explore_loss_pct FROM jitprof_advisor');
is($explored, '1', 'with jitprof.advisor_max_loss = 0 one explored execution spends the budget');
is($loss, 't', "and its loss is reported ($loss_pct% of the in-scope CPU)");
is(payoff($lose_id, 'explore_loss_ms > 0'), 't', 'also per query');
$node->safe_psql('postgres', $no_jit
	  . "SET jitprof.advisor_fraction = 1; SET jitprof.advisor_max_loss = 1;\n"
	  . join('', map { "$lose;\n" } 1 .. 6));
cmp_ok($node->safe_psql('postgres', 'SELECT explored FROM jitprof_advisor'), '>=', 5,
	'with a budget of the whole in-scope CPU, exploring goes on');

# ---------------------------------------------------------------------------
# A parallel query counts its workers' CPU time: the same query, serial and
# with two workers, costs about the same CPU in all (the leader alone does
# about a third of the scan).
$node->safe_psql('postgres', q{
CREATE TABLE p AS SELECT random() AS a, random() AS b FROM generate_series(1, 1500000);
VACUUM ANALYZE p;
});
my $parallel_sql = 'SELECT count(*) FROM p WHERE a * b + sqrt(a) * sqrt(b) > 0.8';
my $p_id = query_id($parallel_sql);
my $parallel_settings = "SET jit = off; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;\n"
  . "SET min_parallel_table_scan_size = 0;\n";
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
$node->safe_psql('postgres', $parallel_settings . "SET max_parallel_workers_per_gather = 0;\n"
	  . join('', map { "$parallel_sql;\n" } 1 .. 3));
my $serial = $node->safe_psql('postgres',
	"SELECT mean_cpu_ms FROM jitprof_jit_levels WHERE queryid = $p_id");
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
my $plan = $node->safe_psql('postgres', $parallel_settings
	  . "SET max_parallel_workers_per_gather = 2;\nEXPLAIN (ANALYZE, COSTS OFF) $parallel_sql");
like($plan, qr/Workers Launched: 2/, 'the query runs with two workers');
$node->safe_psql('postgres', $parallel_settings . "SET max_parallel_workers_per_gather = 2;\n"
	  . join('', map { "$parallel_sql;\n" } 1 .. 3));
my $with_workers = $node->safe_psql('postgres',
	"SELECT mean_cpu_ms FROM jitprof_jit_levels WHERE queryid = $p_id");
cmp_ok($with_workers, '>', 0.6 * $serial,
	"the workers' CPU time is counted ($with_workers ms with workers, $serial ms serial)");
cmp_ok($with_workers, '<', 3 * $serial, 'and counted once');

# ---------------------------------------------------------------------------
# Privacy: another role's rows show no query ID, as in jitprof_hotspots.
$node->safe_psql('postgres', q{
CREATE ROLE alice LOGIN; GRANT SELECT ON small TO alice;
CREATE ROLE reader LOGIN IN ROLE pg_read_all_stats;
});
$node->safe_psql('postgres', "SET ROLE alice; $lose;");
my $as_alice = $node->safe_psql('postgres', q{
SET ROLE alice;
SELECT count(*) FILTER (WHERE queryid IS NOT NULL AND userid = 'alice'::regrole),
       count(*) FILTER (WHERE queryid IS NULL AND userid <> 'alice'::regrole),
       count(*) FILTER (WHERE queryid IS NOT NULL AND userid <> 'alice'::regrole)
FROM jitprof_jit_payoff});
my ($own, $hidden, $shown) = split /\|/, $as_alice;
is($own, '1', 'a role sees its own query ID');
cmp_ok($hidden, '>', 0, 'other roles\' rows are listed without their query IDs');
is($shown, '0', 'no other role\'s query ID is shown');
is($node->safe_psql('postgres', 'SET ROLE alice; SELECT count(*) FROM jitprof_jit_levels WHERE queryid IS NOT NULL AND userid <> \'alice\'::regrole'),
	'0', 'the same in jitprof_jit_levels');
is($node->safe_psql('postgres', 'SET ROLE reader; SELECT count(*) FROM jitprof_jit_payoff WHERE queryid IS NULL'),
	'0', 'pg_read_all_stats sees every query ID');
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'SET ROLE alice; SET jitprof.jit_advisor = off');
like($stderr, qr/permission denied to set parameter "jitprof.jit_advisor"/,
	'only a superuser sets jitprof.jit_advisor');

# ---------------------------------------------------------------------------
# The table's cap, its counter and its size: a restart with room for 10
# queries.  The saved table of 15 queries (and the statements reading it)
# loses the ones with the fewest executions, with a LOG line; then 12
# distinct queries find room for 10.
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
$node->safe_psql('postgres', join('', map {
	'SELECT count(*) FROM small WHERE ' . join(' OR ', ('a > 0') x $_) . ";\n"
} 1 .. 15));
my $saved_entries = $node->safe_psql('postgres', 'SELECT entries FROM jitprof_advisor');
$node->append_conf('postgresql.conf', "jitprof.advisor_max_queries = 10\n");
my $offset = -s $node->logfile;
$node->restart;
like(slurp_file($node->logfile, $offset),
	qr/LOG:  dropped \d+ of (\d+) saved JIT advisor entries because jitprof.advisor_max_queries is 10/,
	"a smaller jitprof.advisor_max_queries: the saved table ($saved_entries entries and more) is cut, with a LOG line");
is($node->safe_psql('postgres', 'SELECT entries FROM jitprof_advisor'), '10', 'to 10 entries');
# (the reset out of scope, so that it takes no entry itself)
$node->safe_psql('postgres', 'SET jitprof.advisor_min_cost = 1e9; SELECT jitprof_reset()');
$node->safe_psql('postgres', join('', map {
	'SELECT count(*) FROM small WHERE ' . join(' AND ', ('a > 0') x $_) . ";\n"
} 1 .. 12));
my ($entries, $dropped, $entry_bytes, $shmem) = split /\|/, $node->safe_psql('postgres',
	'SELECT entries, dropped, entry_bytes, shmem_bytes FROM jitprof_advisor');
is($entries, '10', 'the table holds jitprof.advisor_max_queries queries');
is($dropped, '2', 'the executions of the others are counted as dropped');
my ($size, $all) = split /\|/, $node->safe_psql('postgres', q{
	SELECT (SELECT size FROM pg_shmem_allocations WHERE name = 'jitprof advisor'),
	       (SELECT sum(allocated_size) FROM pg_shmem_allocations WHERE name LIKE 'jitprof advisor%')});
cmp_ok($size, '>=', 10 * $entry_bytes, "\"jitprof advisor\" holds 10 entries of $entry_bytes bytes ($size bytes)");
cmp_ok($size, '<=', 10 * ($entry_bytes + 16) + 256, 'and an index of at most 16 bytes per entry more');
is($all, $shmem, 'jitprof_advisor.shmem_bytes is what its allocations take');

$node->stop;
done_testing();
