# The TPC-H-style statements of test/corpus/tpch.sql, for the benchmarks:
# tools/common.sh's corpus_statements prints them, and the Perl drivers
# (bench/emission.pl, bench/emission_sessions.pl) call tpch_statements.
package Corpus;

use strict;
use warnings;

# A list of { label => 'Qn...', sql => the statement on one line, without
# its semicolon }, in the file's order; statements without a "-- Qn" label
# are left out.
sub tpch_statements
{
	my ($file) = @_;
	open my $fh, '<', $file or die "$file: $!";
	local $/;
	my $text = <$fh>;
	close $fh;
	my @statements;
	for my $stmt (split /;\s*\n/, $text)
	{
		my ($label) = $stmt =~ /^-- (Q\d+[a-z-]*)/m;
		$stmt =~ s/^--.*\n//mg;
		$stmt =~ s/\s+/ /g;
		$stmt =~ s/^ | $//g;
		next unless $label && $stmt =~ /\S/;
		push @statements, { label => $label, sql => $stmt };
	}
	return @statements;
}

1;
