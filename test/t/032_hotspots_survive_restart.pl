# The hotspot store across server restarts: a clean restart keeps every
# counter (pg_stat/jitprof.stat); jitprof.save = off does not; a corrupt or
# foreign file is ignored with a WARNING; after a backend is killed with
# SIGKILL mid-query the cluster recovers, with the store reinitialised empty
# (shared memory is rebuilt and the file is written only at clean shutdown);
# the file holds no pointer; a file of an earlier format is refused with a
# WARNING; the temporary file of an interrupted save is removed with one LOG
# line, an older good file still loading.  Each function row's ordinal (the
# _<n> of a node's second function of a role) is a field of the store that
# jitprof_folded() prints, and survives the restart with the row.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# jitprof_folded()'s JIT-function form is checked below; with plan-node
# data it prints plan paths instead, which sql/plan_nodes.sql checks
my $node = jitprof_node('restart',
	conf => "jitprof.sample_rate = 1000\nrestart_after_crash = on\njitprof.plan_nodes = off\n");
my $file = $node->data_dir . '/pg_stat/jitprof.stat';

my $query = 'SELECT count(*) FROM generate_series(1, 300000) g WHERE sqrt(g::float8) * 3 > 7';
my $expected = $node->safe_psql('postgres', $query);
# two hashed SubPlans in one qual: their per-row functions are numbered
# (subplan_test_2, subplan_hash_left_2) and, neither inlined nor optimized,
# have deform functions named after them (..._subplan_test_2_deform_scan),
# which carry no number of their own
$node->safe_psql('postgres', q{
CREATE TABLE numbered AS SELECT g AS id, g % 7 AS grp FROM generate_series(1, 1000000) g;
CREATE TABLE numbered_u AS SELECT g AS id FROM generate_series(1, 1000) g;
ANALYZE numbered, numbered_u});
my $numbered = 'SELECT count(*) FROM numbered WHERE id NOT IN (SELECT id % 100 FROM numbered_u) AND grp NOT IN (SELECT id % 3 FROM numbered_u)';
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
$node->safe_psql('postgres', "$query; $query; $query");
$node->safe_psql('postgres', "SET jit_inline_above_cost = -1;
SET jit_optimize_above_cost = -1; $numbered; $numbered; $numbered");

# the workload's query ID (the views' own queries are in the store too)
my $qid = $node->safe_psql('postgres', q{
SELECT DISTINCT queryid FROM jitprof_hotspots
  WHERE compilations = 3 AND node_type = 'FunctionScan'});
like($qid, qr/^-?\d+$/, 'one query compiled three times');

my $snapshot = qq{
SELECT string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s', queryid, plan_node_id, role,
                         symbol, self_samples, total_samples, query_samples,
                         compilations), E'\\n' ORDER BY symbol)
  FROM jitprof_hotspots WHERE queryid = $qid};
my $queries = qq{
SELECT format('%s|%s|%s|%s', queryid, executions, query_samples, functions)
  FROM jitprof_queries WHERE queryid = $qid};
my $before = $node->safe_psql('postgres', $snapshot);
my $before_q = $node->safe_psql('postgres', $queries);
like($before, qr/\|3$/m, 'the query\'s functions are in the store');
like($before_q, qr/^-?\d+\|3\|\d+\|[1-9]\d*$/, 'and its summary row');

# The numbered query's folded function lines, and the same lines made in
# SQL from jitprof_hotspots, with the number read from the end of each
# symbol (by the grammar of doc/names.md, the one place it is the
# function's own): what jitprof_folded() prints comes from the field.
my $nqid = $node->safe_psql('postgres', q{
SELECT DISTINCT queryid FROM jitprof_hotspots WHERE role = 'subplan_test'});
like($nqid, qr/^-?\d+$/, 'the numbered query is in the store');
my $folded = qq{
SELECT string_agg(f, E'\\n' ORDER BY f) FROM jitprof_folded() f
  WHERE f LIKE 'q$nqid;%' AND f NOT LIKE '%[outside JIT]%'};
