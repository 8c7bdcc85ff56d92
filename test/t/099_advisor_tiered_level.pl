# The JIT advisor's tiered level (doc/jit_advisor.md, "Tiered JIT"):
#  - with jitprof.tiering on, a query the advisor follows runs tiered at its
#    own level ("tiered", pg_level), and tiering defers it; a forced eager
#    level is not deferred; a session's jit = off runs at off; a forced
#    switch point (jitprof.tiering_threshold) is not followed;
#  - explore mode draws the other levels against the tiered one, and never
#    tiered where tiering is off;
#  - the corpus at the tiered level, and a long scan that switches
#    mid-scan, give the interpreter's output;
#  - jitprof_jit_levels shows tiered next to off and an eager level, and
#    jitprof_jit_payoff compares them (tiered_vs_off_ms, tiered_vs_eager_ms,
#    tiered_verdict);
#  - parallel workers run at their leader's level, tiered or eager;
#  - enforce mode picks tiered where it measures best and runs the query
#    tiered; the level survives a restart (file format 2), and a file of
#    format 1 is removed with one LOG line.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# jitprof.conf forces eager JIT at "all" (every threshold 0); the advisor
# follows every top-level statement and explores only where a test asks.
my $node = jitprof_node('advisor_tiered', conf => q{
jitprof.jit_advisor = explore
jitprof.advisor_min_cost = 0
jitprof.advisor_fraction = 0
jitprof.advisor_max_loss = 1
});

sub query_id
{
	my ($sql) = @_;
	my $plan = $node->safe_psql('postgres', "EXPLAIN (VERBOSE, COSTS OFF) $sql");
	my ($qid) = $plan =~ /Query Identifier: (-?\d+)/;
	die "no query ID for $sql" unless defined $qid;
	return $qid;
}

# executions per level of one query, as "level:n level:n"
sub levels
{
	my ($qid) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT coalesce(string_agg(level || ':' || executions, ' ' ORDER BY level), '')
		FROM jitprof_jit_levels WHERE queryid = $qid});
}

sub payoff
{
	my ($qid, $cols) = @_;
	return $node->safe_psql('postgres',
		"SELECT $cols FROM jitprof_jit_payoff WHERE queryid = $qid");
}

# this backend's count of queries tiering deferred, read without JIT (so
# that reading it defers nothing), the session's settings left as they are
my $deferred = "BEGIN; SET LOCAL jit = off; SELECT value FROM jitprof_status WHERE name = 'tiering_queries'; COMMIT";
my @tiering = ('jitprof.tiering = on', 'jitprof.tiering_min_cost = 0');

# One session: SETTINGS, then SQL; returns the query's output and how many
# queries tiering deferred meanwhile.
sub run
{
	my ($settings, $sql) = @_;
	my ($out) = psql_lines($node, '', $settings, $deferred, $sql, $deferred);
	return ($out->[1], $out->[2] - $out->[0]);
}

$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a, g % 7 AS b FROM generate_series(1, 20000) g;
ANALYZE t;
});

# ---------------------------------------------------------------------------
# The level a query runs at, with tiering on and off.
my $q = 'SELECT sum(a * b), count(*) FROM t WHERE a + b > 10';
my $qid = query_id($q);
my ($ref) = run(['jit = off'], $q);
$node->safe_psql('postgres', 'SELECT jitprof_reset()');

my ($out, $n) = run(\@tiering, $q);
is($out, $ref, 'tiered by default: the interpreter\'s result');
is($n, 1, 'tiering deferred the query the advisor follows');
is(levels($qid), 'tiered:1', 'recorded at the tiered level');
is(payoff($qid, 'pg_level'), 'tiered', 'which is the query\'s own level with tiering on');

($out, $n) = run([@tiering, "jitprof.debug_advisor_level = 'jit'"], $q);
is($out, $ref, 'forced eager level: the interpreter\'s result');
is($n, 0, 'forced eager level: tiering does not defer the query');
is(levels($qid), 'jit:1 tiered:1', 'recorded at jit');

($out, $n) = run(['jit = off', @tiering], $q);
is($n, 0, 'jit = off: nothing deferred');
is(levels($qid), 'jit:1 off:1 tiered:1', 'jit = off: recorded at off');

($out, $n) = run([@tiering, 'jitprof.tiering_threshold = 0'], $q);
is($out, $ref, 'forced switch point: the interpreter\'s result');
is($n, 1, 'forced switch point: tiered');
is(levels($qid), 'jit:1 off:1 tiered:1', 'forced switch point: the advisor does not follow it');

($out, $n) = run(["jitprof.debug_advisor_level = 'tiered'"], $q);
is($n, 0, 'tiering off: the forced tiered level does not run');
is(levels($qid), 'all:1 jit:1 off:1 tiered:1', 'and the query runs at PostgreSQL\'s level');

