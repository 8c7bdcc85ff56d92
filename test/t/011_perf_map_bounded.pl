# The perf map grows with distinct functions, not executions: the code arena
# gives a function the addresses of an earlier copy of itself (same name,
# size and layout), and the sink writes a line only once.  The promise that
# replaces "no address is reused": no address ever goes to a function of
# another name while a map line for the old one stands, so no two lines of
# different names overlap.  Freed code pages still go back to the kernel, and
# the map stops at jitprof.perf_map_max_size with one WARNING and a counter.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;
use JitprofPerf;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $node = jitprof_node('map_bounded');
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a, g % 7 AS b, g::float8 AS c FROM generate_series(1, 200) g;
ANALYZE t;
});

sub status_rows
{
	my ($label) = @_;
	return "\\o\nSET jit = off;\nSELECT '$label', name, value FROM jitprof_status;\nSET jit = on;\n\\o /dev/null\n";
}

sub run_script
{
	my ($name, $body) = @_;
	my $script = "$tmp/$name.sql";
	open my $fh, '>', $script or die "$script: $!";
	print $fh "SET jit_inline_above_cost = -1;\nSET jit_optimize_above_cost = -1;\n";
	print $fh "SET jitprof.perf_map_keep = on;\n\\o /dev/null\n";
	print $fh $body;
	print $fh "\\o\nSET jit = off;\nSELECT 'pid', 'pid', pg_backend_pid();\n";
	close $fh;
	my ($out, $err) = ('', '');
	$node->psql('postgres', undef, extra_params => [ '-f', $script ],
		stdout => \$out, stderr => \$err, on_error_stop => 1);
	my %m;
	for (split /\n/, $out)
	{
		my ($label, $k, $v) = split /\|/, $_, 3;
		$m{$label}{$k} = $v;
	}
	return ($err, \%m);
}

sub read_map
{
	my ($pid) = @_;
	ok(wait_for_pid_exit($pid), "backend $pid exited");
	my $map = "/tmp/perf-$pid.map";
	my $text = slurp_file($map);
	unlink $map;
	return ($text, [ split /\n/, $text ]);
}

