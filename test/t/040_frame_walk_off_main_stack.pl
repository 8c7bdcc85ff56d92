# The sampler's frame walk stays on the main stack.  A SQL function
# (test/modules/jp_altstack.c, built here) spins on a malloc'd stack with a
# frame pointer aimed below the main stack's mapped area, called from a
# JIT-compiled query while the sampler runs at its highest rate: the
# handler must not follow that frame pointer.  The backend survives and the
# result is right.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('altstack', conf => q{
jitprof.sample_rate = 10000
});
my $so = build_test_module('jp_altstack', $node->basedir);
$node->safe_psql('postgres', qq{
CREATE FUNCTION jp_altstack_spin(bigint) RETURNS bigint
  AS '$so' LANGUAGE C STRICT;
});

my $query = 'SELECT sum(jp_altstack_spin(200000000 + g)) FROM generate_series(1, 8) g';
my $expected = $node->safe_psql('postgres',
	'SELECT sum((200000000 + g)::numeric * (200000001 + g) / 2) FROM generate_series(1, 8) g');

$node->safe_psql('postgres', 'SELECT jitprof_reset()');
my ($ret, $out, $err) = $node->psql('postgres', $query);
is($ret, 0, 'the query ran to its end') or diag($err);
is($out, $expected, 'and its result is right');
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server still answers');

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|server process .* was terminated/,
	'no backend was killed');

# The samples were taken while the function spun on its own stack.
my ($executions, $samples) = split /\|/, $node->safe_psql('postgres', q{
SELECT executions, query_samples FROM jitprof_queries
  WHERE queryid = (SELECT queryid FROM jitprof_hotspots WHERE node_type = 'Agg' LIMIT 1)});
is($executions, '1', 'the query was a JIT execution');
cmp_ok($samples, '>', 100, "the sampler took samples during it ($samples)");

$node->stop;
done_testing();
