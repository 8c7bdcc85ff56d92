# jitprof as a PoWA datasource in local mode, with the platform's real
# PoWA: 4.1 (postgresql-15-powa, Debian 12), 5.0 (Debian 13) or 5.3
# (Debian testing).  The extension jitprof_powa registers the module,
# two snapshots around a known workload leave in powa_jitprof_hotspots the
# hot function's delta (its samples between the snapshots, not its running
# total); a function new since the previous snapshot counts all its
# samples; after jitprof_reset() the deltas start again from 0; and
# aggregating the history changes no delta.  Installing a second time
# (CREATE EXTENSION IF NOT EXISTS, ALTER EXTENSION UPDATE, register), and
# adopting a database where the script of earlier releases was run, keep
# the history and the one registration, and the next snapshot adds rows.
# The module jitprof_advisor (jitprof_powa 1.1) files each snapshot's
# jitprof_jit_payoff rows and jitprof_jit_advice() row: the workload's
# executions and the advice read the same in PoWA's history as in the views.
# jitprof_powa 1.2 registers both modules in the tables of the PoWA major
# it finds (PoWA 4's powa_functions, PoWA 5's powa_extensions,
# powa_extension_functions and powa_extension_config); the purges work
# with either's retention function, and unregistering removes what
# registering added.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $src = $ENV{JITPROF_SRC} // '.';
my $ext_script = "$src/integrations/powa/jitprof_powa--1.0.sql";

# The install (and upgrade) of doc/monitoring.md, meant to be run again.
my $install = q{
CREATE EXTENSION IF NOT EXISTS jitprof_powa;
ALTER EXTENSION jitprof_powa UPDATE;
SELECT powa_jitprof_register();
};

# powa.frequency = -1: PoWA's background worker takes no snapshot of its
# own, the test takes them.
my $node = jitprof_node('powa_local', conf => q{
shared_preload_libraries = 'jitprof,pg_stat_statements,powa'
jitprof.sample_rate = 1000
powa.frequency = -1
jitprof.jit_advisor = explore
jitprof.advisor_min_cost = 1000
jitprof.advisor_fraction = 0
}, no_extension => 1);
my $powa_version = $node->safe_psql('postgres', q{
SELECT default_version FROM pg_available_extensions WHERE name = 'powa'});
like($powa_version, qr/^(4\.1|5\.[0-3])\./, "PoWA $powa_version is available, one jitprof_powa supports")
  or BAIL_OUT('PoWA is not installed: run tools/deps.sh (postgresql-NN-powa)');
my ($powa_major) = $powa_version =~ /^(\d+)\./;

# What registering writes: one row per operation of each module.  PoWA 5
# has no "unregister" operation (powa_jitprof_unregister() is called by
# hand there, doc/monitoring.md).
my $unreg = $powa_major == 4 ? ',unregister' : '';
my $hot_ops = "aggregate,purge,reset,snapshot$unreg|1";
my $adv_ops = "purge,reset,snapshot$unreg";

$node->safe_psql('postgres', 'CREATE DATABASE powa');
$node->safe_psql('powa', q{
SET jit = off;
CREATE EXTENSION jitprof;
CREATE EXTENSION powa CASCADE;
});
install_module('powa', 'first install');
is($node->safe_psql('powa', "SELECT extversion FROM pg_extension WHERE extname = 'jitprof_powa'"),
	'1.2', 'jitprof_powa 1.2 is installed');
is(registration('powa'), $hot_ops,
	"jitprof is registered for PoWA $powa_major, once per operation ($hot_ops)");
is(advisor_registration('powa'), $adv_ops,
	"and so is jitprof_advisor ($adv_ops)");

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
	my ($db) = @_;
	$db //= 'powa';
	is($node->safe_psql($db, 'SET jit = off; SELECT powa_take_snapshot()'), '0',
		"powa_take_snapshot() reports no error in $db");
	return $node->safe_psql($db, 'SELECT max(ts) FROM powa_jitprof_snapshots WHERE srvid = 0');
}

sub delta
{
	my ($ts, $like, $role, $db) = @_;
	return $node->safe_psql($db // 'powa', qq{
SET jit = off;
SELECT sum(d.self_samples) || '|' || sum(d.total_samples) || '|' || sum(d.query_samples)
FROM powa_jitprof_hotspots d
WHERE d.srvid = 0 AND d.ts = '$ts' AND d.role = '$role'
  AND d.queryid IN (SELECT queryid FROM pg_stat_statements WHERE query LIKE '$like')});
}

