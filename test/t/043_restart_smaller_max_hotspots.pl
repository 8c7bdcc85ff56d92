# Restarting with a smaller jitprof.max_hotspots keeps the saved entries
# eviction would keep (most samples first, most recently seen first among
# equals), keeps each query's summary row with its functions' rows, counts
# the others as evictions and logs how many were dropped (issue 9, case 8).
# The hotspot table's named shared memory follows the cap, and no part of
# it is <anonymous>.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('shrink',
	conf => "jitprof.sample_rate = 1000\njitprof.max_hotspots = 2000\n");

$node->safe_psql('postgres', q{
CREATE TABLE big AS SELECT g AS a, g % 97 AS b FROM generate_series(1, 1000000) g;
VACUUM ANALYZE big});
# Three heavy queries (many samples), run first, so that they are the least
# recently seen: only their samples can keep them.
my @heavy = (
	'SELECT sum(a * 2 + b) FROM big WHERE sqrt(a::float8) > 3',
	'SELECT sum(a - b) FROM big WHERE a % 7 <> 3 AND b < 90',
	'SELECT count(*), max(b) FROM big WHERE ln(a::float8 + 1) * b > 2');
# (EXPLAIN before the reset: a sample in an EXPLAIN may count as a run)
my @heavy_ids = map {
	my $plan = $node->safe_psql('postgres', "EXPLAIN (VERBOSE) $_");
	$plan =~ /Query Identifier: (-?\d+)/ or die "no query ID";
	$1;
} @heavy;
$node->safe_psql('postgres', 'SELECT jitprof_reset()');

$node->safe_psql('postgres', join(";\n", map { ($_) x 3 } @heavy));

# Many light ones: distinct shapes (distinct query IDs), few or no samples.
my $light = "SET jit_optimize_above_cost = -1;\nSET jit_inline_above_cost = -1;\n";
for my $i (1 .. 150)
{
	$light .= 'SELECT count(*) FROM generate_series(1, 10) g WHERE g'
	  . (' + 1' x $i) . " > 0;\n";
}
$node->safe_psql('postgres', $light);

# Everything, before the restart.
my $rows_sql = q{
SELECT string_agg(format('%s|%s|%s|%s', queryid, symbol, total_samples,
                         extract(epoch FROM last_seen)), E'\n')
  FROM jitprof_hotspots};
my $queries_sql = q{
SELECT string_agg(format('%s|%s|%s', queryid, executions, query_samples), E'\n')
  FROM jitprof_queries};
my %before_rows = map { my @f = split /\|/; ("$f[0]|$f[1]" => [ $f[2], $f[3] ]) }
  split /\n/, $node->safe_psql('postgres', $rows_sql);
my %before_queries = map { my @f = split /\|/; ($f[0] => [ $f[1], $f[2] ]) }
  split /\n/, $node->safe_psql('postgres', $queries_sql);
my $evictions_before = $node->safe_psql('postgres', 'SELECT evictions FROM jitprof_sampler');
is($evictions_before, '0', 'no evictions while filling');
cmp_ok(scalar(keys %before_rows), '>', 300, 'the store holds more than 300 function rows');

for my $qid (@heavy_ids)
{
	cmp_ok($before_queries{$qid}[1], '>', 20, "heavy query $qid has many samples");
}

# The store's shared memory, as pg_shmem_allocations names it.
my $shmem_sql = q{
SELECT string_agg(format('%s=%s', name, size), ',')
  FROM pg_shmem_allocations WHERE name = '<anonymous>' OR name LIKE 'jitprof %'};
my %shmem_before = map { split /=/ } split /,/,
  $node->safe_psql('postgres', $shmem_sql);
my $entry_bytes = status_value($node, 'store_hotspot_entry_bytes');

# Restart with a cap of 100 entries.
$node->append_conf('postgresql.conf', "jitprof.max_hotspots = 100\n");
$node->stop;
my $offset = -s $node->logfile;
$node->start;
my ($entries, $evictions) = split /\|/,
  $node->safe_psql('postgres', 'SELECT entries, evictions FROM jitprof_sampler');
my $log = slurp_file($node->logfile, $offset);
like($log,
	qr/LOG:  dropped (\d+) of (\d+) saved jitprof hotspot entries because jitprof\.max_hotspots is 100/,
	'the number of dropped entries is logged');
my ($dropped, $saved) = $log =~ /dropped (\d+) of (\d+) saved/;
$dropped //= -1;
$saved //= -1;
cmp_ok($entries, '<=', 100, 'no more entries than the new cap');
cmp_ok($entries, '>=', 98, 'and the cap is used');
is($entries, $saved - $dropped, 'the log counts every entry not loaded');
is($evictions, $evictions_before + $dropped, 'dropped entries are counted as evictions');

