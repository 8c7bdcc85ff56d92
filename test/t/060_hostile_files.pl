# Files jitprof opens or writes, in a hostile or broken state: each gets a
# clear WARNING and a safe outcome, never a hang and never an error in a
# user's query (issue 10, case 6).
#
# - a FIFO at pg_stat/jitprof.stat (or at its .tmp) does not hang start-up
#   or shutdown;
# - a header announcing more entries than the file holds is refused before
#   anything is allocated;
# - the JIT advisor's pg_stat/jitprof_advisor.stat with a wrong checksum,
#   a header announcing more entries than it holds, or a FIFO in its place:
#   one LOG line, the file removed, an empty advisor and a server that runs;
# - a perf map of the server's user with mode 0666 is reset to 0600;
# - world-writable .debug and .debug/jit directories without the sticky bit
#   are refused, and nothing is written into them; with the sticky bit they
#   are accepted.
use strict;
use warnings;

use Fcntl ':mode';
use POSIX qw(mkfifo);
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;
use JitprofPerf;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $node = jitprof_node('hostile');
my $file = $node->data_dir . '/pg_stat/jitprof.stat';
my $small = 'SELECT sum(g) FROM generate_series(1, 100) g';

# --- a FIFO in place of the statistics file ---
$node->stop;
unlink $file;
mkfifo($file, 0600) or die "mkfifo: $!";
my $offset = -s $node->logfile;
my $t0 = time;
{
	local $ENV{PGCTLTIMEOUT} = 60;
	ok($node->start(fail_ok => 1), 'the server starts with a FIFO as its statistics file');
}
cmp_ok(time - $t0, '<', 30, 'without waiting on the FIFO');
my $log = slurp_file($node->logfile, $offset);
like($log,
	qr/WARNING:  ignoring jitprof statistics file "pg_stat\/jitprof\.stat" because it is not a regular file/,
	'a WARNING names the file');
like($log, qr/HINT:  Remove "pg_stat\/jitprof\.stat"/, 'and says what to do');
is($node->safe_psql('postgres', $small), '5050', 'queries run');
is($node->safe_psql('postgres', 'SELECT entries > 0 FROM jitprof_sampler'), 't',
	'the store starts empty and collects');

# a FIFO at the temporary file's path does not hang shutdown either
mkfifo("$file.tmp", 0600) or die "mkfifo: $!";
$t0 = time;
$node->stop;
cmp_ok(time - $t0, '<', 30, 'shutdown does not wait on a FIFO at jitprof.stat.tmp');
ok(-f $file && !-p $file, 'a regular statistics file replaced the FIFO');
ok(!-e "$file.tmp", 'and no temporary file is left');

# --- a header whose entry count does not match the file's size ---
my $saved = slurp_file($file);
my ($magic, $version, $entry_size, $max_symbol, $nentries) =
  unpack('L4 q', $saved);
cmp_ok($nentries, '>', 0, 'the saved file has entries');
for my $lie (100_000_000, 2**40, -1)
{
	my $bad = pack('L4 q', $magic, $version, $entry_size, $max_symbol, $lie)
	  . substr($saved, 24);
	open my $fh, '>:raw', $file or die;
	print $fh $bad;
	close $fh;
	$offset = -s $node->logfile;
	$node->start;
	$log = slurp_file($node->logfile, $offset);
	like($log,
		qr/WARNING:  ignoring jitprof statistics file "pg_stat\/jitprof\.stat" because it is corrupt/,
		"a header announcing $lie entries is refused");
	like($log,
		qr/DETAIL:  The file is \d+ bytes long, which does not match the \Q$lie\E entries its header announces\./,
		'with the sizes in the detail');
	unlike($log, qr/out of memory/, 'nothing was allocated from the header');
	ok(!-e $file, 'the file is removed');
	$node->stop;
}

# --- the JIT advisor's file: corrupt, lying, or a FIFO ---
my $adv_file = $node->data_dir . '/pg_stat/jitprof_advisor.stat';
$node->start;
my $advised = "SET jitprof.jit_advisor = explore; SET jitprof.advisor_min_cost = 0;\n"
  . "$small;\nSELECT count(*) FROM pg_class;\n";
my $adv_entries = 'SELECT entries FROM jitprof_advisor';
sub advisor_start
{
	my ($what, $bytes) = @_;
	$node->stop;
	unlink $adv_file;
	if (ref $bytes)
	{
		$bytes->();
	}
	else
	{
		open my $fh, '>:raw', $adv_file or die;
		print $fh $bytes;
		close $fh;
	}
	my $offset = -s $node->logfile;
	my $t0 = time;
	{
		local $ENV{PGCTLTIMEOUT} = 60;
		ok($node->start(fail_ok => 1), "the server starts with $what");
	}
	cmp_ok(time - $t0, '<', 30, 'without waiting');
	return slurp_file($node->logfile, $offset);
}
$node->safe_psql('postgres', $advised);
$node->stop;
my $adv_saved = slurp_file($adv_file);
my ($adv_magic, $adv_version, $adv_entry_size, $adv_levels, $adv_n) = unpack('L4 q', $adv_saved);
cmp_ok($adv_n, '>=', 2, "the advisor's saved file has its entries ($adv_n)");
is(length($adv_saved), 24 + 56 + $adv_n * $adv_entry_size + 4, 'and the size its header says');
$node->start;
cmp_ok($node->safe_psql('postgres', $adv_entries), '>=', $adv_n, 'which load at start');

