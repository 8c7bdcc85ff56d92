# 10,000 tiered queries in one backend (jitprof.tiering, doc/tiering.md)
# leave its /proc/<pid>/maps line count and its anonymous memory flat, free
# every object and code page they linked, and leave no tiering state behind;
# most of them switch mid-scan, some never switch (the method of test 003).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $queries = 10_000;
my $warmup = 300;

my $node = jitprof_node('tiering_leak');
$node->safe_psql('postgres', q{
CREATE TABLE leak_t AS
  SELECT g AS a, g * 2 AS b, 'x' || g AS c FROM generate_series(1, 100) g;
ANALYZE leak_t;
});

# Short queries of a few shapes; with a threshold of 60 evaluations, the
# scans of 100 rows switch mid-scan, the LIMIT 1 ones never do.
sub workload
{
	my ($n, $offset) = @_;
	my $sql = '';
	for my $i ($offset .. $offset + $n - 1)
	{
		my $k = (0, 1, 0, 3, 0, 1, 4, 2)[$i % 8];
		$sql .=
			$k == 0 ? "SELECT count(*), sum(b) FROM leak_t WHERE a > " . ($i % 50) . ";\n"
		  : $k == 1 ? "SELECT c, a * 2 + $i FROM leak_t WHERE a = " . ($i % 100 + 1) . ";\n"
		  : $k == 2 ? "SELECT a % 5, avg(b) FROM leak_t GROUP BY 1 HAVING count(*) > " . ($i % 3) . " ORDER BY 1;\n"
		  : $k == 3 ? "SELECT count(*) FROM leak_t t1 JOIN leak_t t2 ON t1.a = t2.b WHERE t1.a < " . ($i % 70) . ";\n"
		  : "SELECT a + $i FROM leak_t WHERE b > " . ($i % 20) . " LIMIT 1;\n";
	}
	return $sql;
}

my $script = "SET jit_optimize_above_cost = -1;\nSET jit_inline_above_cost = -1;\n"
  . "SET jitprof.tiering = on;\nSET jitprof.tiering_threshold = 60;\n"
  . "\\o /dev/null\n"
  . workload($warmup, 0)
  . backend_footprint('before')
  . workload($queries, $warmup)
  . backend_footprint('after');

my %m = footprint_run($node, $script);
for my $label ('before', 'after')
{
	note("$label: " . join(', ', map { "$_=" . ($m{$label}{$_} // '?') }
		qw(maps rss_anon_kb anonymous_kb objects_linked objects_freed functions_linked code_pages_bytes
		  tiering_queries tiering_switches tiering_functions_compiled tiering_expressions_never_compiled epoch)));
}
my %d = map { $_ => $m{after}{$_} - $m{before}{$_} }
  qw(tiering_queries tiering_switches objects_linked tiering_expressions_never_compiled tiering_failures);

is($d{tiering_queries}, $queries, "each of the $queries queries was tiered");
cmp_ok($d{tiering_switches}, '>=', $queries * 5 / 8, 'the full scans switched');
cmp_ok($d{tiering_switches}, '<', $queries, 'the LIMIT 1 queries did not');
is($d{objects_linked}, $d{tiering_switches}, 'one object linked per switch');
cmp_ok($d{tiering_expressions_never_compiled}, '>', 0, 'expressions never compiled are counted');
is($d{tiering_failures}, 0, 'no failed compile');

cmp_ok(abs($m{after}{maps} - $m{before}{maps}), '<=', 10,
	"/proc/pid/maps line count flat over $queries queries ($m{before}{maps} -> $m{after}{maps})");
cmp_ok(abs($m{after}{rss_anon_kb} - $m{before}{rss_anon_kb}), '<=', 2048,
	"RssAnon flat within 2 MB ($m{before}{rss_anon_kb} kB -> $m{after}{rss_anon_kb} kB)");
cmp_ok(abs($m{after}{anonymous_kb} - $m{before}{anonymous_kb}), '<=', 2048,
	"smaps_rollup Anonymous flat within 2 MB ($m{before}{anonymous_kb} kB -> $m{after}{anonymous_kb} kB)");
is($m{after}{objects_linked} - $m{after}{objects_freed}, 0, 'every linked object was freed');
is($m{after}{code_pages_bytes}, '0', 'no code pages left committed');
is($m{after}{functions_live}, '0', 'no function left live');

$node->stop;
done_testing();