# Each table is one named allocation sized from its cap: at least cap x
# (entry + 8 bytes of bucket), at most 128 spare entries, 17 bytes of bucket
# and directory per entry and 4 kB of header more.  A smaller cap leaves
# <anonymous> as it was: no part of the tables is unnamed.
my %shmem_after = map { split /=/ } split /,/,
  $node->safe_psql('postgres', $shmem_sql);
for my $case ([ 2000, \%shmem_before ], [ 100, \%shmem_after ])
{
	my ($cap, $shmem) = @$case;
	my $size = $shmem->{'jitprof hotspots'} // 0;
	cmp_ok($size, '>=', $cap * ($entry_bytes + 8),
		"\"jitprof hotspots\" holds $cap entries of $entry_bytes bytes ($size bytes)");
	cmp_ok($size, '<=', ($cap + 128) * ($entry_bytes + 17) + 4096,
		'and not much more');
}
is($shmem_after{'<anonymous>'}, $shmem_before{'<anonymous>'},
	'a smaller jitprof.max_hotspots leaves <anonymous> shared memory unchanged');
is(join(',', sort keys %shmem_after),
	'<anonymous>,jitprof advisor,jitprof advisor workers,jitprof hotspots,jitprof plan nodes,jitprof steps,jitprof store header',
	'each of jitprof\'s tables, the store header and the JIT advisor\'s two tables has its own name');

my %after_rows = map { my @f = split /\|/; ("$f[0]|$f[1]" => [ $f[2], $f[3] ]) }
  split /\n/, $node->safe_psql('postgres', $rows_sql);
my %after_queries = map { my @f = split /\|/; ($f[0] => [ $f[1], $f[2] ]) }
  split /\n/, $node->safe_psql('postgres', $queries_sql);

# The heavy queries survive: their summary row, and every function row
# with more samples than any light query's entry.  (Light queries are cheap
# to run but not to compile, so they may outrank some heavy function rows;
# the rule itself is checked for every row below.)
my %is_heavy = map { ($_ => 1) } @heavy_ids;
my $light_max = 0;
for my $key (keys %before_rows)
{
	my ($qid) = split /\|/, $key;
	$light_max = $before_rows{$key}[0]
	  if !$is_heavy{$qid} && $before_rows{$key}[0] > $light_max;
}
for my $qid (keys %before_queries)
{
	$light_max = $before_queries{$qid}[1]
	  if !$is_heavy{$qid} && $before_queries{$qid}[1] > $light_max;
}
for my $qid (@heavy_ids)
{
	is_deeply($after_queries{$qid}, $before_queries{$qid},
		"heavy query $qid keeps its summary row");
	my @fns = grep { /^\Q$qid\E\|/ && $before_rows{$_}[0] > $light_max } keys %before_rows;
	is(scalar(grep { exists $after_rows{$_} } @fns), scalar(@fns),
		'and all of them are kept, with their counts')
	  and is_deeply([ map { $after_rows{$_}[0] } @fns ],
		[ map { $before_rows{$_}[0] } @fns ], 'unchanged');
}

# No kept function row has fewer samples than a dropped one, and among rows
# with the fewest kept samples, none dropped was seen later than one kept.
my @kept = grep { exists $after_rows{$_} } keys %before_rows;
my @gone = grep { !exists $after_rows{$_} } keys %before_rows;
cmp_ok(scalar(@gone), '>', 0, 'function rows were dropped');
my $min_kept = (sort { $a <=> $b } map { $before_rows{$_}[0] } @kept)[0];
my $max_gone = (sort { $b <=> $a } map { $before_rows{$_}[0] } @gone)[0];
cmp_ok($max_gone, '<=', $min_kept, 'the rows with the most samples are kept');
my @kept_edge = map { $before_rows{$_}[1] } grep { $before_rows{$_}[0] == $min_kept } @kept;
my @gone_edge = map { $before_rows{$_}[1] } grep { $before_rows{$_}[0] == $min_kept } @gone;
my $oldest_kept = (sort { $a <=> $b } @kept_edge)[0];
my $newest_gone = (sort { $b <=> $a } @gone_edge)[0] // 0;
cmp_ok($newest_gone, '<=', $oldest_kept,
	sprintf('among the %d kept and %d dropped rows with %d samples, the most recently seen are kept',
		scalar(@kept_edge), scalar(@gone_edge), $min_kept));

# Data stays consistent: a query whose summary row was saved keeps it when
# any of its function rows is kept.
my @orphans = grep {
	my ($qid) = split /\|/;
	exists $before_queries{$qid} && $before_queries{$qid}[0] > 0
	  && (!exists $after_queries{$qid} || $after_queries{$qid}[0] == 0)
} @kept;
is(scalar(@orphans), 0, 'no function row survives without its query\'s summary row')
  or diag(join("\n", @orphans));

$node->stop;
done_testing();
