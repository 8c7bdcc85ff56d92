# A server started under "ulimit -v" with room for its shared buffers and
# for stock llvmjit, but not for the 4 GiB per backend jitprof used to
# reserve, answers JIT queries correctly: the code arena reserves address
# space in 64 MiB steps, as needed.
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
CREATE TABLE t AS SELECT g AS a, g % 7 AS b FROM generate_series(1, 10000) g;
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

$node->stop;
done_testing();
