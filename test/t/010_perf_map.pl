# The perf map sink: perf report shows jitprof's names for a JIT-heavy query
# with a real share of the samples, names are the same on every execution,
# the map is removed at exit with jitprof.perf_map_keep_files = 0 (018
# tests the maps kept by default) unless jitprof.perf_map_keep is on, a
# stale map of our own is
# truncated, and a symlink or directory planted at /tmp/perf-<pid>.map is
# never written through.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;
use JitprofPerf;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $node = jitprof_node('perf_map',
	conf => "jitprof.perf_map_keep_files = 0\n");
my $heavy = heavy_table($node, 1_000_000);
my $qid = query_id($node, $heavy);
my $small = 'SELECT sum(g) FROM generate_series(1, 100) g';

sub map_path { return "/tmp/perf-$_[0].map"; }

# A session that has not JIT-compiled anything yet, and its backend's pid.
sub fresh_session
{
	my $s = background_session($node, 'postgres', on_error_stop => 0);
	$s->query_safe('SET jit = off');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	clear_perf_map_path($pid);
	$s->query_safe('SET jit = on');
	return ($s, $pid);
}

sub map_lines
{
	my ($pid) = @_;
	return [ split /\n/, slurp_file(map_path($pid)) ];
}

# --- perf record / perf report on a backend running a JIT-heavy query ---
{
	my ($s, $pid) = fresh_session();
	$s->query_safe('SET jitprof.perf_map_keep = on');
	my $perf = perf_record_start($pid, "$tmp/perf.data", '-g');
	$s->query_safe($heavy) for 1 .. 3;
	$s->quit;
	ok(wait_for_pid_exit($pid), 'backend exited');
	perf_record_finish($perf);

	ok(-f map_path($pid), 'perf map kept after exit with jitprof.perf_map_keep = on');
	my @map = @{ map_lines($pid) };
	my %map_names = map { (split / /, $_, 3)[2] => 1 } @map;
	ok((grep { /^[0-9a-f]+ [0-9a-f]+ q\Q$qid\E#\d+_\w+$/ } @map) > 0,
		"map has lines START SIZE q$qid#...");

	my ($ok, $report) = perf_run('report', '-i', "$tmp/perf.data", '--stdio',
		'--no-children', '-g', 'none', '--sort', 'sym');
	ok($ok, 'perf report ran');
	my $shares = symbol_shares($report);
	my @ours = grep { /^q\Q$qid\E#/ } keys %$shares;
	my $total = 0;
	$total += $shares->{$_} for @ours;
	note "perf report shares of q$qid: "
	  . join(', ', map { "$_ $shares->{$_}%" } @ours);
	cmp_ok(scalar(@ours), '>', 0, "perf report shows symbols of q$qid");
	cmp_ok($total, '>=', 5, "q$qid symbols carry a real share of samples ($total%)");
	is_deeply([ grep { !$map_names{$_} } @ours ], [],
		'every reported symbol comes from the map');
	ok((grep { /#\d+_SeqScan_qual$/ } @ours) > 0,
		'the scan qual is among the hot symbols');

	# tools/perf-by-name.sh adds up the lines of one name (still useful for
	# code RuntimeDyld linked, which gets new addresses every time).
	my $by_name = '';
	IPC::Run::run([ ($ENV{JITPROF_SRC} // '.') . '/tools/perf-by-name.sh', '-' ],
		'<', \$report, '>', \$by_name)
	  or die "perf-by-name.sh failed";
	my ($qual) = grep { /#1_SeqScan_qual$/ } @ours;
	my @qual_lines = grep { /^\s*[\d.]+%\s+\Q$qual\E$/ } split /\n/, $by_name;
	is(scalar(@qual_lines), 1, 'perf-by-name.sh shows the scan qual once');
	my ($qual_pct) = ($qual_lines[0] // '') =~ /([\d.]+)%/;
	ok(defined $qual_pct && abs($qual_pct - $shares->{$qual}) < 0.02,
		"perf-by-name.sh sums all its copies ($shares->{$qual}%)");
	# The code arena gives every execution's copy the same addresses, so
	# perf report itself now has one line per name.
	my @report_lines = grep { /\[\.\]\s+\Q$qual\E\s*$/ } split /\n/, $report;
	is(scalar(@report_lines), 1,
		'perf report itself lists the three executions on one line');
	is(scalar(grep { /^[0-9a-f]+ [0-9a-f]+ \Q$qual\E$/ } @map), 1,
		'the map has one line for the scan qual over three executions');

	# perf record -g unwinds out of JIT code (it keeps its frame pointer):
	# samples in the scan qual have the executor's ExecScan as caller
	my $script;
	($ok, $script) = perf_run('script', '-i', "$tmp/perf.data");
	ok($ok, 'perf script ran');
	my ($in_qual, $from_scan) = (0, 0);
	# PostgreSQL 18 calls the qual from nodeSeqscan.c's static functions
	# (JitprofTest::seqscan_calls_execscan), which perf can only place in
	# the server's executable
	my ($caller, $caller_name) = seqscan_calls_execscan()
	  ? (qr/\bExecScan\+/, 'ExecScan')
	  : (qr{\s\(\S*/bin/postgres\)$}, "the server's executable");
	for my $sample (split /\n\n/, $script)
	{
		my @frames = grep { /^\s+[0-9a-f]+ / } split /\n/, $sample;
		next unless @frames && $frames[0] =~ /q\Q$qid\E#1_SeqScan_qual\+/;
		$in_qual++;
		$from_scan++ if @frames > 1 && $frames[1] =~ $caller;
	}
	note "$from_scan of $in_qual samples in the qual unwound to $caller_name";
	cmp_ok($in_qual, '>', 0, 'call-graph samples in the scan qual');
	cmp_ok($from_scan, '>=', $in_qual / 2,
		"call graphs unwind from JIT code into $caller_name");
	unlink map_path($pid);
}

# --- names and addresses of two executions of one query ---
{
	# The second execution gets the addresses of the first (same names, same
	# sizes), so it adds no line: the map names the same functions.
	my ($s, $pid) = fresh_session();
	$s->query_safe($heavy);
	my @first = @{ map_lines($pid) };
	$s->query_safe($heavy);
	my @map = @{ map_lines($pid) };
	my $n = @first;
	cmp_ok($n, '>', 0, 'map has lines');
	is_deeply(\@map, \@first, 'the second execution added no line: same names at the same addresses');
	my @names = map { (split / /, $_, 3)[2] } @map;
	my %distinct = map { $_ => 1 } @names;
	is(scalar(keys %distinct), $n, 'names unique within one execution');
	my %starts = map { (split / /, $_)[0] => 1 } @map;
	is(scalar(keys %starts), $n, 'no start address used twice');
	my $mode = (stat(map_path($pid)))[2] & 07777;
	is(sprintf('%o', $mode), '600', 'map readable by the server user only');

	# the map goes away with the backend by default
	$s->quit;
	ok(wait_for_pid_exit($pid), 'backend exited');
	ok(!-e map_path($pid), 'perf map removed at backend exit');
}

# --- a stale map of our own user is truncated ---
{
	my ($s, $pid) = fresh_session();
	append_to_file(map_path($pid), "dead0000 10 stale_line_$_\n") for 1 .. 50;
	# as jitprof leaves it (041 covers a map with a looser mode)
	chmod(0600, map_path($pid)) or die "chmod: $!";
	is($s->query_safe($small), '5050', 'query result with a stale map');
	my $content = slurp_file(map_path($pid));
	unlike($content, qr/stale_line/, 'stale lines are gone');
	like($content, qr/^[0-9a-f]+ [0-9a-f]+ q-?\d+#0_Agg_/m, 'new lines written');
	$s->quit;
	ok(wait_for_pid_exit($pid), 'backend exited');
	ok(!-e map_path($pid), 'truncated map removed at exit');
}

# --- a symlink at the map's path is never followed ---
{
	my ($s, $pid) = fresh_session();
	my $victim = "$tmp/victim";
	append_to_file($victim, "precious\n");
	symlink($victim, map_path($pid)) or die "symlink: $!";

	my ($out, $stderr_flag) = $s->query($small);
	is($out, '5050', 'query result with a hostile symlink');
	like($s->{stderr},
		qr/WARNING:  perf map file "\/tmp\/perf-$pid\.map" is a symbolic link/,
		'WARNING names the path and the problem');
	like($s->{stderr}, qr/HINT:  Remove "\/tmp\/perf-$pid\.map"/, 'hint says what to do');
	$s->{stderr} = '';
	($out) = $s->query($small);
	is($out, '5050', 'second query result');
	is($s->{stderr}, '', 'sink stays off: one WARNING per backend');
	is(slurp_file($victim), "precious\n", 'nothing written through the symlink');
	$s->quit;
	ok(wait_for_pid_exit($pid), 'backend exited');
	ok(-l map_path($pid), 'the symlink is left alone at exit');
	unlink map_path($pid);
}

# --- a directory at the map's path ---
{
	my ($s, $pid) = fresh_session();
	mkdir(map_path($pid)) or die "mkdir: $!";
	my ($out) = $s->query($small);
	is($out, '5050', 'query result with a directory at the map path');
	like($s->{stderr},
		qr/WARNING:  perf map file "\/tmp\/perf-$pid\.map" is not a regular file/,
		'WARNING for a non-regular file');
	$s->quit;
	ok(wait_for_pid_exit($pid), 'backend exited');
	rmdir map_path($pid);
}

# --- jitprof.perf_map = off writes nothing ---
{
	my ($s, $pid) = fresh_session();
	$s->query_safe('SET jitprof.perf_map = off');
	is($s->query_safe($small), '5050', 'query result with the sink off');
	ok(!-e map_path($pid), 'no map with jitprof.perf_map = off');
	$s->quit;
}

$node->stop;
done_testing();