# Runs $install in $db: it must succeed without a WARNING or an ERROR.
sub install_module
{
	my ($db, $what) = @_;
	my ($ret, $out, $err) = $node->psql($db, "SET jit = off;\n$install");
	is($ret, 0, "$what in $db succeeds");
	unlike($err, qr/WARNING|ERROR/, "$what in $db raises no warning or error")
	  or diag($err);
}

# The module's rows in PoWA's registration tables for the local server:
# its operations (a duplicate would repeat one, a disabled one is marked)
# and its rows in powa_extensions (PoWA 4: one per server) or
# powa_extension_config (PoWA 5: one per server, and one row in
# powa_extensions for all servers, checked by the second query).
sub registration
{
	my ($db) = @_;
	return $node->safe_psql($db, $powa_major == 4 ? q{
SELECT (SELECT string_agg(operation || CASE WHEN enabled THEN '' ELSE ' (disabled)' END, ','
                          ORDER BY operation) FROM powa_functions
        WHERE module = 'jitprof' AND srvid = 0)
  || '|' || (SELECT count(*) FROM powa_extensions WHERE extname = 'jitprof' AND srvid = 0)} : q{
SELECT (SELECT string_agg(operation || CASE WHEN enabled THEN '' ELSE ' (disabled)' END
                          || CASE WHEN external THEN ' (external)' ELSE '' END, ','
                          ORDER BY operation) FROM powa_functions
        WHERE kind = 'extension' AND name = 'jitprof' AND srvid = 0)
  || '|' || (SELECT count(*) FROM powa_extension_config WHERE extname = 'jitprof' AND srvid = 0)
  || CASE WHEN (SELECT count(*) FROM powa_extensions WHERE extname = 'jitprof') = 1
          THEN '' ELSE ' (powa_extensions)' END});
}

sub advisor_registration
{
	my ($db) = @_;
	return $node->safe_psql($db, $powa_major == 4 ? q{
SELECT string_agg(operation, ',' ORDER BY operation) FROM powa_functions
WHERE module = 'jitprof_advisor' AND srvid = 0} : q{
SELECT string_agg(operation || CASE WHEN enabled THEN '' ELSE ' (disabled)' END, ','
                  ORDER BY operation) FROM powa_functions
WHERE kind = 'extension' AND name = 'jitprof_advisor' AND srvid = 0});
}

# Every row of both modules left in PoWA's registration tables, of any
# server: "table:rows" for each table.
sub registered_rows
{
	my ($db) = @_;
	return $node->safe_psql($db, $powa_major == 4 ? q{
SELECT 'powa_functions:' || (SELECT count(*) FROM powa_functions
                             WHERE module IN ('jitprof', 'jitprof_advisor'))
  || ',powa_extensions:' || (SELECT count(*) FROM powa_extensions WHERE extname = 'jitprof')} : q{
SELECT 'powa_extensions:' || (SELECT count(*) FROM powa_extensions
                              WHERE extname IN ('jitprof', 'jitprof_advisor'))
  || ',powa_extension_functions:' || (SELECT count(*) FROM powa_extension_functions
                                      WHERE extname IN ('jitprof', 'jitprof_advisor'))
  || ',powa_extension_config:' || (SELECT count(*) FROM powa_extension_config
                                   WHERE extname IN ('jitprof', 'jitprof_advisor'))});
}

# The advisor's history at snapshot $ts for the query like $like:
# "executions|verdict", and the advice row against the view's.
sub payoff_at
{
	my ($ts, $like) = @_;
	return $node->safe_psql('powa', qq{
SELECT h.executions || '|' || h.verdict FROM powa_jitprof_payoff_history h
WHERE h.srvid = 0 AND h.ts = '$ts'
  AND h.queryid IN (SELECT queryid FROM pg_stat_statements WHERE query LIKE '$like')});
}

