# Parallel workers JIT-compile their part of the plan through jitprof too:
# results equal the interpreter's, EXPLAIN (ANALYZE, VERBOSE) shows workers
# launched with JIT code of their own, and a link failure injected into the
# workers only (the leader does not take part) surfaces from a parallel
# worker, which proves their code passes through jitprof's JITLink layer.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('parallel', conf => q{
max_worker_processes = 8
max_parallel_workers = 4
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
min_parallel_index_scan_size = 0
});

$node->safe_psql('postgres', q{
CREATE TABLE big AS
  SELECT g AS id, g % 97 AS grp, (g * 7919) % 100003 AS val, 'row ' || g AS label,
         (g % 1000) / 10.0 AS price
  FROM generate_series(1, 200000) g;
CREATE TABLE dim AS
  SELECT g AS grp, 'group ' || g AS name FROM generate_series(0, 96) g;
ANALYZE big;
ANALYZE dim;
});

my @queries = (
	'SELECT grp, count(*), sum(val), avg(price), max(label) FROM big WHERE val % 3 <> 0 GROUP BY grp ORDER BY grp',
	'SELECT count(*), sum(id::numeric * price), min(val), max(val) FROM big WHERE price > 12.5',
	'SELECT d.name, count(*), sum(b.val) FROM big b JOIN dim d ON b.grp = d.grp WHERE b.id % 5 = 0 GROUP BY d.name ORDER BY d.name',
	'SELECT id, val, label FROM big WHERE val < 20 ORDER BY val, id',
);

for my $q (@queries)
{
	my $off = $node->safe_psql('postgres', "SET jit = off; $q");
	my ($ret, $on, $stderr) = $node->psql('postgres', $q);
	ok($on eq $off && $off ne '', "parallel, forced JIT equals jit = off: " . substr($q, 0, 60));
	is($stderr, '', '  with no warning from the workers');

	my $plan = $node->safe_psql('postgres', "EXPLAIN (ANALYZE, VERBOSE, COSTS ON) $q");
	like($plan, qr/Workers Launched: [1-9]/, '  workers were launched');
	like($plan, qr/^\s+Worker \d+:  actual time=.*\n(?:\s+(?:Batches|Sort Method|Buffers):.*\n)*\s+JIT:\n\s+Functions: [1-9]/m,
		'  a worker reports JIT functions of its own');
}

# Only workers execute the scan; the leader initializes it (compiling its
# expressions) but never runs, so never links, it.
# An injected link failure makes the worker fall back to RuntimeDyld: its
# WARNING reaches the client with a "parallel worker" context, and the
# query succeeds.
my ($ret, $stdout, $stderr) = $node->psql('postgres', q{
\set SHOW_CONTEXT always
SET parallel_leader_participation = off;
SET jit_optimize_above_cost = -1;
SET jit_inline_above_cost = -1;
SET jitprof.debug_fail_link = on;
SELECT count(*) FROM big WHERE val % 1000 = 7;
});
like($stderr, qr/link failure injected by jitprof\.debug_fail_link/, 'workers link through jitprof (injected failure)');
like($stderr, qr/WARNING:  JIT code could not be linked with JITLink(?:.*\n)*?CONTEXT:  parallel worker/, 'the fallback happens in a parallel worker');
is($ret, 0, 'and the query succeeds');

# And with the failure switched off again, the same session is fine.
($ret, $stdout, $stderr) = $node->psql('postgres', q{
SET parallel_leader_participation = off;
SELECT count(*) FROM big WHERE val % 1000 = 7;
});
is($stdout, $node->safe_psql('postgres', 'SET jit = off; SELECT count(*) FROM big WHERE val % 1000 = 7'),
	'workers alone give the right result');

unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no process crashed');

$node->stop;
done_testing();
