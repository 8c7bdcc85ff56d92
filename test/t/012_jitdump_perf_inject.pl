# The jitdump sink: a backend's jit-<pid>.dump follows the jitdump format,
# "perf record -k 1" + "perf inject --jit" turn it into symbolized
# jitted-*.so files, perf report shows jitprof's names from them (with the
# perf map off) and perf annotate disassembles them.  jit_profiling_support
# turns the sink on too; an unusable directory gets a WARNING, and one too
# long for the paths under it is refused by SET, or (from JITDUMPDIR) with
# a WARNING before anything is created.
use strict;
use warnings;

use File::Find;
use File::Path;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
use JitprofTest;
use JitprofPerf;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $node = jitprof_node('jitdump');
my $heavy = heavy_table($node, 1_000_000);
my $qid = query_id($node, $heavy);
my $small = 'SELECT sum(g) FROM generate_series(1, 100) g';

# The dump files under $dir/.debug/jit/jitprof-*/ of process $pid.
sub dumps_of
{
	my ($dir, $pid) = @_;
	return sort glob("$dir/.debug/jit/jitprof-*/jit-$pid.dump");
}

# --- perf record -k 1, perf inject --jit, perf report, perf annotate ---
my $jd = "$tmp/jd";
mkdir $jd or die;
my $s = background_session($node, 'postgres');
$s->query_safe('SET jit = off');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
clear_perf_map_path($pid);
$s->query_safe("SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$jd'; "
	  . "SET jitprof.perf_map = off; SET jit = on");
my $t0 = clock_gettime(CLOCK_MONOTONIC);
my $perf = perf_record_start($pid, "$tmp/perf.data", '-k', '1');
$s->query_safe($heavy) for 1 .. 3;

my @dumps = dumps_of($jd, $pid);
is(scalar(@dumps), 1, 'one dump file in <dir>/.debug/jit/jitprof-<date>-XXXXXX/');
like($dumps[0] // '', qr{/\.debug/jit/jitprof-\d{8}-\w{6}/jit-$pid\.dump$},
	'perf inject can find the dump: directory layout');
my $maps = slurp_file("/proc/$pid/maps");
like($maps, qr/^\S+ r-xp \S+ \S+ \S+\s+\Q$dumps[0]\E$/m,
	'dump file mapped PROT_READ|PROT_EXEC, the marker perf record sees');
ok(!-e "/tmp/perf-$pid.map", 'no perf map with jitprof.perf_map = off');

$s->quit;
ok(wait_for_pid_exit($pid), 'backend exited');
perf_record_finish($perf);
my $t1 = clock_gettime(CLOCK_MONOTONIC);

