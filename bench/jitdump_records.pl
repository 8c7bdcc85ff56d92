#!/usr/bin/perl
# The records of jitdump files, by type: bench/llvm_plugins_check.sh.
#
#   perl bench/jitdump_records.pl FILE...
#
# Per file: its size, the number of records of each type, the bytes of
# unwinding and debug information records, and the first code load names.
use strict; use warnings;
my %type = (0 => 'code_load', 1 => 'code_move', 2 => 'debug_info', 3 => 'close', 4 => 'unwinding_info');
for my $f (@ARGV) {
	open my $fh, '<:raw', $f or die "$f: $!"; local $/; my $d = <$fh>;
	my ($magic, $ver, $hsize, $mach, $pad, $pid) = unpack('V6', $d);
	my $off = $hsize; my %n; my @names; my ($uw, $dbg) = (0, 0);
	while ($off + 16 <= length $d) {
		my ($id, $size) = unpack('V2', substr($d, $off, 8));
		last if $size < 16;
		$n{$type{$id} // $id}++;
		if ($id == 0) {
			my $name = unpack('Z*', substr($d, $off + 56, 512)); push @names, $name;
		} elsif ($id == 4) { $uw += $size } elsif ($id == 2) { $dbg += $size }
		$off += $size;
	}
	printf "%s: %d bytes, %s; unwinding %d bytes, debug %d bytes\n", $f, length $d,
	  join(', ', map { "$_ $n{$_}" } sort keys %n), $uw, $dbg;
	print "  names: @names[0 .. ($#names < 5 ? $#names : 5)]\n" if @names;
}