my $from_symbols = qq{
SELECT string_agg(l, E'\\n' ORDER BY l) FROM (
  SELECT format('q%s;%s#%s;%s%s', queryid, coalesce(node_type, 'JIT'),
                plan_node_id, role,
                coalesce(substring(symbol FROM '_[0-9]+\$'), '')) AS frame,
         self_samples AS self, total_samples - self_samples AS called
    FROM jitprof_hotspots WHERE queryid = $nqid) h,
  LATERAL (SELECT frame || ' ' || self WHERE self > 0
           UNION ALL
           SELECT frame || ';[called from JIT] ' || called WHERE called > 0) l(l)};
my $folded_before = $node->safe_psql('postgres', $folded);
note("jitprof_folded() of the numbered query:\n$folded_before");
is($folded_before, $node->safe_psql('postgres', $from_symbols),
	'jitprof_folded() numbers each function as its symbol ends');
like($folded_before, qr/;subplan_[a-z_]+_2 /,
	'a second function of a role is numbered');
is($node->safe_psql('postgres', qq{
SELECT count(*) > 0 FROM jitprof_hotspots
  WHERE queryid = $nqid AND symbol ~ '_2_deform_scan\$'}), 't',
	'the numbered functions have deform functions named after them');

$node->restart;
ok(!-e $file, 'the statistics file is removed once loaded');
is($node->safe_psql('postgres', $snapshot), $before, 'hotspots survive a clean restart');
is($node->safe_psql('postgres', $queries), $before_q, 'query rows survive a clean restart');
is($node->safe_psql('postgres', $folded), $folded_before,
	'the ordinals survive a clean restart');

# jitprof.save = off: nothing written, the store starts empty.
$node->append_conf('postgresql.conf', "jitprof.save = off\n");
$node->restart;
is($node->safe_psql('postgres', $snapshot), '', 'jitprof.save = off starts empty');
is($node->safe_psql('postgres', 'SELECT count(*) < 10 FROM jitprof_hotspots'), 't',
	'with nothing loaded');
$node->append_conf('postgresql.conf', "jitprof.save = on\n");
$node->reload;

# A corrupt file (one flipped byte) and a foreign file are ignored.
$node->safe_psql('postgres', $query);
$node->stop;
ok(-s $file, 'clean shutdown writes the statistics file');
my $data = slurp_file($file);
substr($data, length($data) - 10, 1) = chr(ord(substr($data, length($data) - 10, 1)) ^ 0xff);
open my $fh, '>:raw', $file or die;
print $fh $data;
close $fh;
my $offset = -s $node->logfile;
$node->start;
like(slurp_file($node->logfile, $offset),
	qr/WARNING:  ignoring jitprof statistics file "pg_stat\/jitprof\.stat" because it is corrupt/,
	'a corrupt file is reported');
is($node->safe_psql('postgres', $snapshot), '', 'and its contents ignored');

$node->stop;
open $fh, '>:raw', $file or die;
print $fh "this is not a jitprof statistics file\n" x 10;
close $fh;
$offset = -s $node->logfile;
$node->start;
like(slurp_file($node->logfile, $offset), qr/WARNING:  ignoring jitprof statistics file/,
	'a foreign file is reported');
is($node->safe_psql('postgres', 'SELECT count(*) FROM jitprof_hotspots WHERE node_type = \'FunctionScan\''),
	'0', 'and ignored');

# kill -9 of a backend in the middle of a sampled, JIT-compiled query,
# declared (kill_backend) so that the crash check accepts this one death.
$node->safe_psql('postgres', $query);
my $session = background_session($node, 'postgres');
my $pid = $session->query_safe('SELECT pg_backend_pid()');
$session->query_until(qr/started/, q{
\echo started
SELECT count(*) FROM generate_series(1, 50000000) g WHERE sqrt(g::float8) * 3 > 7;
});
sleep 1;
kill_backend($node, 'KILL', $pid);
$session->quit;
# a killed backend cannot remove its perf map: do it for it
unlink "/tmp/perf-$pid.map";
$node->poll_query_until('postgres', 'SELECT 1', '1') or die 'server did not come back';
like(slurp_file($node->logfile, $offset), qr/terminated by signal 9: Killed/,
	'the postmaster saw the backend die');