# no two lines share an address range unless they are the same line
sub check_lines
{
	my ($what, @lines) = @_;
	is(scalar(grep { !/^[0-9a-f]+ [0-9a-f]+ q-?\d+(#\d+)?_\S+$/ } @lines), 0,
		"$what: every line is START SIZE name");
	my %dup;
	is(scalar(grep { $dup{$_}++ } @lines), 0, "$what: no line written twice");
	my @r = sort { $a->[0] <=> $b->[0] }
	  map { my ($s, $l, $n) = split / /, $_, 3; [ hex($s), hex($l), $n ] } @lines;
	my @bad;
	for my $i (1 .. $#r)
	{
		push @bad, "$r[$i-1][2] / $r[$i][2]"
		  if $r[ $i - 1 ][0] + $r[ $i - 1 ][1] > $r[$i][0];
	}
	is(scalar(@bad), 0, "$what: no two lines of different names overlap")
	  or diag("overlapping: @bad[0 .. ($#bad < 4 ? $#bad : 4)]");
}

# --- 2,000 executions of one query (the status queries run without JIT) ---
my $q = 'SELECT b, count(*), sum(a) FROM t WHERE a % 3 <> 0 GROUP BY b';
my ($err, $m) = run_script('same', "$q;\n" . status_rows('one')
	  . ("$q;\n" x 1999) . status_rows('all'));
is($err, '', 'no errors or warnings over 2,000 executions');
my ($text, $lines) = read_map($m->{pid}{pid});
note("map after 1 execution: $m->{one}{perf_map_bytes} bytes, $m->{one}{perf_map_lines} lines; "
	  . "after 2,000: $m->{all}{perf_map_bytes} bytes, $m->{all}{perf_map_lines} lines; "
	  . "objects linked $m->{all}{objects_linked}, reused addresses $m->{all}{arena_objects_reused}");
cmp_ok($m->{one}{perf_map_lines}, '>', 0, 'the first execution wrote lines');
is($m->{all}{perf_map_bytes}, $m->{one}{perf_map_bytes},
	'2,000 executions leave the map at the size of one execution');
is(length($text), $m->{one}{perf_map_bytes}, 'the file has that size');
is(scalar(@$lines), $m->{one}{perf_map_lines}, 'and that many lines');
cmp_ok($m->{all}{objects_linked}, '>=', 2000, 'every execution was linked');
cmp_ok($m->{all}{arena_objects_reused}, '>=', 1999,
	'each later execution got the addresses of the first');
cmp_ok($m->{all}{objects_linked} - $m->{all}{objects_freed}, '<=', 2,
	'code of finished queries was freed');
cmp_ok($m->{all}{code_pages_bytes}, '<', 1024 * 1024,
	'pages of freed code went back to the kernel');
check_lines('one query', @$lines);

# --- a mix of different queries, interleaved, with different constants ---
my @kinds = (
	'SELECT sum(a) FROM t WHERE a > %d',
	'SELECT count(*) FROM t WHERE b = %d',
	'SELECT max(c) FROM t WHERE a %% 5 = %d %% 5',
	'SELECT b, sum(c) FROM t WHERE a < %d GROUP BY b',
	'SELECT a + %d FROM t WHERE b < 3 LIMIT 1',
	'SELECT avg(a) FILTER (WHERE b > 2) FROM t WHERE c <> %d',
	'SELECT %d + g FROM (VALUES (1)) v(g)',
	'SELECT min(a) FROM t WHERE b = %d %% 7 AND c > 1',
);
my $mix = '';
for my $i (1 .. 3000)
{
	$mix .= sprintf($kinds[ $i % @kinds ], $i) . ";\n";
}
($err, $m) = run_script('mix', $mix . status_rows('mix'));
is($err, '', 'no errors or warnings over 3,000 mixed queries');
($text, $lines) = read_map($m->{pid}{pid});
note("mixed: map $m->{mix}{perf_map_bytes} bytes, $m->{mix}{perf_map_lines} lines, "
	  . "$m->{mix}{objects_linked} objects, $m->{mix}{arena_objects_reused} reused");
cmp_ok(scalar(@$lines), '<', 200, 'eight kinds of query leave a small map');
is($m->{mix}{perf_map_conflicts}, 0, 'no line was refused for overlapping another name');
check_lines('mixed queries', @$lines);

# --- RuntimeDyld reuses addresses for other functions: the sink refuses
# a line that would overlap one of another name, so the file never
# contradicts itself (perf then names such code after the first function
# at its address: the perf map is for JITLink's code, see doc/linking.md) ---
($err, $m) = run_script('rtdyld', "SET jitprof.linker = rtdyld;\n" . $mix . status_rows('rtdyld'));
is($err, '', 'no errors or warnings over 3,000 mixed queries under RuntimeDyld');
($text, $lines) = read_map($m->{pid}{pid});
note("RuntimeDyld: map $m->{rtdyld}{perf_map_bytes} bytes, $m->{rtdyld}{perf_map_lines} lines, "
	  . "$m->{rtdyld}{perf_map_conflicts} lines refused");
is($m->{rtdyld}{linker}, 'rtdyld', 'linked by RuntimeDyld');
cmp_ok($m->{rtdyld}{perf_map_conflicts}, '>', 0, 'lines overlapping another name were refused');
check_lines('RuntimeDyld', @$lines);

# --- the cap ---
# 400 query IDs (a chain of 0 to 399 additions of constants, which the
# planner folds: distinct IDs, cheap code), 600 queries.
($err, $m) = run_script('cap', "SET jitprof.perf_map_max_size = '64kB';\n"
	  . join('', map { "SELECT count(*) FROM t WHERE a > $_ AND b < $_ % 7 + " . ('1 + ' x ($_ % 400)) . "0;\n" } 1 .. 600)
	  . status_rows('cap'));
my @warn = $err =~ /WARNING:  perf map "[^"]+" reached jitprof\.perf_map_max_size \(64 kB\)/g;
is(scalar(@warn), 1, 'one WARNING when the map reaches its cap');
($text, $lines) = read_map($m->{pid}{pid});
cmp_ok(length($text), '<=', 64 * 1024, 'the map stays under the cap');
is(length($text), $m->{cap}{perf_map_bytes}, 'perf_map_bytes is the file size');
cmp_ok($m->{cap}{perf_map_lines_dropped}, '>', 0, 'perf_map_lines_dropped counts what was left out');
check_lines('capped map', @$lines);

$node->stop;
done_testing();
