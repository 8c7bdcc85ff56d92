# With jit_profiling_support = on and jitprof as the provider, jitprof's own
# jitdump sink writes the backend's jit-<pid>.dump.  LLVM's perf listener,
# which llvmjit would create too, is never constructed: its constructor
# alone creates an empty jit-<pid>.dump and marker under
# $JITDUMPDIR/.debug/jit/llvm-IR-jit-*/ in every such backend.  This holds
# with either linker.  (Test 006 checks that stock llvmjit, with jitprof
# merely preloaded, still gets LLVM's listener.)
use strict;
use warnings;

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $dumpdir = PostgreSQL::Test::Utils::tempdir;
local $ENV{JITDUMPDIR} = $dumpdir;

my $node = jitprof_node('profiling_support', conf => q{
jit_profiling_support = on
jit_debugging_support = on
});

my $query = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g';
my @pids;
for my $linker ('jitlink', 'rtdyld')
{
	is($node->safe_psql('postgres', qq{
SET jitprof.linker = $linker;
$query;
SELECT value FROM jitprof_status WHERE name = 'linker';
}), "16668333\n$linker", "a JIT query linked by $linker");
	push @pids, $node->safe_psql('postgres', "SET jitprof.linker = $linker; $query; SELECT pg_backend_pid()") =~ /(\d+)$/;
}

my (%dirs, %dumps);
find(sub {
	$dirs{$1}++ if -d $_ && /^(llvm-IR-jit|jitprof)-/;
	$dumps{$File::Find::name} = -s $_ if /^jit-\d+\.dump$/;
}, $dumpdir);
note("dump files: " . join(', ', map { "$_ ($dumps{$_} bytes)" } sort keys %dumps));

ok(!$dirs{'llvm-IR-jit'}, "LLVM's perf listener made no directory");
is((grep { m{/llvm-IR-jit-} } keys %dumps), 0, "LLVM's perf listener made no jit-<pid>.dump");
for my $pid (@pids)
{
	my ($dump) = grep { m{/jitprof-[^/]+/jit-$pid\.dump$} } keys %dumps;
	ok(defined $dump && $dumps{$dump} > 40, "backend $pid has jitprof's jitdump, with code-load records");
}
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no process crashed');

$node->stop;
done_testing();
