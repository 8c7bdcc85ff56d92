# Helpers for jitprof's perf tests: run perf against one backend, read its
# reports, find query IDs.
#
# perf is run as the OS user running the tests, which is the server's user,
# so perf_event_paranoid = 2 still lets it profile the backend.  Only the
# cpu-clock event is used (hardware events are not available in VMs).

package JitprofPerf;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(query_id perf_record_start perf_record_finish perf_run
  symbol_shares wait_for_pid_exit heavy_table);

# The query ID EXPLAIN (VERBOSE) reports for $sql.
sub query_id
{
	my ($node, $sql) = @_;
	my $plan = $node->safe_psql('postgres', "EXPLAIN (VERBOSE) $sql");
	$plan =~ /Query Identifier: (-?\d+)/
	  or die "no query identifier in EXPLAIN output:\n$plan";
	return $1;
}

# A table whose scan with an arithmetic aggregate spends a large share of
# its time in JIT code.
sub heavy_table
{
	my ($node, $rows) = @_;
	$node->safe_psql('postgres', qq{
CREATE TABLE heavy AS
  SELECT g AS a, g % 1000 AS b FROM generate_series(1, $rows) g;
VACUUM ANALYZE heavy;
});
	return 'SELECT sum(a * 3 + b) FILTER (WHERE a % 7 <> 0), max(b - a), count(*) FROM heavy WHERE b > 10';
}

# Start "perf record" on one process in the background; returns a handle
# for perf_record_finish.  It stops by itself when the process exits.
sub perf_record_start
{
	my ($pid, $output, @extra) = @_;
	my %h = (stdout => '', stderr => '');
	$h{run} = IPC::Run::start(
		[ 'perf', 'record', '-e', 'cpu-clock', @extra, '-o', $output, '-p', $pid ],
		'<', \undef, '>', \$h{stdout}, '2>', \$h{stderr},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));

	# perf attaches asynchronously; give it a moment before the workload
	usleep(1_000_000);
	return \%h;
}

# Wait for perf record to end (its process has exited); returns its stderr.
sub perf_record_finish
{
	my ($h) = @_;
	$h->{run}->finish;
	note "perf record: $h->{stderr}";
	return $h->{stderr};
}

# Run a perf subcommand to completion; returns (exit ok, stdout, stderr).
sub perf_run
{
	my @cmd = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ 'perf', @cmd ], '<', \undef, '>', \$out,
		'2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	note "perf @cmd: exit $?\n$err";
	return ($ok, $out, $err);
}

# Percentages of "perf report --stdio" lines, summed per symbol name.
sub symbol_shares
{
	my ($report) = @_;
	my %share;
	for my $line (split /\n/, $report)
	{
		next unless $line =~ /^\s+([\d.]+)%\s+.*\[\.\]\s+(\S+)\s*$/;
		$share{$2} += $1;
	}
	return \%share;
}

# Wait until process $pid is gone (a backend exits shortly after psql).
sub wait_for_pid_exit
{
	my ($pid) = @_;
	for (my $i = 0; $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
	{
		return 1 unless kill(0, $pid);
		usleep(100_000);
	}
	return 0;
}

1;
