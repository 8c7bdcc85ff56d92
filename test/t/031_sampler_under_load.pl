# The sampler and the store under load: eight clients run 10,000 short
# forced-JIT queries (each links and frees its code) with the sampler at
# 1 kHz while another client keeps reading the views without an error.  No
# backend crashes, and the counts add up: every execution and every
# compilation is counted once, and no row has more self than total or total
# than query samples.
#
# Then a store with room for 100 entries is flooded with distinct queries:
# it stays within its bound and counts its evictions.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $clients = 8;
my $per_client = 1250;
my $total = $clients * $per_client;

# JIT forced, but unoptimised, so that 10,000 compilations fit the time.
my $node = jitprof_node('load', conf => q{
jitprof.sample_rate = 1000
jit_optimize_above_cost = -1
jit_inline_above_cost = -1
max_connections = 30
});

my $dir = $node->basedir;
my $writer = "$dir/writer.sql";
my $reader = "$dir/reader.sql";
open my $fh, '>', $writer or die;
print $fh "SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 200 + :client_id) g;\n";
close $fh;
open $fh, '>', $reader or die;
print $fh <<'EOF';
SELECT count(*), sum(self_samples), max(self_pct) FROM jitprof_hotspots;
SELECT count(*), sum(executions), max(jit_pct) FROM jitprof_queries;
SELECT samples_taken, entries FROM jitprof_sampler;
SELECT count(*) FROM jitprof_folded();
EOF
close $fh;

$node->safe_psql('postgres', 'SELECT jitprof_reset()');

# the reader runs until the writers are done.  It must die of our SIGINT
# even where the test itself was started with SIGINT ignored (a shell's
# background job), which its children would inherit.
my ($rout, $rerr) = ('', '');
my $read = IPC::Run::start(
	[ 'pgbench', '-n', '-f', $reader, '-c', '1', '-T', '3600', '-p', $node->port,
	  '-h', $node->host, 'postgres' ],
	init => sub { $SIG{INT} = 'DEFAULT' },
	'>', \$rout, '2>', \$rerr);

my $wrun = run_log(
	[ 'pgbench', '-n', '-f', $writer, '-c', $clients, '-t', $per_client,
	  '-p', $node->port, '-h', $node->host, 'postgres' ]);
ok($wrun, "$clients clients ran $total forced-JIT queries");

# pgbench ends when its only client aborts on an error (exit status 2), so
# a reader that is still running has had no error; it ends by our SIGINT.
# Any line on its stderr (an ERROR, an aborted client, a FATAL, a lost
# connection, a WARNING) is a failure too.
$read->signal('INT');
$read->finish;
my $rstatus = $read->full_result(0);
is($rstatus & 127, 2,
	"the reader ran until interrupted, no exit of its own (wait status $rstatus)");
is($rerr, '', 'the reader printed nothing on stderr');

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal/, 'no backend crashed');

# Every execution and every compilation of the writers' query was counted.
my ($qid, $executions, $qsamples, $self, $tot) = split /\|/, $node->safe_psql('postgres', q{
SELECT queryid, executions, query_samples, jit_self_samples, jit_total_samples
  FROM jitprof_queries
  WHERE queryid = (SELECT queryid FROM jitprof_hotspots
                   WHERE node_type = 'Agg' AND role = 'transition'
                   ORDER BY compilations DESC LIMIT 1)});
is($executions, $total, 'every execution counted once');
cmp_ok($qsamples, '>', 0, "the writers' query was sampled ($qsamples samples)");
cmp_ok($self, '<=', $tot, 'JIT self samples <= JIT total samples');
cmp_ok($tot, '<=', $qsamples, 'JIT total samples <= query samples');

is($node->safe_psql('postgres', qq{
SELECT min(compilations) = $total AND max(compilations) = $total
  FROM jitprof_hotspots WHERE queryid = $qid AND node_type IS NOT NULL}),
	't', 'every function of the query compiled once per execution');

is($node->safe_psql('postgres', q{
SELECT count(*) FROM jitprof_hotspots
  WHERE NOT (self_samples <= total_samples AND total_samples <= query_samples
             AND self_samples >= 0)}),
	'0', 'no row has more self than total or total than query samples');

my ($taken, $jself, $untracked, $evictions) = split /\|/, $node->safe_psql('postgres', q{
SELECT samples_taken, jit_self_samples, functions_untracked, evictions
  FROM jitprof_sampler});
cmp_ok($taken, '>=', $qsamples, 'the health view counts every sample');
is($untracked, '0', 'no function went untracked');
is($evictions, '0', 'nothing evicted');

# A statement nested in a function compiles and frees its code on every
# call, all within one top-level query: more functions than the sampler has
# slots (4096), all counted.
$node->safe_psql('postgres', q{
SELECT jitprof_reset();
CREATE FUNCTION nested_jit(i int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    r bigint;
BEGIN
    SELECT sum(g) INTO r FROM generate_series(1, 50 + i) g WHERE g % 3 = 0;
    RETURN r;
END $$;
});
my $nested = 'SELECT sum(nested_jit(g)) FROM generate_series(1, 2500) g';
my $expected = $node->safe_psql('postgres', "SET jit = off; $nested");
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
is($node->safe_psql('postgres', $nested), $expected,
	'a query calling a function 2500 times answers');
# The nested statement's functions are charged to the top-level query that
# ran them, under their own names (the nested statement's query ID).
is($node->safe_psql('postgres', q{
SELECT count(*) > 0 AND bool_and(compilations = 2500) FROM jitprof_hotspots
  WHERE node_type IS NOT NULL AND symbol NOT LIKE 'q' || queryid || '#%'
    AND queryid = (SELECT queryid FROM jitprof_hotspots WHERE compilations = 2500 LIMIT 1)}),
	't', 'every function of the nested statement counted 2500 compilations');
is($node->safe_psql('postgres', 'SELECT functions_untracked FROM jitprof_sampler'),
	'0', 'no function went untracked');

$node->stop;

# A small store under a flood of distinct queries.
$node = jitprof_node('evict', conf => q{
jitprof.max_hotspots = 100
jit_optimize_above_cost = -1
jit_inline_above_cost = -1
});
my $sql = '';
for my $n (1 .. 150)
{
	# sums of different lengths are different query IDs (PostgreSQL 18
	# jumbles an IN list of constants as one, whatever its length); the
	# planner folds them into one constant
	$sql .= 'SELECT count(*) FROM generate_series(1, 10) g WHERE g <= '
	  . join(' + ', (1) x $n) . ";\n";
}
$node->safe_psql('postgres', $sql);
my ($entries, $evicted) = split /\|/,
  $node->safe_psql('postgres', 'SELECT entries, evictions FROM jitprof_sampler');
cmp_ok($entries, '<=', 100, "the store stays within jitprof.max_hotspots ($entries entries)");
cmp_ok($evicted, '>', 0, "evictions are counted ($evicted)");
is($node->safe_psql('postgres', q{
SELECT count(*) > 0 FROM jitprof_hotspots WHERE node_type = 'FunctionScan'}),
	't', 'recent entries survive eviction');
$node->stop;

done_testing();
