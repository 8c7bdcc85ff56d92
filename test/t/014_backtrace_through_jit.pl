# PostgreSQL's backtrace_functions gets through JIT frames: JITLink's code
# has its .eh_frame registered with the unwinder (LLVM's EH-frame plugin),
# as RuntimeDyld's has.  A division by zero inside a JIT-compiled qual,
# with backtrace_functions = 'int4div', logs a backtrace that goes from
# int4div through the JIT code down to PostgresMain and PostmasterMain,
# under both linkers.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('backtrace', conf => "backtrace_functions = 'int4div'\n");
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 1000) g;
ANALYZE t;
});

for my $linker ('jitlink', 'rtdyld')
{
	my $offset = -s $node->logfile;
	my ($ret, $out, $err) = $node->psql('postgres', qq{
SET jitprof.linker = $linker;
SET jit_inline_above_cost = -1;
SELECT count(*) FROM t WHERE 10 / (a - a) > 0;
SET jit = off;
SELECT value FROM jitprof_status WHERE name = 'linker';
}, on_error_stop => 0);
	like($err, qr/ERROR:  division by zero/, "$linker: the query fails with division by zero");
	like($out, qr/^\Q$linker\E$/m, "$linker: the JIT code was linked by $linker");

	my $log = substr(slurp_file($node->logfile), $offset);
	my ($bt) = $log =~ /ERROR:  division by zero\n.*?BACKTRACE:\s*\n((?:\t.*\n)+)/s;
	ok(defined $bt, "$linker: the server log has a backtrace for the error");
	$bt //= '';
	my @frames = grep { /\S/ } split /\n/, $bt;
	note("$linker backtrace (" . scalar(@frames) . " frames):\n$bt");
	# int4div is not an exported symbol: its frame shows as postgres(+0x...).
	# A JIT frame has no file at all: just [address].
	my ($jit) = grep { $frames[$_] =~ /^\s+\[0x[0-9a-f]+\]$/ } 0 .. $#frames;
	ok(defined $jit, "$linker: the backtrace has a JIT frame");
	$jit //= $#frames;
	my $below = join("\n", @frames[ $jit + 1 .. $#frames ]);
	if (seqscan_calls_execscan())
	{
		like($below, qr/ExecScan/, "$linker: it goes on past the JIT frame to its caller, ExecScan");
	}
	else
	{
		# the caller is nodeSeqscan.c's static function (after jitprof's
		# first-evaluation wrapper): an address in the server's executable,
		# before ExecutorRun
		like($below, qr/^\s+postgres: [^\n]*\(\+0x[0-9a-f]+\) \[0x[0-9a-f]+\]\n(?:[^\n]*\n)*?[^\n]*standard_ExecutorRun\+/m,
			"$linker: it goes on past the JIT frame to its caller in the server's executable, and on to standard_ExecutorRun");
	}
	like($below, qr/PostgresMain/, "$linker: and down to PostgresMain");
	like($below, qr/PostmasterMain/, "$linker: and to PostmasterMain");
}

$node->stop;
done_testing();
