# jitprof.llvm_plugins, the comparison aid that attaches LLVM's own ORC
# plugins beside jitprof's sinks (doc/perf.md).  On LLVM 19 and later:
# PerfSupportPlugin writes one jitdump file per backend (jitprof makes one
# plugin for llvmjit's two LLJITs) whose code loads carry llvmjit's names,
# next to jitprof's own dump with jitprof's names; DebugObjectManagerPlugin
# links and frees code without a WARNING or a crash.  On LLVM 14 the
# setting gives one WARNING per plugin and the query runs.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('llvm_plugins');
my $major = (split /\./, status_value($node, 'llvm_version'))[0];
my $small = 'SELECT sum(g) FROM generate_series(1, 100) g WHERE g > 0';

# the code load names of a jitdump file
sub code_load_names
{
	my ($file) = @_;
	my $d = slurp_file($file);
	my $off = (unpack('V3', $d))[2];
	my @names;
	while ($off + 16 <= length $d)
	{
		my ($id, $size) = unpack('V2', substr($d, $off, 8));
		last if $size < 16;
		push @names, unpack('Z*', substr($d, $off + 56, 256)) if $id == 0;
		$off += $size;
	}
	return @names;
}

if ($major < 19)
{
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET jitprof.llvm_plugins = perf_debugger; $small");
	is($ret, 0, "LLVM $major: psql succeeded");
	is($out, '5050', 'the query runs');
	like($err, qr/WARNING:  LLVM's PerfSupportPlugin could not be attached, JIT code is linked without it/,
		'a WARNING for the perf plugin');
	like($err, qr/WARNING:  LLVM's DebugObjectManagerPlugin could not be attached/,
		'and one for the debugger plugin');
	like($err, qr/DETAIL:  LLVM \S+ has no PerfSupportPlugin usable here: it needs LLVM 19 or later/,
		'saying why');
	is(scalar(() = $err =~ /WARNING/g), 2, 'one WARNING per plugin');
	$node->stop;
	done_testing();
	exit;
}

my $dir = PostgreSQL::Test::Utils::tempdir();
{
	local $ENV{JITDUMPDIR} = $dir;
	$node->restart;
}

my ($ret, $out, $err) = $node->psql('postgres',
	"SET jitprof.llvm_plugins = perf; SET jitprof.perf_jitdump = on; "
	  . "SET jitprof.jitdump_dir = '$dir'; "
	  . "SELECT pg_backend_pid(); $small; $small; SET jit_optimize_above_cost = -1; $small");
is($ret, 0, 'perf plugin: psql succeeded');
my ($pid, @sums) = split /\n/, $out;
is_deeply(\@sums, [ 5050, 5050, 5050 ], 'perf plugin: the queries run');
unlike($err, qr/WARNING/, 'perf plugin: no WARNING');

my @llvm = glob("$dir/.debug/jit/llvm-IR-jit-*/jit-$pid.dump");
is(scalar @llvm, 1, 'one LLVM jitdump file for the backend, for both of its LLJITs');
my @names = @llvm ? code_load_names($llvm[0]) : ();
cmp_ok(scalar @names, '>=', 3, 'LLVM wrote code loads for the three queries');
is(scalar(grep { !/^(evalexpr|deform)_\d+_\d+$/ } @names), 0,
	"LLVM's code loads carry llvmjit's names")
  or diag("names: @names");
my @jp = glob("$dir/.debug/jit/jitprof-*/jit-$pid.dump");
is(scalar @jp, 1, "jitprof's own dump beside it");
my @jp_names = @jp ? code_load_names($jp[0]) : ();
ok(@jp_names && !grep({ !/^q-?\d+#/ } @jp_names), "jitprof's code loads carry jitprof's names")
  or diag("names: @jp_names");

($ret, $out, $err) = $node->psql('postgres',
	"SET jitprof.llvm_plugins = debugger; $small; $small; "
	  . "SELECT value FROM jitprof_status WHERE name = 'objects_freed'");
is($ret, 0, 'debugger plugin: psql succeeded');
like($out, qr/^5050\n5050\n[1-9]\d*$/, 'debugger plugin: the queries run and their code is freed');
unlike($err, qr/WARNING/, 'debugger plugin: no WARNING');

$node->stop;
done_testing();
