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
  symbol_shares wait_for_pid_exit heavy_table jitdump_parse);

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

# Parse a jitdump file (tools/perf/Documentation/jitdump-specification.txt):
# its header fields, and its records, each with id, size, pos (offset in the
# file) and timestamp, and the fields of the record types jitprof writes:
#   JIT_CODE_LOAD (0): pid tid vma code_addr code_size code_index name,
#     code_len (bytes after the name) and code;
#   JIT_CODE_DEBUG_INFO (2): code_addr, entries ([addr, line, discrim,
#     file name] each) and entries_end (the offset after the last entry);
#   JIT_CODE_UNWINDING_INFO (4): unwinding_size hdr_size mapped_size, data.
# The header's "trailing" is the number of bytes after the last whole
# record.
sub jitdump_parse
{
	my ($file) = @_;
	my $data = slurp_file($file);
	my %h;
	@h{qw(magic version total_size elf_mach pad1 pid timestamp flags)} =
	  unpack('L6 Q2', $data);
	my @records;
	my $pos = $h{total_size};
	while ($pos + 16 <= length($data))
	{
		my ($id, $size, $ts) = unpack('L L Q', substr($data, $pos, 16));
		last if $size < 16 || $pos + $size > length($data);
		my %r = (id => $id, size => $size, pos => $pos, timestamp => $ts);
		if ($id == 0)
		{
			@r{qw(pid tid vma code_addr code_size code_index)} =
			  unpack('L2 Q4', substr($data, $pos + 16, 40));
			my $rest = substr($data, $pos + 56, $size - 56);
			($r{name}) = $rest =~ /^([^\0]*)\0/;
			$r{code_len} = length($rest) - length($r{name}) - 1;
			$r{code} = substr($rest, length($r{name}) + 1);
		}
		elsif ($id == 2)
		{
			my $n;
			($r{code_addr}, $n) = unpack('Q Q', substr($data, $pos + 16, 16));
			my $p = $pos + 32;
			my @entries;
			for (1 .. $n)
			{
				my ($addr, $line, $discrim) = unpack('Q l l', substr($data, $p, 16));
				my ($name) = substr($data, $p + 16) =~ /^([^\0]*)\0/;
				$p += 16 + length($name) + 1;
				push @entries, [ $addr, $line, $discrim, $name ];
			}
			$r{entries} = \@entries;
			$r{entries_end} = $p;
		}
		elsif ($id == 4)
		{
			@r{qw(unwinding_size hdr_size mapped_size)} =
			  unpack('Q3', substr($data, $pos + 16, 24));
			$r{data} = substr($data, $pos + 40, $size - 40);
		}
		push @records, \%r;
		$pos += $size;
	}
	$h{trailing} = length($data) - $pos;
	return (\%h, \@records);
}

1;
