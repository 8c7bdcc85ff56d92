# The TPC-H-style statements of test/corpus/tpch.sql, for the benchmarks:
# tools/common.sh's corpus_statements prints them, and the Perl drivers
# (bench/emission.pl, bench/emission_sessions.pl) call tpch_statements.
package Corpus;

use strict;
use warnings;

# A list of { label => 'Qn...', sql => the statement on one line, without
# its semicolon }, in the file's order; statements without a "-- Qn" label
# are left out.  Labels are unique: a label met again gets "-2" (then "-3"),
# as the file has two Q5 and two Q19 (a variant of each), and the
# benchmarks group their readings by label.
sub tpch_statements
{
	my ($file) = @_;
	open my $fh, '<', $file or die "$file: $!";
	local $/;
	my $text = <$fh>;
	close $fh;
	my @statements;
	my %seen;
	for my $stmt (split /;\s*\n/, $text)
	{
		my ($label) = $stmt =~ /^-- (Q\d+[a-z-]*)/m;
		$stmt =~ s/^--.*\n//mg;
		$stmt =~ s/\s+/ /g;
		$stmt =~ s/^ | $//g;
		next unless $label && $stmt =~ /\S/;
		my $n = ++$seen{$label};
		$label .= "-$n" if $n > 1;
		push @statements, { label => $label, sql => $stmt };
	}
	return @statements;
}

1;
