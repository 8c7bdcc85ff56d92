# The crash check of server logs.  tools/test.sh runs it over the log of
# every cluster a test run started; a TAP test that kills a server process
# on purpose declares it here first (JitprofTest::kill_backend).
#
# A log shows a crash when it has a line saying that a server process was
# terminated by a signal, or exited with a code the postmaster handles as a
# crash (2 or more), or a PANIC, or an assertion failure (TRAP).  The one
# exception is a death declared beforehand with expect_signal(): that PID,
# killed by that signal, in that log.  SIGSEGV, SIGABRT, SIGBUS, SIGILL and
# SIGFPE are a bug's signals and cannot be declared.
#
#   perl test/lib/JitprofCrashes.pm LOG...
#
# prints each offending line as "LOG:LINENO: LINE" and exits 1 if there is
# one (2 if a log cannot be read).  Plain Perl: tools/test.sh runs it
# without PostgreSQL's TAP modules.

package JitprofCrashes;

use strict;
use warnings;

use Config;
use Exporter 'import';

our @EXPORT_OK = qw(expect_signal crash_lines signal_number);

my %signo;
@signo{ split ' ', $Config{sig_name} } = split ' ', $Config{sig_num};
my %never = map { $signo{$_} => $_ } qw(SEGV ABRT BUS ILL FPE);

# The number of a signal given by name (KILL, SIGKILL) or number.
sub signal_number
{
	my ($sig) = @_;
	return $sig if $sig =~ /^\d+$/;
	(my $name = $sig) =~ s/^SIG//;
	die "unknown signal \"$sig\"" unless defined $signo{$name};
	return $signo{$name};
}

# Declare that PID is about to be killed with SIG (name or number), so that
# its death by that signal in LOGFILE is not a crash.  The declarations are
# the lines "PID SIGNO" of LOGFILE.signals.
sub expect_signal
{
	my ($logfile, $pid, $sig) = @_;
	my $signo = signal_number($sig);
	die "SIG$never{$signo} is a crash and cannot be declared" if $never{$signo};
	die "bad PID \"$pid\"" unless $pid =~ /^[1-9]\d*$/;
	open my $fh, '>>', "$logfile.signals"
	  or die "could not open \"$logfile.signals\": $!";
	print $fh "$pid $signo\n";
	close $fh or die "could not write \"$logfile.signals\": $!";
	return;
}

# The lines of LOGFILE that show a crash, each as "LINENO: LINE".
sub crash_lines
{
	my ($logfile) = @_;
	my %declared;
	if (open my $fh, '<', "$logfile.signals")
	{
		while (<$fh>)
		{
			$declared{"$1 $2"} = 1 if /^(\d+) (\d+)$/ && !$never{$2};
		}
	}
	open my $fh, '<', $logfile or die "could not open \"$logfile\": $!";
	my @bad;
	while (my $line = <$fh>)
	{
		chomp $line;
		my $crash;
		if ($line =~ /\(PID (\d+)\) was terminated by signal (\d+)/)
		{
			$crash = !$declared{"$1 $2"};
		}
		else
		{
			$crash =
				 $line =~ /terminated by (?:signal|exception)/
			  || $line =~ /\(PID \d+\) exited with exit code (?:[2-9]|\d\d+)\b/
			  || $line =~ /\bPANIC:  /
			  || $line =~ /(?:^|\s)TRAP: /;
		}
		push @bad, "$.: $line" if $crash;
	}
	return @bad;
}

sub main
{
	my @logs = @_;
	my $found = 0;
	for my $log (@logs)
	{
		my @bad = eval { crash_lines($log) };
		if ($@)
		{
			print "$log: $@";
			return 2;
		}
		print "$log:$_\n" for @bad;
		$found ||= @bad > 0;
	}
	return $found ? 1 : 0;
}

exit main(@ARGV) unless caller;

1;
