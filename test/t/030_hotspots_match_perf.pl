# The sampler is truthful: on a query whose hot expression is known (a heavy
# float8 expression in a scan's WHERE clause), the top hotspot is that scan's
# qual, and its self share matches, within 2 percentage points, the share
# that `perf record -e cpu-clock` gives the same code in the same run.  On a
# heavy aggregate and on wide rows, the top hotspots are the aggregate's
# transition and the scan's deforming.
#
# perf cannot name JIT code without a perf map, which is another sink's
# business.  So perf's share is computed from `perf script` directly: the
# samples whose IP falls in the address ranges jitprof_functions reports for
# the qual's symbol, over the backend's samples in user space (see below
# why not the kernel's).
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# The kernel delivers CPU-timer signals at its tick (250 Hz on Debian), so
# the sampler takes about 250 independent samples per CPU second whatever
# its rate: ~30 s of query keep its share's standard error near 0.55 points.
my $runs = $ENV{JITPROF_ACCURACY_RUNS} // 150;

# The table must fit in shared buffers (a large seq scan would use a small
# ring and read from the kernel, time perf does not see as a non-root user).
my $node = jitprof_node('accuracy', conf => q{
shared_buffers = 512MB
jitprof.sample_rate = 1000
});

$node->safe_psql('postgres', q{
CREATE TABLE f AS
  SELECT random() AS a, random() AS b, random() AS c
  FROM generate_series(1, 1500000);
VACUUM ANALYZE f;
});

my $query = q{SELECT count(*) FROM f
  WHERE a * b + b * c - a * c * 0.5 + (a + b) * (b + c) * (c + a) > 0.7
    AND a * a + b * b + c * c < 2.5};
my $expected = $node->safe_psql('postgres', $query);
like($expected, qr/^\d+$/, 'reference query answers');

my $session = background_session($node, 'postgres');
my $pid = $session->query_safe('SELECT pg_backend_pid()');
$session->query_safe($query);    # warm the buffers
$session->query_safe('SELECT jitprof_reset()');

my $perf_data = $node->basedir . '/perf.data';
my ($perf_out, $perf_err) = ('', '');
my $perf = IPC::Run::start(
	[ 'perf', 'record', '-e', 'cpu-clock', '-F', '4000', '-p', $pid, '-o', $perf_data ],
	'>', \$perf_out, '2>', \$perf_err);
# perf has attached once its data file has a header
my $waited = 0;
while (!-s $perf_data && $waited++ < 100)
{
	select(undef, undef, undef, 0.1);
}
sleep 1;

my $same = 1;
for (1 .. $runs)
{
	$same = 0 if $session->query_safe($query) ne $expected;
}
ok($same, "$runs runs under the sampler and perf gave the right answer");

$perf->signal('INT');
$perf->finish;
ok(-s $perf_data, 'perf recorded the backend') or diag($perf_err);

# The qual's code of every run, from the backend's own registry.
my $ranges = $session->query_safe(q{
SELECT symbol, address, size FROM jitprof_functions
  WHERE symbol LIKE '%SeqScan_qual'});
$session->quit;

my @top = split /\|/, $node->safe_psql('postgres', q{
SELECT node_type, role, symbol, self_samples, query_samples, self_pct
  FROM jitprof_hotspots ORDER BY self_samples DESC LIMIT 1});
is($top[0], 'SeqScan', 'top hotspot is the scan');
is($top[1], 'qual', 'top hotspot is the scan\'s WHERE clause');
my ($symbol, $self, $qsamples, $jitprof_pct) = @top[ 2 .. 5 ];
cmp_ok($qsamples, '>', 10000, "enough samples ($qsamples) for a 2-point comparison");

my @r;
for my $line (split /\n/, $ranges)
{
	my ($sym, $addr, $size) = split /\|/, $line;
	next unless $sym eq $symbol;
	push @r, [ hex($addr), hex($addr) + $size ];
}
cmp_ok(scalar @r, '>=', $runs, 'one code range per run');
@r = sort { $a->[0] <=> $b->[0] } @r;

my ($script) = run_command([ 'perf', 'script', '-i', $perf_data, '-F', 'ip' ]);
my ($all, $in, $kernel) = (0, 0, 0);
for my $line (split /\n/, $script)
{
	next unless $line =~ /^\s*([0-9a-f]+)\s*$/;
	my $ip = hex($1);
	$all++;
	$kernel++ if length($1) == 16 && $1 =~ /^ffff[89a-f]/;
	# binary search of the sorted, disjoint ranges
	my ($lo, $hi) = (0, $#r);
	while ($lo <= $hi)
	{
		my $mid = int(($lo + $hi) / 2);
		if ($ip < $r[$mid][0]) { $hi = $mid - 1; }
		elsif ($ip >= $r[$mid][1]) { $lo = $mid + 1; }
		else { $in++; last; }
	}
}
cmp_ok($all, '>', 40000, "perf took enough samples ($all)");
# A CPU-timer signal taken while the backend is in the kernel (a page
# fault, or being preempted on a busy machine) is handled on the way back
# to user space, so jitprof charges it to the code the kernel returns to;
# perf charges the kernel.  So perf's share is over its user-space
# samples.  On forky at a load average of 9 to 24 (2 CPUs), jitprof's
# share was 1.6 to 2.3 points above perf's share of all its samples, and
# 1.3 points above its share of user-space ones (the kernel had 2.6%).
my $perf_pct = 100.0 * $in / ($all - $kernel);
diag(sprintf('self share of %s: jitprof %.2f%% (%d of %d samples), perf %.2f%% (%d of %d in user space; %d in the kernel)',
		$symbol, $jitprof_pct, $self, $qsamples, $perf_pct, $in, $all - $kernel, $kernel));
cmp_ok($perf_pct, '>', 10, 'perf also sees the qual as hot');
cmp_ok(abs($jitprof_pct - $perf_pct), '<=', 2.0,
	sprintf('jitprof self share %.2f%% within 2 points of perf %.2f%%', $jitprof_pct, $perf_pct));

# Two more references whose hot spot is known, checked by node and role:
# a costly aggregate transition (its time is mostly in the float8
# accumulator functions it calls, so it leads by total samples) and
# wide-row deforming (a filter on the last of 60 columns).
$node->safe_psql('postgres', q{
SELECT jitprof_reset();
SELECT sum(a * b), avg(a * c), sum(b * c), avg(a + b + c), stddev(a), variance(b * c)
  FROM f, generate_series(1, 3);
});
is($node->safe_psql('postgres', q{
SELECT node_type || ' ' || role FROM jitprof_hotspots
  ORDER BY total_samples DESC LIMIT 1}),
	'Agg transition', 'a heavy aggregate: the top hotspot is its transition');

my $cols = join(', ', map { "g % $_ AS c$_" } 1 .. 60);
$node->safe_psql('postgres', qq{
CREATE TABLE wide AS SELECT $cols FROM generate_series(1, 300000) g;
VACUUM ANALYZE wide;
SELECT jitprof_reset();
});
# (without inlining, which would merge the deforming into the qual)
$node->safe_psql('postgres', q{
SET jit_optimize_above_cost = -1;
SET jit_inline_above_cost = -1;
SELECT count(*) FROM wide WHERE c60 = 7})
  for 1 .. 5;
is($node->safe_psql('postgres', q{
SELECT node_type || ' ' || role FROM jitprof_hotspots
  ORDER BY self_samples DESC LIMIT 1}),
	'SeqScan deform_scan', 'wide rows: the top hotspot is the scan\'s deforming');

$node->stop;
done_testing();
