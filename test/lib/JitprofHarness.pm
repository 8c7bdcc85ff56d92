# A TAP::Harness that also writes what prove decided about each test file,
# so that tools/test.sh counts results from the harness itself instead of
# reading prove's console output (whose layout changes with -v, -j and
# --timer, and which shows neither the wall time of a failed file nor
# skipped subtests).
#
#   make installcheck PROVE_FLAGS='--harness JitprofHarness'
#
# prove loads a harness from its own @INC, which its -I does not reach:
# the Makefile runs prove as "perl -I test/lib prove" for this.
#
# With JITPROF_TAP_SUMMARY=FILE set, each file that ran appends one line:
#
#   FILE <tab> passed|failed|skipped <tab> SECONDS <tab> TESTS <tab> SKIPPED
#     <tab> REASONS
#
# "skipped" is a file that skipped all its tests (plan skip_all), "failed"
# what prove counts as failed (a failed test, a bad plan, a non-zero exit
# status).  SECONDS is the wall time from starting the file to reading its
# last output, SKIPPED the number of its subtests that skipped ("ok N # skip")
# and REASONS their reasons (or the skip_all reason), joined with "; ".
# Without the variable it behaves as TAP::Harness.

package JitprofHarness;

use strict;
use warnings;

use parent 'TAP::Harness';
use Time::HiRes ();

sub new
{
	my ($class, @args) = @_;
	my $self = $class->SUPER::new(@args);
	my $summary = $ENV{JITPROF_TAP_SUMMARY};
	return $self unless $summary;

	my (%start, %skips);
	$self->callback(
		made_parser => sub {
			my ($parser, $job) = @_;
			my $file = $job->[0];
			$start{$file} = Time::HiRes::time();
			$skips{$file} = [];
			$parser->callback(
				test => sub {
					my ($result) = @_;
					push @{ $skips{$file} }, $result->explanation
					  if $result->has_skip;
				});
		});
	$self->callback(
		after_test => sub {
			my ($job, $parser) = @_;
			my $file = $job->[0];
			my $seconds = Time::HiRes::time() - ($start{$file} // Time::HiRes::time());
			my $result =
				$parser->skip_all ? 'skipped'
			  : $parser->has_problems ? 'failed'
			  : 'passed';
			my %seen;
			my @reasons = $parser->skip_all
			  ? ($parser->skip_all)
			  : grep { !$seen{$_}++ } map { $_ // '' } @{ $skips{$file} };
			s/[\t\n]/ /g for @reasons;
			open my $fh, '>>', $summary or die "could not open \"$summary\": $!";
			printf $fh "%s\t%s\t%.1f\t%d\t%d\t%s\n", $file, $result, $seconds,
			  scalar($parser->tests_run), scalar(@{ $skips{$file} }),
			  join('; ', @reasons);
			close $fh;
		});
	return $self;
}

1;