is($node->safe_psql('postgres', $query), $expected, 'queries run again after crash recovery');
is($node->safe_psql('postgres', qq{
SELECT max(compilations) FROM jitprof_hotspots WHERE queryid = $qid}),
	'1', 'the store was reinitialised by the crash restart');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM jitprof_hotspots'), '>', 0,
	'and collects again');

# The saved file holds data only: the 8 bytes after the 56-byte header were
# the address of the store's lock in files of jitprof 1.1, and are zero.
$node->safe_psql('postgres', $query);
my $saved = $node->safe_psql('postgres', $snapshot);
like($saved, qr/\|2$/m, 'the query ran twice since the crash');
$node->stop;
$data = slurp_file($file);
is((unpack('L2', $data))[1], 7, 'the saved file has format 7');
is(unpack('H*', substr($data, 56, 8)), '0' x 16,
	'where the lock\'s address was written, the file holds zeros');

# A file of format 6 (before the summary rows counted tiered JIT, jitprof
# 1.3) is refused as a file of another version is, and the server runs.
my $good = $data;
substr($data, 4, 4) = pack('L', 6);
open $fh, '>:raw', $file or die;
print $fh $data;
close $fh;
$offset = -s $node->logfile;
$node->start;
like(slurp_file($node->logfile, $offset),
	qr/WARNING:  ignoring jitprof statistics file "pg_stat\/jitprof\.stat" because it is corrupt or was written by another version of jitprof\n.*DETAIL:  The file has format 6, written by an earlier version of jitprof, and this version reads format 7 only\./,
	'a format 6 file is refused with a WARNING');
ok(!-e $file, '... and removed');
is($node->safe_psql('postgres', $snapshot), '', '... and nothing of it is loaded');
is($node->safe_psql('postgres', $query), $expected, '... and queries run');
$node->stop;
open $fh, '>:raw', $file or die;
print $fh $good;
close $fh;

# A save interrupted by killing the postmaster leaves jitprof.stat.tmp (0
# bytes here, as one was seen).  Beside a good file: one LOG line, and the
# good file is loaded.
my $interrupted = qr/LOG:  removed incomplete jitprof statistics file "pg_stat\/jitprof\.stat\.tmp" left by an interrupted save/;
sub leave_tmp
{
	open my $tmp, '>', "$file.tmp" or die "$file.tmp: $!";
	close $tmp;
}
leave_tmp();
$offset = -s $node->logfile;
$node->start;
my $log = slurp_file($node->logfile, $offset);
is(scalar(() = $log =~ /$interrupted/g), 1,
	'a leftover temporary file beside a good file is logged once');
like($log,
	qr/DETAIL:  The statistics the server held when it last stopped were lost\. Hotspot statistics are read from the older file "pg_stat\/jitprof\.stat"\./,
	'saying the older file is read');
ok(!-e "$file.tmp", 'the temporary file is removed');
is($node->safe_psql('postgres', $snapshot), $saved, 'and the good file is loaded');

# Without a good file (the last start loaded and removed it, as always
# unless jitprof.save was off): one LOG line, and the store starts empty.
$node->stop;
unlink $file or die "$file: $!";
leave_tmp();
$offset = -s $node->logfile;
$node->start;
$log = slurp_file($node->logfile, $offset);
is(scalar(() = $log =~ /$interrupted/g), 1,
	'a leftover temporary file alone is logged once');
like($log,
	qr/DETAIL:  The statistics the server held when it last stopped were lost\. Hotspot statistics start empty\./,
	'saying the statistics start empty');
unlike($log, qr/WARNING/, 'with no WARNING');
ok(!-e "$file.tmp", 'the temporary file is removed');
is($node->safe_psql('postgres', $snapshot), '', 'and the store is empty');
$offset = -s $node->logfile;
$node->restart;
unlike(slurp_file($node->logfile, $offset), $interrupted,
	'the next start has nothing to say');

$node->stop;
done_testing();
