# jitprof.steps with the jitdump sink (issue 12, stages 2 and 4): the
# linker reads each object's DWARF line table into a step table per
# function, the jitdump sink writes it as a JIT_CODE_DEBUG_INFO record right
# before the function's JIT_CODE_LOAD, and real "perf record -k 1" +
# "perf inject --jit" + "perf annotate" interleave the step file's lines
# with the disassembly of a qual dominated by float8 multiplication.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# the opcode of float8mul's step on this server
my $call2 = strict_call2_step();
use JitprofPerf;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $node = jitprof_node('steps_perf');
$node->safe_psql('postgres', q{
CREATE TABLE f AS SELECT g::float8 AS a, (g % 10)::float8 AS b
  FROM generate_series(1, 2000000) g;
VACUUM ANALYZE f;
});
my $query = 'SELECT count(*) FROM f WHERE a * b * b * a * a * b > 1000.5';
my $qid = query_id($node, $query);

my $jd = "$tmp/jd";
mkdir $jd or die;
my $s = background_session($node, 'postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe("SET jitprof.steps = on; SET jitprof.perf_jitdump = on; "
	  . "SET jitprof.jitdump_dir = '$jd'; SET jitprof.perf_map = off");
my $perf = perf_record_start($pid, "$tmp/perf.data", '-k', '1');
$s->query_safe($query) for 1 .. 3;
my $status = $s->query_safe(
	"SELECT string_agg(name || '=' || value, ',') FROM jitprof_status WHERE name LIKE 'steps_%'");
$s->quit;
ok(wait_for_pid_exit($pid), 'backend exited');
perf_record_finish($perf);
my %st = map { split /=/, $_, 2 } split /,/, $status;
is($st{steps_functions_skipped}, '0', 'every function got debug information');
is($st{steps_tables_live}, '0', 'step tables freed with their code');
is($st{steps_table_bytes_live}, '0', 'and their bytes');

my ($dump) = glob("$jd/.debug/jit/jitprof-*/jit-$pid.dump");
ok(defined $dump, 'jitdump file written');
my ($steps_file) = glob("$jd/.debug/jit/jitprof-steps-*/steps-$pid.txt");
ok(defined $steps_file, 'step file written');
my @listing = split /\n/, slurp_file($steps_file);

# the records: every DEBUG_INFO (2) is followed by the LOAD (0) of its code
my ($header, $records) = jitdump_parse($dump);
my (@ids, %debug_of, $last_debug);
my $bad_entries = 0;
for my $r (@$records)
{
	push @ids, $r->{id};
	if ($r->{id} == 2)
	{
		for my $e (@{ $r->{entries} })
		{
			my ($addr, $line, undef, $name) = @$e;
			$bad_entries++ if $name ne $steps_file || $addr < $r->{code_addr} || $line < 0;
		}
		$bad_entries++ if $r->{entries_end} != $r->{pos} + $r->{size};
		$last_debug = {
			code_addr => $r->{code_addr},
			entries => [ map { [ $_->[0], $_->[1] ] } @{ $r->{entries} } ]
		};
	}
	elsif ($r->{id} == 0)
	{
		if ($last_debug)
		{
			$bad_entries++ if $last_debug->{code_addr} != $r->{code_addr};
			$debug_of{ $r->{name} } = $last_debug;
		}
		$last_debug = undef;
	}
}
is($header->{trailing}, 0, 'the records fill the dump exactly');
cmp_ok(scalar(grep { $_ == 2 } @ids), '>=', 1, 'JIT_CODE_DEBUG_INFO records written');
is($bad_entries, 0, 'each entry names the step file, lies in its function, precedes its load');
my $qual = "q$qid#1_SeqScan_qual";
ok($debug_of{$qual}, "the qual $qual has a line table");
my %lines_of_qual = map { $_->[1] => 1 } @{ $debug_of{$qual}{entries} // [] };
my @mul_lines = grep { ($listing[ $_ - 1 ] // '') =~ /\Q$call2\E float8mul$/ } keys %lines_of_qual;
cmp_ok(scalar(@mul_lines), '>=', 1, 'its table has float8mul step lines');

# perf inject + annotate
my ($ok) = perf_run('inject', '--jit', '-i', "$tmp/perf.data", '-o', "$tmp/jit.data");
ok($ok, 'perf inject --jit ran');
my $annotate;
# --asm-raw: Debian 13's perf 6.12 annotate crashes without it (test 012)
($ok, $annotate) = perf_run('annotate', '-i', "$tmp/jit.data", '--stdio', '--asm-raw', '-s', $qual);
ok($ok, 'perf annotate ran');
note $annotate;
like($annotate, qr/<\Q$qual\E>:/, 'annotate shows the qual');
like($annotate, qr/^\s*:\s+\d+\s+step \d+: \Q$call2\E float8mul$/m,
	'annotate interleaves the multiplication step line');
like($annotate, qr/^\s*:\s+\d+\s+step \d+: EEOP_SCAN_VAR [ab] \(attno [12]\)$/m,
	'and a column step line');
like($annotate, qr/step \d+: \Q$call2\E float8mul\n(?:\s*:.*\n)*\s+[\d.]+\s*:\s+[0-9a-f]+:\s+\w+/,
	'a step line is followed by its instructions');

$node->stop;
done_testing();
