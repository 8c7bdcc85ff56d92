# A server started under "ulimit -v" with room for its shared buffers and
# for stock llvmjit, but not for the 4 GiB per backend jitprof used to
# reserve, answers JIT queries correctly: the code arena reserves address
# space in 64 MiB steps, as needed.  Then the arena's own limit
# (jitprof.code_arena_max_size): smaller steps, then RuntimeDyld.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# 3,000,000 kB: a JIT backend shows well under 1.5 GB of VmSize without
# the 4 GiB reservation (see doc/linking.md), so this leaves plenty; 4 GiB
# more would not fit.
my $limit_kb = 3_000_000;
my $tmp = PostgreSQL::Test::Utils::tempdir;

# PostgreSQL::Test::Cluster runs the pg_ctl it finds in PATH: put one first
# that sets the limit, so that the postmaster and every backend inherit it.
my ($real) = grep { -x $_ } map { "$_/pg_ctl" } split /:/, $ENV{PATH};
die "no pg_ctl in PATH" unless $real;
open my $fh, '>', "$tmp/pg_ctl" or die;
print $fh "#!/bin/sh\nulimit -v $limit_kb || exit 1\nexec '$real' \"\$@\"\n";
close $fh;
chmod 0755, "$tmp/pg_ctl";

my $node = PostgreSQL::Test::Cluster->new('ulimit');
$node->init;
$node->append_conf('postgresql.conf', jitprof_conf() . "shared_buffers = 128MB\n");
{
	local $ENV{PATH} = "$tmp:$ENV{PATH}";
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION jitprof');
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a, g % 7 AS b FROM generate_series(1, 1000) g;
ANALYZE t;
});

my $postmaster_limit = `grep 'Max address space' /proc/${\ $node->{_pid}}/limits`;
like($postmaster_limit, qr/Max address space\s+\Q${\ ($limit_kb * 1024)}\E\s/,
	'the postmaster runs under the address-space limit');

my $query = 'SELECT b, count(*), sum(a) FROM t WHERE a % 3 <> 0 GROUP BY b ORDER BY b';
my $expected = $node->safe_psql('postgres', "SET jit = off; $query");

my ($ret, $out, $err) = $node->psql('postgres', qq{
SET jit = off;
SELECT 'limit', (regexp_match(pg_read_file('/proc/self/limits'), 'Max address space +([0-9]+)'))[1];
SET jit = on;
\\o /dev/null
$query;
$query;
SELECT count(*) FROM t WHERE a > 10;
\\o
SELECT 'result';
$query;
SET jit = off;
SELECT 'vmsize_kb', (regexp_match(pg_read_file('/proc/self/status'), 'VmSize:\\s+(\\d+) kB'))[1];
SELECT 'status', name, value FROM jitprof_status;
});
is($ret, 0, 'the session ran');
is($err, '', 'no errors or warnings');
my %s = map { (split /\|/)[1, 2] } grep { /^status\|/ } split /\n/, $out;
my ($limit) = $out =~ /^limit\|(\d+)$/m;
my ($vmsize) = $out =~ /^vmsize_kb\|(\d+)$/m;
my ($result) = $out =~ /^result\n(.*?)\nvmsize/ms;
is($limit, $limit_kb * 1024, 'the backend runs under the limit too');
is($result, $expected, 'JIT queries give the right answer');
is($s{linker}, 'jitlink', 'linked with JITLink');
cmp_ok($s{objects_linked}, '>=', 3, 'the queries were JIT-compiled and linked');
is($s{rtdyld_fallbacks}, 0, 'no object needed RuntimeDyld');
is($s{address_space_reserved_bytes}, 64 * 1024 * 1024, 'one 64 MiB arena reserved');
note("JIT backend under ulimit -v $limit_kb: VmSize $vmsize kB, "
	  . "arena $s{address_space_reserved_bytes} bytes");
cmp_ok($vmsize, '<', $limit_kb, 'VmSize is under the limit');