# the dump itself
my ($h, $records) = jitdump_parse($dumps[0]);
is(sprintf('0x%X', $h->{magic}), '0x4A695444', 'magic');
is($h->{version}, 1, 'version 1');
is($h->{total_size}, 40, 'header size');
is($h->{pid}, $pid, 'header pid');
my $ts_ok = $h->{timestamp} >= $t0 * 1e9 - 5e9 && $h->{timestamp} <= $t1 * 1e9;
ok($ts_ok, 'header timestamp is CLOCK_MONOTONIC');
is($h->{trailing}, 0, 'records fill the file exactly');
my @loads = grep { $_->{id} == 0 } @$records;
cmp_ok(scalar(@loads), '>=', 3, 'JIT_CODE_LOAD records');
is($records->[-1]{id} // -1, 3, 'JIT_CODE_CLOSE at the end');
is(scalar(grep { $_->{code_len} != $_->{code_size} || $_->{code_size} == 0 } @loads),
	0, 'every load record carries its code bytes');
is(scalar(grep { $_->{vma} != $_->{code_addr} || $_->{pid} != $pid } @loads),
	0, 'addresses and pid');
my %indexes = map { $_->{code_index} => 1 } @loads;
is(scalar(keys %indexes), scalar(@loads), 'code indexes unique');
my @ts = map { $_->{timestamp} } @$records;
is(scalar(grep { $ts[$_] < $ts[ $_ - 1 ] } 1 .. $#ts), 0, 'timestamps never go back');
ok((grep { $_->{name} =~ /^q\Q$qid\E#1_SeqScan_qual$/ } @loads) > 0,
	"loads carry jitprof names (q$qid#1_SeqScan_qual)");

my ($ok) = perf_run('inject', '--jit', '-i', "$tmp/perf.data", '-o', "$tmp/jit.data");
ok($ok, 'perf inject --jit ran');
my @so = glob(dirname_of($dumps[0]) . "/jitted-$pid-*.so");
cmp_ok(scalar(@so), '>', 0, 'perf inject wrote jitted-*.so files');

my $report;
($ok, $report) = perf_run('report', '-i', "$tmp/jit.data", '--stdio',
	'--sort', 'dso,sym');
ok($ok, 'perf report on the injected data ran');
my @jitted_lines = grep { /jitted-$pid-\d+\.so\s+\[\.\]\s+q\Q$qid\E#/ } split /\n/, $report;
cmp_ok(scalar(@jitted_lines), '>', 0, "perf report shows q$qid symbols from jitted-*.so");
my $shares = symbol_shares($report);
my $total = 0;
$total += $shares->{$_} for grep { /^q\Q$qid\E#/ } keys %$shares;
cmp_ok($total, '>=', 5, "q$qid symbols carry a real share of samples ($total%)");

my $hot = "q$qid#1_SeqScan_qual";
my $annotate;
# --asm-raw: Debian 13's perf 6.12 annotate crashes (SIGSEGV) without it,
# on postgres's own functions as on JIT code; the raw bytes come between
# an instruction's address and its mnemonic
($ok, $annotate) = perf_run('annotate', '-i', "$tmp/jit.data", '--stdio', '--asm-raw', '-s', $hot);
ok($ok, 'perf annotate ran');
like($annotate, qr/<\Q$hot\E>:/, 'annotate shows the function by name');
like($annotate, qr/:\s+[0-9a-f]+:\s+(?:[0-9a-f]{2} )*\s*(push|mov|lea|cmp|add|sub|test)\w*\s/,
	'annotate shows instructions');
like($annotate, qr/push\s+%rbp\s*\n.*mov\s+%rsp,%rbp/,
	'JIT code keeps a frame pointer') if $h->{elf_mach} == 62;

sub dirname_of { my ($p) = @_; $p =~ s{/[^/]+$}{}; return $p; }

# A new directory whose path is exactly $len bytes long: $base, then
# components of at most 200 bytes (NAME_MAX is 255), none empty.
sub long_dir
{
	my ($base, $len) = @_;
	my $dir = $base;
	die "$base is too long for $len bytes" if length($base) + 2 > $len;
	while (length($dir) < $len)
	{
		my $rem = $len - length($dir);
		my $n = $rem <= 201 ? $rem - 1 : ($rem == 202 ? 199 : 200);
		$dir .= '/' . ('d' x $n);
	}
	File::Path::make_path($dir);
	die "could not create $dir" unless -d $dir && length($dir) == $len;
	return $dir;
}

# A header of the server under test, for constants such as MAXPGPATH.
sub server_header
{
	my ($name) = @_;
	my $pg_config = $ENV{JITPROF_BUILD_PG_CONFIG} // 'pg_config';
	my ($inc) = run_command([ $pg_config, '--includedir-server' ]);
	chomp $inc;
	return "$inc/$name";
}

# --- stock jit_profiling_support = on turns the sink on ---
{
	my $sd = "$tmp/stock";
	mkdir $sd or die;
	local $ENV{PGOPTIONS} = "-c jit_profiling_support=on -c jitprof.jitdump_dir=$sd";
	my $out = $node->safe_psql('postgres', "$small; SELECT pg_backend_pid()");
	my ($sum, $spid) = split /\n/, $out;
	is($sum, '5050', 'query result with jit_profiling_support');
	ok(wait_for_pid_exit($spid), 'backend exited');
	my @sd = dumps_of($sd, $spid);
	is(scalar(@sd), 1, 'jit_profiling_support = on writes a jitprof dump');
	my ($sh, $srec) = @sd ? jitdump_parse($sd[0]) : ({}, []);
	ok((grep { $_->{id} == 0 && $_->{name} =~ /^q-?\d+#0_Agg_/ } @$srec) > 0,
		'with jitprof names');
}

# --- an unusable directory: WARNING naming it, queries go on ---
{
	my $file = "$tmp/not_a_dir";
	append_to_file($file, "x\n");
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$file'; $small; $small");
	is($out, "5050\n5050", 'query results with an unusable jitdump_dir');
	like($err, qr/WARNING:  could not create jitdump directory "\Q$file\E\/\.debug": Not a directory/,
		'WARNING names the directory');
	like($err, qr/HINT:  Set jitprof.jitdump_dir to a directory/, 'hint says what to set');
	is(scalar(() = $err =~ /WARNING/g), 1, 'one WARNING per backend');

	# a .debug that is a symlink is not followed
	my $evil = "$tmp/evil";
	mkdir $evil or die;
	mkdir "$tmp/elsewhere" or die;
	symlink("$tmp/elsewhere", "$evil/.debug") or die;
	($ret, $out, $err) = $node->psql('postgres',
		"SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$evil'; $small");
	is($out, '5050', 'query result with a symlinked .debug');
	like($err, qr/WARNING:  jitdump directory "\Q$evil\E\/\.debug" is not a directory/,
		'WARNING for a symlinked .debug');
	my @inside = glob("$tmp/elsewhere/*");
	is(scalar(@inside), 0, 'nothing created through the symlink');
}

# plain SET by an ordinary user is refused
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
my ($ret, $out, $err) = $node->psql('postgres', 'SET jitprof.perf_jitdump = on',
	extra_params => [ '-U', 'plain' ]);
like($err, qr/permission denied to set parameter "jitprof\.perf_jitdump"/,
	'jitprof.perf_jitdump is superuser-only');

# --- records only for new code; the cap ---
# The same query run 200 times in one backend: the code arena gives every
# execution the same addresses, and a JIT_CODE_LOAD is written only when
# the name or the code bytes at an address change.
{
	my $jd2 = "$tmp/jd2";
	mkdir $jd2 or die;
	my $q = 'SELECT sum(g) FROM generate_series(1, 100) g WHERE g % 3 = 0';
	my $out = $node->safe_psql('postgres',
		"SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$jd2'; SET jit_inline_above_cost = -1;
"
		  . "\\o /dev/null\n" . ("$q;\n" x 200) . "\\o\n"
		  . "SET jit = off; SELECT name || '=' || value FROM jitprof_status WHERE name LIKE 'jitdump%' OR name = 'functions_linked'");
	my %st = map { split /=/ } split /\n/, $out;
	my @d = glob("$jd2/.debug/jit/jitprof-*/jit-*.dump");
	my ($h, $records) = jitdump_parse($d[0]);
	my @loads = grep { $_->{id} == 0 } @$records;
	note("200 executions: $st{functions_linked} functions linked, " . scalar(@loads)
		  . " JIT_CODE_LOAD records, $st{jitdump_bytes} bytes");
	# code loads, and the unwinding records that precede them
	is(scalar(grep { $_->{id} == 0 || $_->{id} == 4 } @$records), $st{jitdump_records},
		'jitdump_records counts the records');
	cmp_ok(scalar(@loads), '<', $st{functions_linked} / 2, 'far fewer records than functions linked');
	my (%last, $same);
	for my $r (@loads)
	{
		my $k = "$r->{vma}/$r->{code_size}";
		$same++ if exists $last{$k} && $last{$k} eq "$r->{name}\0$r->{code}";
		$last{$k} = "$r->{name}\0$r->{code}";
	}
	is($same // 0, 0, 'no record repeats the code and name already loaded at its address');

	# distinct queries with a 64 kB cap (distinct query IDs from chains of
	# constant additions, which the planner folds into cheap code)
	my $jd3 = "$tmp/jd3";
	mkdir $jd3 or die;
	my ($ret, $o, $e) = $node->psql('postgres',
		"SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$jd3'; SET jitprof.jitdump_max_size = '64kB';\n"
		  . "\\o /dev/null\n"
		  . join('', map { "SELECT count(*) FROM generate_series(1, 10) g WHERE g > $_ AND g < " . ('1 + ' x $_) . "0;\n" } 1 .. 150)
		  . "\\o\nSET jit = off; SELECT value FROM jitprof_status WHERE name = 'jitdump_records_dropped'");
	is(scalar(() = $e =~ /WARNING:  jitdump file "[^"]+" reached jitprof\.jitdump_max_size \(64 kB\)/g), 1,
		'one WARNING when the jitdump file reaches its cap');
	cmp_ok($o, '>', 0, 'jitdump_records_dropped counts what was left out');
	my @d3 = glob("$jd3/.debug/jit/jitprof-*/jit-*.dump");
	cmp_ok(-s $d3[0], '<=', 64 * 1024 + 16, 'the file stays under the cap (plus JIT_CODE_CLOSE)');
}

# --- a jitprof.jitdump_dir too long for the paths under it ---
# Paths are at most MAXPGPATH - 1 bytes.  SET refuses a directory that
# leaves no room for the longest path jitprof makes under it, the step
# file's with a 10-digit PID; nothing is created then, not even .debug.
my ($maxpgpath) = slurp_file(server_header('pg_config_manual.h'))
  =~ /^#define MAXPGPATH\s+(\d+)/m;
my $longest = length('/.debug/jit/jitprof-steps-YYYYMMDD-XXXXXX/steps-2147483647.txt');
my $limit = $maxpgpath - 1 - $longest;
{
	note("MAXPGPATH $maxpgpath: jitprof.jitdump_dir at most $limit bytes");

	my $at = long_dir("$tmp/set_at", $limit);
	my $s = background_session($node, 'postgres');
	my $spid = $s->query_safe('SELECT pg_backend_pid()');
	my ($out) = $s->query("SET jitprof.perf_jitdump = on; SET jitprof.steps = on; "
		  . "SET jitprof.jitdump_dir = '$at'; $small");
	is($out, '5050', "a $limit-byte jitdump_dir: query result");
	is($s->{stderr}, '', 'no WARNING');
	my @d = dumps_of($at, $spid);
	is(scalar(@d), 1, "the dump is jit-<pid>.dump");
	is(scalar(() = glob("$at/.debug/jit/jitprof-steps-*/steps-$spid.txt")), 1,
		'the step file, the longest path, is steps-<pid>.txt');
	$s->quit;

	my $over = long_dir("$tmp/set_over", $limit + 1);
	my ($ret, $o, $err) = $node->psql('postgres', "SET jitprof.jitdump_dir = '$over'");
	like($err, qr/ERROR:  jitprof\.jitdump_dir is too long\n/,
		'one byte more: SET fails, naming the setting');
	like($err, qr/DETAIL:  It is ${\($limit + 1)} bytes long, and at most $limit bytes leave room for the files jitprof creates under it\./,
		'with the length and the limit');
	like($err, qr/HINT:  Set jitprof\.jitdump_dir to a shorter path\./, 'and what to do');
	ok(!-e "$over/.debug", 'nothing is created there');
}

# The default comes from JITDUMPDIR, which SET never sees: each backend
# checks the paths it builds under it, before creating anything.  A dump
# path of exactly MAXPGPATH - 1 bytes works; one byte more gets a WARNING
# naming the setting, no file and no .debug, and the query runs.  The
# directory's length depends on the backend's PID, which is known only once
# it runs, while JITDUMPDIR is fixed when the server starts: it is sized
# for the digits of the last PID seen, and once more if the backend's PID
# has a different number of digits (PIDs crossed a power of ten or wrapped).
{
	my $fixed = length('/.debug/jit/jitprof-YYYYMMDD-XXXXXX/jit-.dump');
	my $last_pid = $node->safe_psql('postgres', 'SELECT pg_backend_pid()');
	my $n = 0;

	for my $extra (0, 1)
	{
		my ($dir, $s, $bpid);
		for my $attempt (1, 2)
		{
			$n++;
			$dir = long_dir("$tmp/env$n",
				$maxpgpath - 1 - $fixed - length($last_pid) + $extra);
			local $ENV{JITDUMPDIR} = $dir;
			$node->restart;
			$s = background_session($node, 'postgres');
			$bpid = $s->query_safe('SELECT pg_backend_pid()');
			last if length($bpid) == length($last_pid);
			$last_pid = $bpid;
			$s->quit;
		}
		is(length($dir) + $fixed + length($bpid), $maxpgpath - 1 + $extra,
			"dump path of MAXPGPATH - 1 + $extra bytes");
		is($s->query_safe('SHOW jitprof.jitdump_dir'), $dir, 'the default is JITDUMPDIR');
		my ($out) = $s->query("SET jitprof.perf_jitdump = on; SET jitprof.steps = on; $small; $small");
		is($out, "5050\n5050", 'query results');
		my $err = $s->{stderr};
		$s->{stderr} = '';	# BackgroundPsql keeps it across queries
		my $failures = $s->query_safe("SET jit = off; SELECT value FROM jitprof_status WHERE name = 'steps_file_failures'");
		$s->quit;
		is($failures, 1, 'the step file (7 bytes longer) is refused and counted');
		is(scalar(() = glob("$dir/.debug/jit/jitprof-steps-*")), 0, 'no step file directory');
		if ($extra == 0)
		{
			is($err, '', 'no WARNING');
			my @d = glob("$dir/.debug/jit/jitprof-*/*");
			is(scalar(@d), 1, 'one file in the dump directory');
			like($d[0] // '', qr{/jit-$bpid\.dump$}, 'named jit-<pid>.dump, not cut short');
			is(length($d[0] // ''), $maxpgpath - 1, 'its path is MAXPGPATH - 1 bytes long');
		}
		else
		{
			like($err, qr/WARNING:  jitprof\.jitdump_dir is too long\n/,
				'one byte more: a WARNING naming the setting');
			like($err, qr/DETAIL:  It is ${\length($dir)} bytes long, and at most $limit bytes leave room for the files jitprof creates under it; jitdump output is off for this backend\./,
				'with the length and the limit');
			like($err, qr/HINT:  Set jitprof\.jitdump_dir to a shorter path\./, 'and what to do');
			is(scalar(() = $err =~ /WARNING/g), 1, 'one WARNING per backend');
			ok(!-e "$dir/.debug", 'nothing is created, not even .debug');
		}
		$last_pid = $bpid;
	}
}

$node->stop;
done_testing();
