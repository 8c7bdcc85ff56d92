# gdb's view of the JIT code list stays the list while the sampler runs:
# with jitprof.gdb on and the sampler at 1 kHz, a gdb attached to a backend
# through 150 JIT queries (each registers and unregisters its code) has no
# entry left afterwards and never meets an unregistration it cannot match.
# Before SIGPROF was blocked around __jit_debug_register_code, a sample
# arriving while gdb stepped over its breakpoint there made gdb read an
# event twice or miss one: 2 to 4 stale entries in one round of 150 on
# Debian 12 and 13, none with the sampler off.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('gdb_sampler', conf => "jitprof.sample_rate = 1000\n");
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $query = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 30000) g';
my $runs = 150;

my $psql = background_session($node, 'postgres');
$psql->query_safe('SET jitprof.gdb = on');
my $pid = $psql->query_safe('SELECT pg_backend_pid()');

# gdb stops once the loop is over: pg_backend_pid() called interpreted (JIT
# would inline it).
my $script = "$tmp/list.gdb";
open my $fh, '>', $script or die "could not write $script: $!";
print $fh gdb_prologue(), <<'EOF_GDB';
tbreak pg_backend_pid
echo @@READY\n
continue
echo @@ENTRIES\n
maint info jit
echo @@END\n
detach
EOF_GDB
close $fh;
my $out = "$tmp/gdb.out";
my $gdb = IPC::Run::start(
	[ 'timeout', $PostgreSQL::Test::Utils::timeout_default,
	  'gdb', '-nx', '-batch', '-x', $script, '-p', $pid ],
	'<', \undef, '>', $out, '2>&1');
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
sleep 1 until (-e $out && slurp_file($out) =~ /^\@\@READY$/m) || time() > $deadline;

my $same = 1;
for (1 .. $runs)
{
	$same = 0 if $psql->query_safe($query) ne '150015000';
}
ok($same, "$runs JIT queries with gdb attached gave the right answer");
$psql->query_safe('SET jit = off');
$psql->query_safe('SELECT pg_backend_pid()');
$gdb->finish;
my $text = slurp_file($out);
note "gdb output:\n$text";

like($text, qr/^\@\@END$/m, 'gdb stopped after the loop and ran its whole script');
my ($entries) = $text =~ /^\@\@ENTRIES\n(.*?)^\@\@END$/ms;
my @stale = ($entries // '') =~ /^0x[0-9a-f]+\s+0x[0-9a-f]+\s+\d+\s*$/mg;
is(scalar @stale, 0, 'gdb lists no JIT entry once every query\'s code is freed');
my @unmatched = $text =~ /^Unable to find JITed code entry/mg;
is(scalar @unmatched, 0, 'gdb matched every unregistration with a registration');
cmp_ok($psql->query_safe(q{SELECT value FROM jitprof_status WHERE name = 'gdb_objects_registered'}),
	'>=', $runs, "the session registered an object per query ($runs)");
cmp_ok($node->safe_psql('postgres', 'SELECT samples_taken FROM jitprof_sampler'), '>', 0,
	'the sampler took samples meanwhile');
$psql->quit;
$node->stop;
done_testing();
