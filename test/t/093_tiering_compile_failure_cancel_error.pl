# Tiered JIT's error paths (doc/tiering.md, "Errors"):
# - a compile that fails (jitprof.debug_fail_tiering) leaves the query
#   interpreted, with exactly one WARNING and the interpreter's result, and
#   counts one tiering_failures;
# - a cancel during a compile (jitprof.debug_tiering_wait holds the round
#   where it generates or emits its code): pg_cancel_backend and
#   statement_timeout cancel the query cleanly, no WARNING of a failed
#   compile, the backend stays healthy, its code is freed, the next query
#   (tiered too) is right;
# - an error after the switch (division by zero on a later row) ends the
#   query, and the JIT code is released: functions_live and code_bytes_live
#   go back to 0, every linked object is freed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use JitprofTest;

my $rows = 200000;
my $node = jitprof_node('tiering_errors');
$node->safe_psql('postgres', qq{
CREATE TABLE t AS SELECT g AS a, g % 97 AS b FROM generate_series(1, $rows) g;
ANALYZE t;
});

my $scan = 'SELECT sum(a * 2), count(*) FROM t WHERE b % 3 = 0';
my $expected = $node->safe_psql('postgres', "SET jit = off; $scan");
my $status = "SET jit = off; SELECT string_agg(name || '=' || value, ' ' ORDER BY name) FROM jitprof_status"
  . " WHERE name LIKE 'tiering%' OR name IN ('functions_live', 'code_bytes_live', 'objects_linked', 'objects_freed')";
my $tiered = "SET jit = on; SET jitprof.tiering = on; SET jitprof.tiering_threshold = 1000;";

sub parse_status
{
	my ($line) = @_;
	return { map { split /=/, $_, 2 } split / /, $line // '' };
}

# --- a compile that fails ---
my $session = background_session($node, 'postgres', on_error_stop => 0);
$session->query_safe($tiered);
my $s0 = parse_status($session->query_safe($status));
$session->query_safe('SET jitprof.debug_fail_tiering = on; SET jit = on');
my $got = $session->query("$scan");
my $warnings = $session->{stderr};
$session->{stderr} = '';
my $s1 = parse_status($session->query_safe($status));
is($got, $expected, 'failed compile: the interpreter\'s result');
is(scalar(my @w = ($warnings =~ /WARNING:  tiered JIT compilation failed, so the query goes on interpreted/g)), 1,
	'failed compile: exactly one WARNING');
like($warnings, qr/DETAIL:  failure of tiered compilation injected/, 'failed compile: the WARNING says why');
unlike($warnings, qr/ERROR/, 'failed compile: no ERROR');
is($s1->{tiering_failures} - $s0->{tiering_failures}, 1, 'failed compile: tiering_failures counts it');
is($s1->{tiering_switches} - $s0->{tiering_switches}, 0, 'failed compile: no switch counted');
is($s1->{objects_linked} - $s0->{objects_linked}, 0, 'failed compile: nothing linked');
$session->query_safe('SET jitprof.debug_fail_tiering = off; SET jit = on');
is($session->query_safe($scan), $expected, 'after a failed compile: the next query is right');
is($session->{stderr}, '', 'after a failed compile: the next query warns nothing');
$s0 = parse_status($session->query_safe($status));
is($s0->{tiering_switches} - $s1->{tiering_switches}, 1, 'after a failed compile: the next query switches');

# --- a cancel during a compile ---
my $pid = $session->query_safe('SELECT pg_backend_pid()');
for my $stage ('generate', 'emit')
{
	$session->{stderr} = '';
	$session->query_safe("$tiered SET jitprof.debug_tiering_wait = $stage");
	$s0 = parse_status($session->query_safe($status));
	$session->query_safe('SET jit = on');
	$session->query_until(qr/started/, "\\echo started\n$scan;\n");
	# the backend waits in the round (PgSleep)
	my $waiting = 0;
	for (1 .. 600)
	{
		$waiting = $node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_activity WHERE pid = $pid AND wait_event = 'PgSleep'");
		last if $waiting;
		select(undef, undef, undef, 0.1);
	}
	is($waiting, 1, "cancel while it ${stage}s: the backend waits inside the round");
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	my $next = $session->query("SET jitprof.debug_tiering_wait = off; $status");
	like($session->{stderr}, qr/ERROR:  canceling statement due to user request/,
		"cancel while it ${stage}s: the query is cancelled");
	unlike($session->{stderr}, qr/WARNING/, "cancel while it ${stage}s: not taken for a failed compile");
	$s1 = parse_status($next);
	is($s1->{functions_live}, 0, "cancel while it ${stage}s: no code left live");
	is($s1->{objects_linked} - $s1->{objects_freed}, 0, "cancel while it ${stage}s: every object freed");
	is($s1->{tiering_failures} - $s0->{tiering_failures}, 0, "cancel while it ${stage}s: no failure counted");
	$session->{stderr} = '';
	is($session->query_safe("SET jit = on; $scan"), $expected, "cancel while it ${stage}s: the next tiered query is right");
	is($session->{stderr}, '', "cancel while it ${stage}s: the next query warns nothing");
}

# statement_timeout reaches a compile too
$session->{stderr} = '';
$session->query_safe("$tiered SET jitprof.debug_tiering_wait = emit; SET statement_timeout = '1s'");
my $start = time;
$session->query("SET jit = on; $scan");
my $took = time - $start;
like($session->{stderr}, qr/ERROR:  canceling statement due to statement timeout/,
	'statement_timeout during a compile cancels the query');
unlike($session->{stderr}, qr/WARNING/, 'statement_timeout: not taken for a failed compile');
cmp_ok($took, '<', 30, "statement_timeout: the wait (a minute) was cut short (${took}s)");
$session->{stderr} = '';
$session->query_safe('RESET statement_timeout; SET jitprof.debug_tiering_wait = off');
$s1 = parse_status($session->query_safe($status));
is($s1->{functions_live}, 0, 'statement_timeout: no code left live');
is($session->query_safe("SET jit = on; $scan"), $expected, 'statement_timeout: the next tiered query is right');

# --- an error after the switch ---
$session->{stderr} = '';
$s0 = parse_status($session->query_safe($status));
# a = $rows / 2 divides by zero, long after the switch at evaluation 1001
$session->query("SET jit = on; SELECT sum(1 / (a - " . ($rows / 2) . ")) FROM t");
like($session->{stderr}, qr/ERROR:  division by zero/, 'error after the switch: the query\'s own error');
unlike($session->{stderr}, qr/WARNING/, 'error after the switch: not taken for a failed compile');
$session->{stderr} = '';
$s1 = parse_status($session->query_safe($status));
is($s1->{tiering_switches} - $s0->{tiering_switches}, 1, 'error after the switch: the switch had happened');
cmp_ok($s1->{objects_linked} - $s0->{objects_linked}, '>=', 1, 'error after the switch: code had been linked');
is($s1->{functions_live}, 0, 'error after the switch: functions_live back to 0');
is($s1->{code_bytes_live}, 0, 'error after the switch: code_bytes_live back to 0');
is($s1->{objects_linked} - $s1->{objects_freed}, 0, 'error after the switch: every object freed');
$session->{stderr} = '';
is($session->query_safe("SET jit = on; $scan"), $expected, 'error after the switch: the next query is right');

# the backend is the same one all along
is($session->query_safe('SELECT pg_backend_pid()'), $pid, 'the same backend served every query');
$session->quit;

ok(!grep(/server process .* (terminated|was terminated) by signal/, slurp_file($node->logfile)),
	'no backend crashed');
$node->stop;
done_testing();
