# Without shared_preload_libraries there is no hotspot store: every view and
# function over it raises an ERROR that says to preload jitprof, and queries
# still run (the sampler stays off).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('no_preload', no_defaults => 1, conf => q{
jit_provider = 'jitprof'
jit_above_cost = 0
compute_query_id = on
jitprof.tiering = off
});

is($node->safe_psql('postgres',
	'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g'),
	'16668333', 'queries run without preloading');

for my $sql ('SELECT * FROM jitprof_hotspots', 'SELECT * FROM jitprof_queries',
	'SELECT * FROM jitprof_sampler', 'SELECT * FROM jitprof_folded()',
	'SELECT jitprof_reset()')
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql);
	isnt($ret, 0, "$sql fails");
	like($stderr,
		qr/ERROR:  jitprof must be loaded via shared_preload_libraries to collect hotspot statistics\n.*HINT:  Add jitprof to shared_preload_libraries/,
		"$sql says to preload jitprof");
}

$node->stop;
done_testing();
