# jitprof as a PoWA datasource in local mode, with the real PoWA 4.1
# (postgresql-15-powa): integrations/powa/jitprof_powa.sql registers the
# module, two snapshots around a known workload leave in
# powa_jitprof_hotspots the hot function's delta (its samples between the
# snapshots, not its running total); a function new since the previous
# snapshot counts all its samples; after jitprof_reset() the deltas start
# again from 0; and aggregating the history changes no delta.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $src = $ENV{JITPROF_SRC} // '.';
my $script = "$src/integrations/powa/jitprof_powa.sql";

# powa.frequency = -1: PoWA's background worker takes no snapshot of its
# own, the test takes them.
my $node = jitprof_node('powa_local', conf => q{
shared_preload_libraries = 'jitprof,pg_stat_statements,powa'
jitprof.sample_rate = 1000
powa.frequency = -1
}, no_extension => 1);
my $powa_ok = $node->safe_psql('postgres', q{
SELECT count(*) FROM pg_available_extensions WHERE name = 'powa' AND default_version LIKE '4.1.%'});
is($powa_ok, '1', 'PoWA 4.1 is available (postgresql-15-powa)')
  or BAIL_OUT('PoWA 4.1 is not installed: run tools/deps.sh (postgresql-15-powa)');

$node->safe_psql('postgres', 'CREATE DATABASE powa');
$node->safe_psql('powa', qq{
SET jit = off;
CREATE EXTENSION jitprof;
CREATE EXTENSION powa CASCADE;
\\i $script
SELECT powa_jitprof_register();
});
is($node->safe_psql('powa', q{SELECT string_agg(operation, ',' ORDER BY operation)
  FROM powa_functions WHERE module = 'jitprof' AND srvid = 0 AND enabled}),
	'aggregate,purge,reset,snapshot,unregister', 'jitprof is registered in powa_functions');

$node->safe_psql('postgres', q{
CREATE TABLE f AS
  SELECT random() AS a, random() AS b, random() AS c
  FROM generate_series(1, 200000);
VACUUM ANALYZE f;
});
my $scan = q{SELECT count(*) FROM f
  WHERE a * b + b * c - a * c * 0.5 + (a + b) * (b + c) * (c + a) > 0.7
    AND a * a + b * b + c * c < 2.5};
my $agg = q{SELECT sum(a * b * c + sqrt(a + b + c) * ln(b + 1.5)) FROM f};

sub run
{
	my ($sql, $n) = @_;
	$node->safe_psql('postgres', join('', map { "$sql;\n" } 1 .. $n));
}

# jitprof's totals for one function, read without JIT (without adding to
# the store): "self|total|query"
sub totals
{
	my ($like, $role) = @_;
	return $node->safe_psql('powa', qq{
SET jit = off;
SELECT sum(h.self_samples) || '|' || sum(h.total_samples) || '|' || sum(h.query_samples)
FROM jitprof_hotspots h JOIN pg_stat_statements s USING (userid, dbid, queryid)
WHERE s.query LIKE '$like' AND h.role = '$role'});
}

sub snapshot
{
	is($node->safe_psql('powa', 'SET jit = off; SELECT powa_take_snapshot()'), '0',
		'powa_take_snapshot() reports no error');
	return $node->safe_psql('powa', 'SELECT max(ts) FROM powa_jitprof_snapshots WHERE srvid = 0');
}

sub delta
{
	my ($ts, $like, $role) = @_;
	return $node->safe_psql('powa', qq{
SET jit = off;
SELECT sum(d.self_samples) || '|' || sum(d.total_samples) || '|' || sum(d.query_samples)
FROM powa_jitprof_hotspots d
WHERE d.srvid = 0 AND d.ts = '$ts' AND d.role = '$role'
  AND d.queryid IN (SELECT queryid FROM pg_stat_statements WHERE query LIKE '$like')});
}

sub minus
{
	my ($x, $y) = @_;
	my @x = split /\|/, $x;
	my @y = split /\|/, $y;
	return join('|', map { $x[$_] - $y[$_] } 0 .. 2);
}

