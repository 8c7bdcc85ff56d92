# jitprof through PoWA's remote mode, with the platform's real
# powa-collector (1.2.0 with PoWA 4.1 on Debian 12, 1.3.1 with PoWA 5.0 on
# Debian 13, 1.3.2 with PoWA 5.3 on Debian testing): a
# repository cluster (PoWA and jitprof_powa, no jitprof needed) and a
# monitored cluster (jitprof, PoWA and jitprof_powa, whose
# powa_jitprof_src(0) the collector calls).  powa-collector runs against the
# repository for a bounded time, snapshots the monitored server every 5 s,
# and the monitored server's jitprof history arrives in the repository with
# the workload's delta.  Both clusters listen on unix sockets only; the
# collector is stopped by its PID.
use strict;
use warnings;

use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;
use JitprofMonitor;

my $collector_bin = program('powa-collector', 'powa-collector');
my $tmp = PostgreSQL::Test::Utils::tempdir;

# The repository: PoWA only.
my $repo = jitprof_node('powa_repo', no_defaults => 1, no_extension => 1);
my $powa_version = $repo->safe_psql('postgres', q{
SELECT default_version FROM pg_available_extensions WHERE name = 'powa'});
like($powa_version, qr/^(4\.1|5\.[0-3])\./, "PoWA $powa_version is available, one jitprof_powa supports");
my ($powa_major) = $powa_version =~ /^(\d+)\./;
$repo->safe_psql('postgres', 'CREATE DATABASE powa');
$repo->safe_psql('powa', q{
CREATE EXTENSION powa CASCADE;
CREATE EXTENSION jitprof_powa;
});

# The monitored server: jitprof and pg_stat_statements preloaded; PoWA and
# jitprof_powa in the database the collector connects to.
my $mon = jitprof_node('powa_monitored', conf => q{
shared_preload_libraries = 'jitprof,pg_stat_statements'
jitprof.sample_rate = 1000
jitprof.jit_advisor = explore
jitprof.advisor_min_cost = 1000
jitprof.advisor_fraction = 0
});
$mon->safe_psql('postgres', q{
SET jit = off;
CREATE EXTENSION powa CASCADE;
CREATE EXTENSION jitprof_powa;
CREATE TABLE f AS
  SELECT random() AS a, random() AS b, random() AS c
  FROM generate_series(1, 200000);
VACUUM ANALYZE f;
});

my $srvid = $repo->safe_psql('powa', sprintf(q{
SELECT powa_register_server(hostname => '%s', port => %d, alias => 'monitored',
  username => 'postgres', dbname => 'postgres', frequency => 5);
SELECT id FROM powa_servers WHERE alias = 'monitored';
}, $mon->host, $mon->port));
($srvid) = $srvid =~ /(\d+)$/;
ok($srvid, "monitored server registered as srvid $srvid");
is($repo->safe_psql('powa', "SELECT powa_jitprof_register($srvid)"), 't',
	'jitprof registered for it');