# A plan under tiering's floor has no tiered level: the advisor runs it at
# PostgreSQL's level, compiled (tiering_plan.c would run it interpreted).
($out, $n) = run(['jitprof.tiering = on', 'jitprof.tiering_min_cost = 1e9'], $q);
is($n, 0, 'under the floor: nothing deferred');
is(levels($qid), 'all:2 jit:1 off:1 tiered:1', 'under the floor: recorded at PostgreSQL\'s level');

# ---------------------------------------------------------------------------
# Exploring: half the executions run at another level, drawn among the five
# eager ones; with tiering off, never at tiered.
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
psql_lines($node, '', [@tiering, 'jitprof.advisor_fraction = 0.5'], ($q) x 60);
my %at = map { split /:/ } split / /, levels($qid);
my $others = 0;
$others += $at{$_} // 0 for qw(off jit jit+opt jit+inline all);
note('explored with tiering on: ' . levels($qid));
cmp_ok($at{tiered} // 0, '>=', 10, "tiering on: $at{tiered} of 60 at the tiered level");
cmp_ok($others, '>=', 10, "and $others at the others");
cmp_ok(scalar(grep { ($at{$_} // 0) > 0 } qw(off jit jit+opt jit+inline all)), '>=', 3,
	'drawn among the eager levels and off');
is(payoff($qid, 'explored'), $others, 'explored counts the executions not at the tiered level');

$node->safe_psql('postgres', 'SELECT jitprof_reset()');
psql_lines($node, '', ['jitprof.advisor_fraction = 1'], ($q) x 30);
%at = map { split /:/ } split / /, levels($qid);
is($at{tiered}, undef, 'tiering off: never explored at tiered');

# ---------------------------------------------------------------------------
# Results never change: the corpus at the tiered level against the
# interpreter.
corpus_database($node);
my ($corpus_ref, $corpus_ref_err) = run_corpus($node, ['jit = off']);
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
my ($corpus_out, $corpus_err) = run_corpus($node,
	[@tiering, "jitprof.debug_advisor_level = 'tiered'"]);
ok($corpus_out eq $corpus_ref, 'the corpus at the tiered level: the interpreter\'s output');
my @ref_errors = $corpus_ref_err =~ /^(?:psql:\S+ )?ERROR:.*$/mg;
my @errors = $corpus_err =~ /^(?:psql:\S+ )?ERROR:.*$/mg;
is(scalar(@errors), scalar(@ref_errors), 'and the same errors');
my $tiered_runs = $node->safe_psql('postgres',
	"SELECT coalesce(sum(executions) FILTER (WHERE level = 'tiered'), 0) || ' ' || coalesce(sum(executions), 0)
	 FROM jitprof_jit_levels WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'corpus')");
my ($at_tiered, $all_runs) = split / /, $tiered_runs;
cmp_ok($at_tiered, '>', 50, "$at_tiered corpus executions at the tiered level");
is($at_tiered, $all_runs, 'all of them');

# ---------------------------------------------------------------------------
# A long scan where tiered beats both off (it switches early in the scan)
# and eager "all" (which also optimises and inlines 80 cold SubPlans, on a
# CASE branch no row takes, that tiered never compiles; in one aggregate,
# so that a row pays one test for them).
my $rows = 3000000;
$node->safe_psql('postgres', qq{
CREATE TABLE big AS SELECT (g % 1000)::int AS a FROM generate_series(1, $rows) g;
CREATE TABLE u AS SELECT g AS a, g % 13 AS c FROM generate_series(1, 1000) g;
ANALYZE big, u;
});
my $qual = join(' + ', ('a') x 121) . ' > 0';
my $cold = 'sum(CASE WHEN a < 0 THEN ' . join(' + ', map {
	"(SELECT max(u.c * $_ + u.a * u.c - u.a + $_) FROM u WHERE u.a = big.a AND u.c + $_ > 3)"
} 1 .. 80) . ' ELSE 0 END)';
my $long = "SELECT count(*), $cold FROM big WHERE $qual";
my $long_id = query_id($long);
my ($long_ref) = run(['jit = off'], $long);

# off, all and tiered alternate, 7 executions each (off has one more, the
# reference run), in one session that loads LLVM first
my @alternate = ('SELECT count(*) FROM t');
for (1 .. 7)
{
	for my $level (qw(off all tiered))
	{
		push @alternate, "SET jitprof.debug_advisor_level = '$level'", $long;
	}
}
my ($alt_out) = psql_lines($node, '', \@tiering, @alternate);
is(scalar(grep { $_ eq $long_ref } @$alt_out), 21,
	'the long scan at off, all and tiered: the interpreter\'s result each time');
my $lv = $node->safe_psql('postgres', qq{
	SELECT string_agg(format('%s: %s runs, %s ms (sd %s)', level, executions,
	  round(mean_cpu_ms::numeric, 1), round(stddev_cpu_ms::numeric, 1)), '; ' ORDER BY level)
	FROM jitprof_jit_levels WHERE queryid = $long_id});
note("long scan: $lv");
is(levels($long_id), 'all:7 off:8 tiered:7', 'jitprof_jit_levels: tiered next to off and all');
my ($vs_off, $vs_eager, $tverdict, $best, $verdict, $enforced) = split /\|/,
  payoff($long_id, 'tiered_vs_off_ms, tiered_vs_eager_ms, tiered_verdict, best_level, verdict, enforced_level');
note("payoff: tiered saves $vs_off ms against off, $vs_eager ms against all; $tverdict; best $best; $verdict");
cmp_ok($vs_off, '>', 0, "jitprof_jit_payoff: tiered saves $vs_off ms per execution against off");
cmp_ok($vs_eager, '>', 0, "and $vs_eager ms against the best eager level (all)");
is($tverdict, 'tiered pays', 'tiered_verdict: tiered pays');
is($best, 'tiered', 'best_level: tiered');
is($verdict, 'jit pays', 'verdict: jit pays (tiered is a JIT level)');
is($enforced, 'tiered', 'enforced_level: tiered');

# Enforce mode runs it tiered; in a session with tiering off, where it
# cannot, at PostgreSQL's level.
($out, $n) = run([@tiering, 'jitprof.jit_advisor = enforce'], $long);
is($out, $long_ref, 'enforce: the interpreter\'s result');
is($n, 1, 'enforce: the query runs tiered');
is(levels($long_id), 'all:7 off:8 tiered:8', 'enforce: recorded at tiered');
($out, $n) = run(['jitprof.jit_advisor = enforce'], $long);
is($n, 0, 'enforce with tiering off: not tiered');
is(levels($long_id), 'all:8 off:8 tiered:8', 'enforce with tiering off: at PostgreSQL\'s level');

# ---------------------------------------------------------------------------
# The saved table: the tiered level survives a restart (format 2).
$node->restart;
is(levels($long_id), 'all:8 off:8 tiered:8', 'after a restart: the tiered level is still there');
is(payoff($long_id, 'enforced_level'), 'tiered', 'and still enforced');

# A file of format 1 (five levels per entry) is removed, with one LOG line.
my $file = $node->data_dir . '/pg_stat/jitprof_advisor.stat';
$node->stop;
open(my $fh, '>:raw', $file) or die "could not write $file: $!";
print $fh pack('LLLLq', 0x4A504144, 1, 360, 5, 0);
close $fh;
my $log_offset = -s $node->logfile;
$node->start;
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/LOG:  ignoring JIT advisor file "pg_stat\/jitprof_advisor\.stat" because it is corrupt or was written by another version of jitprof\n.*DETAIL:  The file has format 1, written by an earlier version of jitprof, and this version reads format 2 only/,
	'a file of format 1: one LOG line saying so');
ok(!-e $file, 'and it is removed');
is($node->safe_psql('postgres', 'SELECT entries FROM jitprof_advisor'), '0', 'the advisor starts empty');

# ---------------------------------------------------------------------------
# Parallel workers run at their leader's level: at tiered, the leader and
# its two workers each scan about a million rows and switch (their rounds
# count in the leader's row of jitprof_queries); at an eager level none of
# them defers, so nothing switches.
my $par = "SELECT count(*) FROM big WHERE $qual";
my $par_id = query_id($par);
my ($par_ref) = run(['jit = off'], $par);
my @parallel = (@tiering, 'max_parallel_workers_per_gather = 2', 'parallel_setup_cost = 0',
	'parallel_tuple_cost = 0', 'min_parallel_table_scan_size = 0');
my $par_row = "BEGIN; SET LOCAL jit = off; SELECT coalesce(max(tiered_executions), 0) || '|' || coalesce(max(tiering_switches), 0)"
  . " FROM jitprof_queries WHERE queryid = $par_id; COMMIT";
$node->safe_psql('postgres', 'SET jit = off; SELECT jitprof_reset()');
my ($pr) = psql_lines($node, '', [@parallel, "jitprof.debug_advisor_level = 'jit'"], $par, $par_row);
is($pr->[0], $par_ref, 'parallel, eager level: the interpreter\'s result');
is($pr->[1], '0|0', 'parallel, eager level: neither the leader nor its workers tier');
($pr) = psql_lines($node, '', [@parallel, "jitprof.debug_advisor_level = 'tiered'"], $par, $par_row);
is($pr->[0], $par_ref, 'parallel, tiered level: the interpreter\'s result');
my ($par_tiered, $par_switches) = split /\|/, $pr->[1];
is($par_tiered, 1, 'parallel, tiered level: one tiered execution');
cmp_ok($par_switches, '>=', 2, "parallel, tiered level: the workers switch too ($par_switches switches)");
is(levels($par_id), 'jit:1 tiered:1', 'parallel: recorded at jit and tiered');

$node->stop;
done_testing();
