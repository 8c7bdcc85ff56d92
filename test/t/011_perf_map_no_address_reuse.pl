# No JIT code address is reused within a backend: after 10,000 separately
# JIT-compiled queries, every line of the backend's perf map has its own
# start address, so perf can always tell which name was live.  Memory stays
# bounded meanwhile: freed code pages are returned.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;
use JitprofPerf;

my $queries = 10_000;
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $node = jitprof_node('no_reuse');

# One statement per query, each JIT-compiled on its own (without inlining
# and optimization, to keep the run short).
my $script = "$tmp/many.sql";
open my $fh, '>', $script or die "$script: $!";
print $fh "\\o /dev/null\n";
print $fh "SET jit_inline_above_cost = -1;\nSET jit_optimize_above_cost = -1;\n";
print $fh "SET jitprof.perf_map_keep = on;\n";
print $fh "SELECT $_ + g FROM (VALUES (1)) v(g);\n" for 1 .. $queries;
print $fh "\\o\n";
print $fh "SELECT pg_backend_pid();\n";
print $fh "SELECT name, value FROM jitprof_status WHERE name IN ('objects_linked', 'objects_freed', 'code_pages_bytes');\n";
close $fh;

my ($out, $err) = ('', '');
$node->psql('postgres', undef, extra_params => [ '-f', $script ],
	stdout => \$out, stderr => \$err, on_error_stop => 1);
is($err, '', 'no errors or warnings over the run');
my ($pid, @status) = split /\n/, $out;
my %status = map { split /\|/ } @status;
cmp_ok($status{objects_linked}, '>=', $queries, "at least $queries objects linked");
cmp_ok($status{objects_linked} - $status{objects_freed}, '<=', 2,
	'code of finished queries was freed');
cmp_ok($status{code_pages_bytes}, '<', 1024 * 1024,
	'pages of freed code went back to the kernel');

ok(wait_for_pid_exit($pid), 'backend exited');
my $map = "/tmp/perf-$pid.map";
my @lines = split /\n/, slurp_file($map);
unlink $map;

cmp_ok(scalar(@lines), '>=', $queries, "map has a line per linked function");
is(scalar(grep { !/^[0-9a-f]+ [0-9a-f]+ q-?\d+(#\d+)?_\S+$/ } @lines), 0,
	'every line is START SIZE name');
my (%seen, @dups);
for (@lines)
{
	my $start = (split / /)[0];
	push @dups, $_ if $seen{$start}++;
}
is(scalar(@dups), 0, 'every line has a distinct start address')
  or diag("reused: @dups[0 .. ($#dups < 4 ? $#dups : 4)]");

# and no two ranges overlap
my @ranges = sort { $a->[0] <=> $b->[0] }
  map { my ($s, $l) = split / /; [ hex($s), hex($l) ] } @lines;
my $overlaps = 0;
for my $i (1 .. $#ranges)
{
	$overlaps++ if $ranges[ $i - 1 ][0] + $ranges[ $i - 1 ][1] > $ranges[$i][0];
}
is($overlaps, 0, 'no two functions share an address range');

$node->stop;
done_testing();
