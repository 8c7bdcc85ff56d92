# Helpers for the TAP tests that run jitprof under real monitoring programs
# (prometheus-postgres-exporter, prometheus, powa-collector): find a
# program (a missing one fails the test, it is never skipped), run one to
# its end for its output, start one in the background on loopback with its
# output in a file, stop it by its PID, wait for a condition with a
# deadline, fetch a URL, parse the Prometheus text format.

package JitprofMonitor;

use strict;
use warnings;

use Exporter 'import';
use HTTP::Tiny;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

our @EXPORT = qw(program free_port program_output start_program stop_program
  wait_for http_get parse_metrics);

# Absolute path of a program, or BAIL_OUT naming the package to install.
sub program
{
	my ($name, $package) = @_;
	for my $dir (split /:/, "$ENV{PATH}:/usr/bin:/usr/sbin")
	{
		return "$dir/$name" if -x "$dir/$name";
	}
	BAIL_OUT("$name is not installed: run tools/deps.sh (Debian package $package)");
}

# A TCP port free on 127.0.0.1, reserved like the clusters' ports.
sub free_port
{
	return PostgreSQL::Test::Cluster::get_free_port();
}

# Run a program to its end and return its standard output, then its
# standard error (the exporter prints --version there); if it fails, die
# with both (failing this test file only).
sub program_output
{
	my ($cmd, %env) = @_;
	local %ENV = (%ENV, %env);
	my ($out, $err) = ('', '');
	IPC::Run::run($cmd, '<', \undef, '>', \$out, '2>', \$err)
	  or die("@$cmd failed (exit status " . ($? >> 8) . "): $out$err");
	return $out . $err;
}

# Start a program in the background; its stdout and stderr go to $log.
# Returns the IPC::Run handle (its PID is $h->{KIDS}[0]{PID}).
sub start_program
{
	my ($cmd, $log, %env) = @_;
	local %ENV = (%ENV, %env);
	note("starting: @$cmd");
	my $h = IPC::Run::start($cmd, '<', \undef, '>', $log, '2>&1');
	return $h;
}

# Stop what start_program started: SIGTERM to its PID, then SIGKILL if it
# has not exited within 10 seconds.
sub stop_program
{
	my ($h) = @_;
	return unless $h && $h->pumpable;
	my $pid = $h->{KIDS}[0]{PID};
	kill 'TERM', $pid;
	my $deadline = time() + 10;
	while (time() < $deadline)
	{
		return $h->finish if waitpid($pid, 1) == $pid || !kill(0, $pid);
		usleep(100_000);
	}
	kill 'KILL', $pid;
	eval { $h->finish };
	return;
}

# Call $cond until it returns true or $seconds pass; returns its last value.
sub wait_for
{
	my ($seconds, $cond) = @_;
	my $deadline = time() + $seconds;
	my $v;
	while (1)
	{
		$v = $cond->();
		return $v if $v || time() >= $deadline;
		usleep(200_000);
	}
}

# Body of a GET, or undef if the request failed.
sub http_get
{
	my ($url) = @_;
	my $r = HTTP::Tiny->new(timeout => 10)->get($url);
	return $r->{success} ? $r->{content} : undef;
}

# Samples of the Prometheus text format, as [ name, { label => value }, value ].
sub parse_metrics
{
	my ($text) = @_;
	my @samples;
	for my $line (split /\n/, $text)
	{
		next if $line =~ /^#/ || $line !~ /\S/;
		my ($name, $labels, $value) =
		  $line =~ /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/
		  or next;
		my %l;
		while (($labels // '') =~ /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)
		{
			$l{$1} = $2;
		}
		push @samples, [ $name, \%l, $value ];
	}
	return @samples;
}

1;