# Before the first snapshot: some history the first snapshot cannot split.
run($scan, 4);
my $t1 = snapshot();
my $scan1 = totals('SELECT count(*) FROM f%', 'qual');
like($scan1, qr/^[1-9]\d*\|\d+\|\d+$/, "the scan's qual has samples before snapshot 1 ($scan1)");
is($node->safe_psql('powa', "SELECT count(*) FROM powa_jitprof_hotspots WHERE ts = '$t1'"), '0',
	'the first snapshot has no baseline, hence no deltas');

# Between the snapshots: more of the scan, and a new aggregate.
run($scan, 8);
run($agg, 6);
my $t2 = snapshot();
my $scan2 = totals('SELECT count(*) FROM f%', 'qual');
my $agg2 = totals('SELECT sum(a * b * c%', 'transition');
my $d_scan = minus($scan2, $scan1);
cmp_ok((split /\|/, $d_scan)[0], '>', 0, "the scan gained self samples between the snapshots ($d_scan)");
is(delta($t2, 'SELECT count(*) FROM f%', 'qual'), $d_scan,
	"powa_jitprof_hotspots holds the scan qual's delta (self|total|query = $d_scan), not its total ($scan2)");
like($agg2, qr/^\d+\|[1-9]\d*\|\d+$/, "the aggregate's transition has samples ($agg2)");
is(delta($t2, 'SELECT sum(a * b * c%', 'transition'), $agg2,
	'a function new since the previous snapshot counts all its samples');
my $top = $node->safe_psql('powa', qq{SELECT node_type || ' ' || role FROM powa_jitprof_hotspots
  WHERE srvid = 0 AND ts = '$t2' ORDER BY self_samples DESC LIMIT 1});
like($top, qr/^(SeqScan qual|Agg transition)$/, "the top delta at snapshot 2 is a workload function ($top)");

note($node->safe_psql('powa', "\\pset format aligned\n\\pset tuples_only off\n"
	  . "SELECT srvid, ts, queryid, plan_node_id, node_type, role, self_samples, total_samples, query_samples
	     FROM powa_jitprof_hotspots ORDER BY ts, total_samples DESC"));

# jitprof_reset(): the entries start again from 0, so do the deltas.
$node->safe_psql('powa', 'SET jit = off; SELECT jitprof_reset()');
run($scan, 3);
my $t3 = snapshot();
my $scan3 = totals('SELECT count(*) FROM f%', 'qual');
is(delta($t3, 'SELECT count(*) FROM f%', 'qual'), $scan3,
	"after jitprof_reset(), the delta is what was sampled since ($scan3)");
is($node->safe_psql('powa', qq{SELECT count(*) FROM powa_jitprof_hotspots
  WHERE ts = '$t3' AND (self_samples < 0 OR total_samples < 0 OR query_samples < 0)}), '0',
	'no negative delta across the reset');

# Aggregation moves the rows into arrays; the deltas are unchanged.
my $before = $node->safe_psql('powa', 'SELECT md5(string_agg(d::text, \',\' ORDER BY d::text)) FROM powa_jitprof_hotspots d');
$node->safe_psql('powa', 'SELECT powa_jitprof_aggregate(0)');
is($node->safe_psql('powa', 'SELECT count(*) FROM powa_jitprof_history_current'), '0',
	'aggregate emptied the current table');
cmp_ok($node->safe_psql('powa', 'SELECT count(*) FROM powa_jitprof_history WHERE srvid = 0'), '>', 0,
	'and filled the history');
is($node->safe_psql('powa', 'SELECT md5(string_agg(d::text, \',\' ORDER BY d::text)) FROM powa_jitprof_hotspots d'),
	$before, 'the deltas read the same from the aggregated history');

# powa_reset() calls every module's reset function, jitprof's included.
$node->safe_psql('powa', 'SELECT powa_reset(0)');
is($node->safe_psql('powa', q{SELECT (SELECT count(*) FROM powa_jitprof_history)
  + (SELECT count(*) FROM powa_jitprof_snapshots)}), '0', 'powa_reset(0) clears jitprof history');

$node->stop;
done_testing();