# --- jitprof.code_arena_max_size: smaller arenas, then RuntimeDyld ---
# With a 2 MB limit the 64, 16 and 4 MB steps do not fit, so the arena
# reserves 1 MB at a time; 400 queries of distinct shapes then fill it, and
# the rest of the objects go to RuntimeDyld, with one WARNING.  Every query
# still gives the right answer; raising the limit lets JITLink take over
# again.
my $distinct = join('', map { "SELECT $_, sum(a + " . ('b + ' x $_) . "0) FROM t;\n" } 1 .. 400);
my $plain = $node->safe_psql('postgres', "SET jit = off;\n$distinct");
($ret, $out, $err) = $node->psql('postgres', "SET jitprof.code_arena_max_size = '2MB';\n"
	  . "SET jit_inline_above_cost = -1; SET jit_optimize_above_cost = -1;\n"
	  . $distinct
	  . "\\o /dev/null\nSET jit = off;\n\\o\n"
	  . "SELECT 'status', name, value FROM jitprof_status;\n"
	  . "\\o /dev/null\nSET jitprof.code_arena_max_size = '1GB';\nSET jit = on;\n"
	  . "SELECT 1, sum(a + b + b + 1) FROM t;\nSET jit = off;\n\\o\n"
	  . "SELECT 'after', name, value FROM jitprof_status;\n");
is($ret, 0, 'the session ran');
my (%st, %after, @rows);
for (split /\n/, $out)
{
	my @f = split /\|/, $_, 3;
	if ($f[0] eq 'status') { $st{ $f[1] } = $f[2]; }
	elsif ($f[0] eq 'after') { $after{ $f[1] } = $f[2]; }
	else { push @rows, $_; }
}
is(join("\n", @rows), $plain, '400 queries give the answers of jit = off');
my @w = $err =~ /WARNING:  JIT code could not be linked with JITLink, RuntimeDyld links it instead\nDETAIL:  the code arena reached jitprof\.code_arena_max_size \(2048 kB\)/g;
is(scalar(@w), 1, 'one WARNING names the limit');
unlike($err, qr/ERROR/, 'no ERROR');
note("2 MB limit: $st{arenas_created} arenas, $st{address_space_reserved_bytes} bytes reserved, "
	  . "$st{arena_allocations_total} objects in the arena, $st{rtdyld_fallbacks} by RuntimeDyld");
cmp_ok($st{arenas_smaller}, '>=', 1, 'the arena reserved smaller steps');
cmp_ok($st{address_space_reserved_bytes}, '<=', 2 * 1024 * 1024, 'and stayed within the limit');
cmp_ok($st{arena_allocations_total}, '>', 0, 'JITLink linked objects until the arena was full');
cmp_ok($st{rtdyld_fallbacks}, '>', 0, 'RuntimeDyld linked the rest');
is($st{rtdyld_fallbacks} + $st{arena_allocations_total}, $st{objects_linked},
	'every object went to one of the two');
cmp_ok($after{arena_allocations_total}, '>', $st{arena_allocations_total},
	'with the limit raised, JITLink links again');
is($after{rtdyld_fallbacks}, $st{rtdyld_fallbacks}, 'and nothing more falls back');

# --- the kernel refuses the 64 MiB step ---
# Restart under a limit that leaves a JIT backend room for its usual
# VmSize minus 44 MiB: the 64 MiB reservation fails, a smaller one (or, if
# all fail, RuntimeDyld) takes the code, and the queries still answer.
$node->stop;
my $tight = $vmsize - 44 * 1024;
open $fh, '>', "$tmp/pg_ctl" or die;
print $fh "#!/bin/sh\nulimit -v $tight || exit 1\nexec '$real' \"\$@\"\n";
close $fh;
{
	local $ENV{PATH} = "$tmp:$ENV{PATH}";
	$node->start;
}
($ret, $out, $err) = $node->psql('postgres', qq{
SET jit = on;
SELECT 'result';
$query;
SET jit = off;
SELECT 'status', name, value FROM jitprof_status;
});
%s = map { (split /\|/)[1, 2] } grep { /^status\|/ } split /\n/, $out;
($result) = $out =~ /^result\n(.*?)\nstatus/ms;
note("ulimit -v $tight: reserve failures $s{arena_reserve_failures}, smaller arenas $s{arenas_smaller}, "
	  . "reserved $s{address_space_reserved_bytes} bytes, RuntimeDyld objects $s{rtdyld_fallbacks}");
is($ret, 0, 'the session ran under the tight limit');
is($result, $expected, 'the JIT query gives the right answer');
unlike($err, qr/ERROR/, 'no ERROR');
cmp_ok($s{arena_reserve_failures}, '>=', 1, 'the kernel refused the 64 MiB reservation');
ok($s{arenas_smaller} >= 1 || $s{rtdyld_fallbacks} >= 1,
	'a smaller arena or RuntimeDyld took the code');

$node->stop;
done_testing();