my $flipped = $adv_saved;
substr($flipped, 24 + 56 + 40, 1) = chr(ord(substr($flipped, 24 + 56 + 40, 1)) ^ 0x55);
$log = advisor_start('a JIT advisor file with a wrong checksum', $flipped);
like($log,
	qr/LOG:  ignoring JIT advisor file "pg_stat\/jitprof_advisor\.stat" because it is corrupt.*\n.*DETAIL:  The file's checksum does not match its contents/,
	'a LOG line names the file and says why');
ok(!-e $adv_file, 'the file is removed');
is($node->safe_psql('postgres', $adv_entries), '0', 'the advisor starts empty');
$node->safe_psql('postgres', $advised);

$log = advisor_start('a JIT advisor file announcing 2^40 entries',
	pack('L4 q', $adv_magic, $adv_version, $adv_entry_size, $adv_levels, 2**40) . substr($adv_saved, 24));
like($log,
	qr/LOG:  ignoring JIT advisor file .*\n.*DETAIL:  The file's size does not match the number of entries its header announces/,
	'a header announcing more entries than the file holds is refused');
unlike($log, qr/out of memory/, 'before anything is allocated');
is($node->safe_psql('postgres', $adv_entries), '0', 'the advisor starts empty');

$log = advisor_start('a FIFO as its JIT advisor file',
	sub { mkfifo($adv_file, 0600) or die "mkfifo: $!"; });
like($log,
	qr/LOG:  ignoring JIT advisor file "pg_stat\/jitprof_advisor\.stat" because it is not a regular file/,
	'a FIFO is refused with a LOG line');
is($node->safe_psql('postgres', $small), '5050', 'queries run');
$node->safe_psql('postgres', $advised);
$node->stop;
ok(-f $adv_file && !-p $adv_file, 'the next shutdown replaced the FIFO with a regular file');

# --- a perf map of our own user with mode 0666 ---
$node->start;
{
	my $s = background_session($node, 'postgres', on_error_stop => 0);
	$s->query_safe('SET jit = off');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	clear_perf_map_path($pid);
	$s->query_safe('SET jit = on');
	my $map = "/tmp/perf-$pid.map";
	append_to_file($map, "dead beef stale_line\n");
	chmod(0666, $map) or die "chmod: $!";
	is(S_IMODE((stat $map)[2]), 0666, 'a leftover map with mode 0666');

	my ($out) = $s->query($small);
	is($out, '5050', 'query result with a world-writable map');
	like($s->{stderr},
		qr/WARNING:  permissions of perf map file "\/tmp\/perf-$pid\.map" were reset to 0600/,
		'a WARNING says the mode was reset');
	like($s->{stderr}, qr/DETAIL:  .*had mode 0666/, 'and what it was');
	is(S_IMODE((stat $map)[2]), 0600, 'the map is private again');
	my $lines = slurp_file($map);
	unlike($lines, qr/stale_line/, 'the stale content is gone');
	like($lines, qr/^[0-9a-f]+ [0-9a-f]+ q-?\d+#/m, 'and the map has our lines');
	$s->{stderr} = '';
	($out) = $s->query($small);
	is($s->{stderr}, '', 'one WARNING only');
	$s->quit;
	ok(wait_for_pid_exit($pid), 'backend exited');
	ok(!-e $map, 'the map is removed at exit');
}

# --- world-writable .debug and .debug/jit without the sticky bit ---
sub jitdump_run
{
	my ($dir) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$dir'; $small; $small");
	return ($out, $err);
}

for my $case ([ '.debug', 0777 ], [ '.debug/jit', 0777 ], [ '.debug', 0770 ])
{
	my ($sub, $mode) = @$case;
	my $dir = "$tmp/ww" . int(rand(1e9));
	mkdir $dir or die;
	mkdir "$dir/.debug" or die;
	mkdir "$dir/.debug/jit" or die;
	chmod($mode, "$dir/$sub") or die;
	my ($out, $err) = jitdump_run($dir);
	is($out, "5050\n5050", sprintf('query results with %s of mode %04o', $sub, $mode));
	like($err,
		qr/WARNING:  jitdump directory "\Q$dir\/$sub\E" is writable by other users and has no sticky bit/,
		'a WARNING names the directory');
	like($err, qr/HINT:  Run "chmod go-w \Q$dir\/$sub\E" or "chmod \+t/, 'the hint gives the fix');
	is(scalar(() = $err =~ /WARNING/g), 1, 'one WARNING per backend');
	is(scalar(glob("$dir/.debug/jit/*")), undef, 'nothing is written there');
}

{
	my $dir = "$tmp/sticky";
	mkdir $dir or die;
	mkdir "$dir/.debug" or die;
	chmod(01777, "$dir/.debug") or die;
	my ($out, $err) = jitdump_run($dir);
	is($out, "5050\n5050", 'query results with a sticky world-writable .debug');
	is($err, '', 'no WARNING when the sticky bit is set');
	my @dumps = glob("$dir/.debug/jit/jitprof-*/jit-*.dump");
	is(scalar(@dumps), 1, 'and the dump is written');
}

$node->stop;
done_testing();