# one row per operation of the module for that server: PoWA 4's five
# (with unregister), PoWA 5's four
my ($col, $ops) = $powa_major == 4 ? ('module', 5) : ('name', 4);
is($repo->safe_psql('powa', "SELECT powa_jitprof_register($srvid);
  SELECT count(*) || '|' || count(DISTINCT operation) FROM powa_functions
  WHERE $col = 'jitprof' AND srvid = $srvid"), "t\n$ops|$ops",
	"registering it again adds no row to powa_functions (PoWA $powa_major: $ops operations)");

my $scan = q{SELECT count(*) FROM f
  WHERE a * b + b * c - a * c * 0.5 + (a + b) * (b + c) * (c + a) > 0.7
    AND a * a + b * b + c * c < 2.5};
sub run { $mon->safe_psql('postgres', join('', map { "$scan;\n" } 1 .. $_[0])) }
sub qual_totals
{
	return $mon->safe_psql('postgres', q{
SET jit = off;
SELECT queryid || '|' || sum(self_samples) || '|' || sum(total_samples) || '|' || sum(query_samples)
FROM jitprof_hotspots h
WHERE role = 'qual' AND queryid = (SELECT queryid FROM pg_stat_statements
                                   WHERE query LIKE 'SELECT count(*) FROM f%')
GROUP BY queryid});
}
run(4);
my $before = qual_totals();
like($before, qr/^-?\d+\|[1-9]\d*\|/, "the monitored scan has samples before the collector starts ($before)");
my ($qid) = split /\|/, $before;

# powa-collector 1.2.0 reads the first of /etc/powa-collector.conf,
# ~/.config/powa-collector.conf, ~/.powa-collector.conf and
# ./powa-collector.conf that exists.  Debian's /etc file names the
# repository as "postgresql:///powa", that is libpq's defaults for host,
# port and user: the environment points them at the test repository.  The
# same settings are written to ~/.config for a machine without that file.
my $etc = '/etc/powa-collector.conf';
if (-e $etc)
{
	my $conf = decode_json(slurp_file($etc));
	is($conf->{repository}{dsn}, 'postgresql:///powa',
		"$etc leaves host, port and user to libpq's environment");
}
mkdir "$tmp/home";
mkdir "$tmp/home/.config";
open my $fh, '>', "$tmp/home/.config/powa-collector.conf" or die $!;
print $fh encode_json({ repository => { dsn => 'postgresql:///powa' }, debug => JSON::PP::true });
close $fh;
my $collector = start_program([$collector_bin], "$tmp/collector.log",
	HOME => "$tmp/home", PGHOST => $repo->host, PGPORT => $repo->port,
	PGUSER => 'postgres', PGDATABASE => 'powa');

# A PoWA 5 snapshot runs all of PoWA's default datasources of the server
# (about 20 source functions, each a COPY from the monitored server): on
# the 2-core machine at a load average of 18, PoWA 5.3's next snapshot did
# not come within a minute.  The waits are PostgreSQL's own TAP timeout
# (180 s by default).
my $wait = $PostgreSQL::Test::Utils::timeout_default;
sub marks
{
	return $repo->safe_psql('powa',
		"SELECT count(*) FROM powa_jitprof_snapshots WHERE srvid = $srvid");
}
ok(wait_for($wait, sub { marks() >= 1 }), 'the collector took a first snapshot of the monitored server')
  or diag(slurp_file("$tmp/collector.log"));

# More of the workload, then wait for a snapshot taken after it.
run(8);
my $after = qual_totals();
my $done = $mon->safe_psql('postgres', 'SELECT now()');
ok(wait_for($wait, sub {
	$repo->safe_psql('powa', "SELECT count(*) FROM powa_jitprof_snapshots
	  WHERE srvid = $srvid AND ts > '$done'") > 0 }),
	'the collector snapshotted the monitored server after the workload');
stop_program($collector);
ok(!kill(0, $collector->{KIDS}[0]{PID}), 'powa-collector is stopped');

my $log = slurp_file("$tmp/collector.log");
note("powa-collector's log:\n$log");
unlike($log, qr/Error while (calling|inserting|taking snapshot)[^\n]*jitprof/i,
	'the collector reported no error for the jitprof module');
is($repo->safe_psql('powa', "SELECT errors FROM powa_snapshot_metas WHERE srvid = $srvid"), '',
	'the repository recorded no snapshot error');

cmp_ok($repo->safe_psql('powa', "SELECT count(*) FROM powa_jitprof_history_current
  WHERE srvid = $srvid AND queryid = $qid"), '>=', 2,
	'the monitored server\'s jitprof history arrived in the repository');
my (undef, @b) = split /\|/, $before;
my (undef, @a) = split /\|/, $after;
my $want = join('|', map { $a[$_] - $b[$_] } 0 .. 2);
is($repo->safe_psql('powa', "SELECT sum(self_samples) || '|' || sum(total_samples) || '|' || sum(query_samples)
  FROM powa_jitprof_hotspots WHERE srvid = $srvid AND queryid = $qid AND role = 'qual'"),
	$want, "the repository's deltas add up to what the workload added on the monitored server ($want)");
note($repo->safe_psql('powa', "\\pset format aligned\n\\pset tuples_only off\n"
	  . "SELECT srvid, ts, queryid, node_type, role, self_samples, total_samples, query_samples
	     FROM powa_jitprof_hotspots WHERE srvid = $srvid
	     ORDER BY ts, total_samples DESC, queryid, node_type, role"));
is($repo->safe_psql('powa', "SELECT count(*) FROM powa_jitprof_hotspots WHERE srvid = 0"), '0',
	'nothing was charged to the repository itself');

# The advisor module, through the collector too: the last snapshot holds
# the scan's 12 executions as the monitored server's jitprof_jit_payoff
# counts them, and every snapshot one advice row.
my $payoff = $mon->safe_psql('postgres', "SET jit = off;
SELECT executions || '|' || verdict FROM jitprof_jit_payoff WHERE queryid = $qid");
is($payoff, '12|undecided', 'the monitored server\'s advisor counts the scan\'s 12 executions');
is($repo->safe_psql('powa', "SELECT executions || '|' || verdict FROM powa_jitprof_payoff_history
  WHERE srvid = $srvid AND queryid = $qid ORDER BY ts DESC LIMIT 1"), $payoff,
	'the repository\'s payoff history holds them at the last snapshot');
is($repo->safe_psql('powa', "SELECT count(*) = count(DISTINCT ts) AND count(*) = (SELECT count(*)
  FROM powa_jitprof_snapshots WHERE srvid = $srvid) FROM powa_jitprof_advice_history WHERE srvid = $srvid"), 't',
	'and its advice history one row per snapshot');

# The purges of a remote server, with its retention (powa_servers, 1 day
# by default; on PoWA 5.1.2 and later asked per datasource): both run and
# keep a history this young.
my $kept = $repo->safe_psql('powa', "SELECT (SELECT count(*) FROM powa_jitprof_history_current WHERE srvid = $srvid)
  || '|' || (SELECT count(*) FROM powa_jitprof_snapshots WHERE srvid = $srvid)
  || '|' || (SELECT count(*) FROM powa_jitprof_payoff_history WHERE srvid = $srvid)");
my ($pret, undef, $perr) = $repo->psql('powa',
	"SELECT powa_jitprof_purge($srvid); SELECT powa_jitprof_advisor_purge($srvid);");
is($pret, 0, "both purges run for the remote server on PoWA $powa_version") or diag($perr);
is($repo->safe_psql('powa', "SELECT (SELECT count(*) FROM powa_jitprof_history_current WHERE srvid = $srvid)
  || '|' || (SELECT count(*) FROM powa_jitprof_snapshots WHERE srvid = $srvid)
  || '|' || (SELECT count(*) FROM powa_jitprof_payoff_history WHERE srvid = $srvid)"), $kept,
	"and keep its history within the retention ($kept)");

$mon->stop;
$repo->stop;
done_testing();