# The collected history: row counts and contents of the module's tables,
# and the deltas they give.
sub history
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
SELECT (SELECT count(*) || ':' || md5(coalesce(string_agg(h::text, ',' ORDER BY h::text), ''))
        FROM powa_jitprof_history h)
  || '|' || (SELECT count(*) || ':' || md5(coalesce(string_agg(c::text, ',' ORDER BY c::text), ''))
             FROM powa_jitprof_history_current c)
  || '|' || (SELECT count(*) || ':' || md5(coalesce(string_agg(s::text, ',' ORDER BY s::text), ''))
             FROM powa_jitprof_snapshots s)
  || '|' || (SELECT md5(coalesce(string_agg(d::text, ',' ORDER BY d::text), ''))
             FROM powa_jitprof_hotspots d)});
}

# The extension's members and the tables pg_dump dumps the rows of.
sub members
{
	my ($db) = @_;
	return $node->safe_psql($db, q{
SELECT string_agg(pg_describe_object(classid, objid, objsubid), E'\n'
                  ORDER BY pg_describe_object(classid, objid, objsubid))
FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'jitprof_powa')}) . "\n"
	  . $node->safe_psql($db, q{
SELECT string_agg(c::regclass::text, ',' ORDER BY c::regclass::text)
FROM pg_extension, unnest(extconfig) AS c WHERE extname = 'jitprof_powa'});
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

# The advisor module at snapshot 2: the scan's 12 executions (4 + 8), as
# jitprof_jit_payoff has them, and the advice as jitprof_jit_advice() gives it.
my $payoff_view = $node->safe_psql('powa', q{SET jit = off;
SELECT p.executions || '|' || p.verdict FROM jitprof_jit_payoff p
WHERE p.queryid IN (SELECT queryid FROM pg_stat_statements WHERE query LIKE 'SELECT count(*) FROM f%')});
is($payoff_view, '12|undecided', 'jitprof_jit_payoff counts the scan\'s 12 executions');
is(payoff_at($t2, 'SELECT count(*) FROM f%'), $payoff_view,
	'powa_jitprof_payoff_history holds them at snapshot 2');
my $advice_sql = q{SELECT jit || '|' || coalesce(jit_above_cost::text, '') || '|'
  || round(current_cpu_ms::numeric, 3) || '|' || round(advised_cpu_ms::numeric, 3)};
my $advice_hist = $node->safe_psql('powa', "$advice_sql || '|' || unserved FROM powa_jitprof_advice_history WHERE srvid = 0 AND ts = '$t2'");
is($advice_hist, $node->safe_psql('powa', "SET jit = off;
$advice_sql || '|' || coalesce(cardinality(unserved), 0) FROM jitprof_jit_advice()"),
	"powa_jitprof_advice_history holds the advice at snapshot 2 ($advice_hist)");
cmp_ok($node->safe_psql('powa', "SELECT count(*) FROM powa_jitprof_payoff_history WHERE srvid = 0 AND ts = '$t2'"), '<=',
	$node->safe_psql('powa', 'SHOW jitprof.advisor_max_queries'), 'at most jitprof.advisor_max_queries rows per snapshot');

my $top = $node->safe_psql('powa', qq{SELECT node_type || ' ' || role FROM powa_jitprof_hotspots
  WHERE srvid = 0 AND ts = '$t2' ORDER BY self_samples DESC, node_type, role LIMIT 1});
like($top, qr/^(SeqScan qual|Agg transition)$/, "the top delta at snapshot 2 is a workload function ($top)");

note($node->safe_psql('powa', "\\pset format aligned\n\\pset tuples_only off\n"
	  . "SELECT srvid, ts, queryid, plan_node_id, node_type, role, self_samples, total_samples, query_samples
	     FROM powa_jitprof_hotspots
	     ORDER BY ts, total_samples DESC, queryid, plan_node_id, role"));

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
is(payoff_at($t3, 'SELECT count(*) FROM f%'), '3|undecided',
	'the advisor history after jitprof_reset(): the 3 executions since');

# Aggregation moves the rows into arrays; the deltas are unchanged.
my $before = $node->safe_psql('powa', 'SELECT md5(string_agg(d::text, \',\' ORDER BY d::text)) FROM powa_jitprof_hotspots d');
$node->safe_psql('powa', 'SELECT powa_jitprof_aggregate(0)');
is($node->safe_psql('powa', 'SELECT count(*) FROM powa_jitprof_history_current'), '0',
	'aggregate emptied the current table');
cmp_ok($node->safe_psql('powa', 'SELECT count(*) FROM powa_jitprof_history WHERE srvid = 0'), '>', 0,
	'and filled the history');
is($node->safe_psql('powa', 'SELECT md5(string_agg(d::text, \',\' ORDER BY d::text)) FROM powa_jitprof_hotspots d'),
	$before, 'the deltas read the same from the aggregated history');

sub current_rows
{
	return $node->safe_psql($_[0], 'SELECT count(*) FROM powa_jitprof_history_current WHERE srvid = 0');
}

# Installing a second time, as an upgrade does: the history in both tables
# and the registration stay as they were, and the module goes on working.
run($scan, 3);
my $t4 = snapshot();
my $scan4 = totals('SELECT count(*) FROM f%', 'qual');
my $hist4 = history('powa');
like($hist4, qr/^[1-9]\d*:\w+\|[1-9]\d*:\w+\|[1-9]\d*:/,
	"aggregated and current history before the second install ($hist4)");
install_module('powa', 'the second install');
is(history('powa'), $hist4, 'the second install keeps the collected history and its deltas');
is(registration('powa'), $hot_ops, 'the second install registers nothing twice');
is(advisor_registration('powa'), $adv_ops, 'nor the advisor module');
my $rows4 = current_rows('powa');
run($scan, 3);
my $t5 = snapshot();
my $scan5 = totals('SELECT count(*) FROM f%', 'qual');
cmp_ok(current_rows('powa'), '>', $rows4, 'a snapshot after the second install adds rows');
is(delta($t5, 'SELECT count(*) FROM f%', 'qual'), minus($scan5, $scan4),
	'its delta is what the scan gained since the previous snapshot');

# A database where the script of earlier releases was run: it created 1.0's
# objects in one transaction, outside any extension.  Version "unpackaged"
# refuses a database without them.
$node->safe_psql('postgres', 'CREATE DATABASE powa_old');
$node->safe_psql('powa_old', 'SET jit = off; CREATE EXTENSION jitprof; CREATE EXTENSION powa CASCADE;');
my ($ret, $out, $err) = $node->psql('powa_old', "CREATE EXTENSION jitprof_powa VERSION 'unpackaged'");
isnt($ret, 0, 'version "unpackaged" fails where jitprof_powa.sql never ran');
like($err, qr/ERROR:  type "public.powa_jitprof_type" does not exist.*HINT:  Run CREATE EXTENSION jitprof_powa without VERSION\./s,
	'and its error says what to run instead');
my $legacy = slurp_file($ext_script);
my $guards = ($legacy =~ s/^\\echo .*\n//mg);
my $dumps = ($legacy =~ s/^SELECT pg_catalog\.pg_extension_config_dump\(.*\n//mg);
is("$guards|$dumps", '1|3', "the earlier script is 1.0's objects without the extension's guard and pg_dump marks");
$node->safe_psql('powa_old', "SET jit = off;\nBEGIN;\nSET LOCAL search_path = public, pg_catalog;\n"
	  . "$legacy\nCOMMIT;");
# The earlier script predates PoWA 5: its registration writes PoWA 4's
# tables, so on PoWA 5 its module never ran from powa_take_snapshot(), and
# its history there is what its snapshot function took when called.
my $legacy_snapshot = \&snapshot;
if ($powa_major == 4)
{
	$node->safe_psql('powa_old', 'SELECT powa_jitprof_register()');
}
else
{
	($ret, $out, $err) = $node->psql('powa_old', 'SELECT powa_jitprof_register()');
	like($err, qr/ERROR:  column "srvid" of relation "powa_extensions" does not exist/,
		"the earlier script's registration fails on PoWA $powa_version, which has no powa_extensions.srvid");
	$legacy_snapshot = sub {
		my ($db) = @_;
		$node->safe_psql($db, 'SET jit = off; SELECT powa_jitprof_snapshot(0)');
		return $node->safe_psql($db, 'SELECT max(ts) FROM powa_jitprof_snapshots WHERE srvid = 0');
	};
}
run($scan, 3);
$legacy_snapshot->('powa_old');
$node->safe_psql('powa_old', 'SELECT powa_jitprof_aggregate(0)');
run($scan, 3);
my $o2 = $legacy_snapshot->('powa_old');
my $scan_o2 = totals('SELECT count(*) FROM f%', 'qual');
my $hist_o2 = history('powa_old');
like($hist_o2, qr/^[1-9]\d*:\w+\|[1-9]\d*:\w+\|[1-9]\d*:/,
	"the earlier script's module collected history ($hist_o2)");

$node->safe_psql('powa_old', q{SET jit = off;
CREATE EXTENSION jitprof_powa VERSION 'unpackaged';
ALTER EXTENSION jitprof_powa UPDATE;});
is($node->safe_psql('powa_old', "SELECT extversion FROM pg_extension WHERE extname = 'jitprof_powa'"),
	'1.2', 'the adopted module is jitprof_powa 1.2 (through 1.0 and 1.1)');
is(members('powa_old'), members('powa'),
	'with the objects and pg_dump marks of a fresh CREATE EXTENSION');
is(history('powa_old'), $hist_o2, 'adopting keeps the collected history and its deltas');
install_module('powa_old', 'the install after adopting');
is(registration('powa_old'), $hot_ops, 'the adopted module is registered once');
is(advisor_registration('powa_old'), $adv_ops, 'and so is its advisor module');
my $rows_o2 = current_rows('powa_old');
run($scan, 3);
my $o3 = snapshot('powa_old');
my $scan_o3 = totals('SELECT count(*) FROM f%', 'qual');
cmp_ok(current_rows('powa_old'), '>', $rows_o2, 'a snapshot after adopting adds rows');
is(delta($o3, 'SELECT count(*) FROM f%', 'qual', 'powa_old'), minus($scan_o3, $scan_o2),
	'its delta is what the scan gained since the earlier script\'s last snapshot');

# The purges, with PoWA's retention for the local server (powa.retention)
# at 0: all the aggregated history goes, the current rows stay (PoWA's
# modules purge aggregated rows only), the snapshot marks go with the
# history they delimit, and so does the advisor's history.
run($scan, 3);
snapshot();
my $current = current_rows('powa');
cmp_ok($node->safe_psql('powa', 'SELECT count(*) FROM powa_jitprof_history WHERE srvid = 0'), '>', 0,
	'aggregated history before the purge');
my ($pret, $pout, $perr) = $node->psql('powa', q{SET powa.retention = 0;
SELECT powa_jitprof_purge(0);
SELECT powa_jitprof_advisor_purge(0);});
is($pret, 0, "both purges run on PoWA $powa_version") or diag($perr);
is($node->safe_psql('powa', q{SELECT (SELECT count(*) FROM powa_jitprof_history WHERE srvid = 0)
  || '|' || (SELECT count(*) FROM powa_jitprof_payoff_history WHERE srvid = 0)
  || '|' || (SELECT count(*) FROM powa_jitprof_advice_history WHERE srvid = 0)
  || '|' || (SELECT count(*) FROM powa_jitprof_history_current WHERE srvid = 0)}), "0|0|0|$current",
	"a purge with no retention drops the aggregated and the advisor's history, and keeps the $current current rows");

# powa_reset() calls every module's reset function, jitprof's included.
$node->safe_psql('powa', 'SELECT powa_reset(0)');
is($node->safe_psql('powa', q{SELECT (SELECT count(*) FROM powa_jitprof_history)
  + (SELECT count(*) FROM powa_jitprof_snapshots)
  + (SELECT count(*) FROM powa_jitprof_payoff_history)
  + (SELECT count(*) FROM powa_jitprof_advice_history)}), '0', 'powa_reset(0) clears jitprof history, the advisor\'s too');

# Unregistering removes every row registering added, in both databases,
# and a snapshot then runs neither module.
my $registered = $powa_major == 4 ? 'powa_functions:9,powa_extensions:1'
  : 'powa_extensions:2,powa_extension_functions:7,powa_extension_config:2';
is(registered_rows('powa'), $registered, "what registering wrote ($registered)");
for my $db ('powa', 'powa_old')
{
	is($node->safe_psql($db, 'SELECT powa_jitprof_unregister()'), 't', "powa_jitprof_unregister() in $db");
	is(registered_rows($db), $powa_major == 4 ? 'powa_functions:0,powa_extensions:0'
		: 'powa_extensions:0,powa_extension_functions:0,powa_extension_config:0',
		"leaves no row of either module in PoWA's registration tables of $db");
}
run($scan, 3);
snapshot();
is($node->safe_psql('powa', q{SELECT (SELECT count(*) FROM powa_jitprof_history_current)
  + (SELECT count(*) FROM powa_jitprof_payoff_history)}), '0', 'a snapshot after unregistering files nothing');

$node->stop;
done_testing();
