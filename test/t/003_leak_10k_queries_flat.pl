# After warm-up, 10,000 JIT-compiled queries in one backend leave its
# /proc/<pid>/maps line count and its anonymous memory flat, and free every
# object and code page they linked (LLVM 14's JITLink leaks a query's code
# pages unless the memory manager frees them; see code_arena.cpp).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $queries = 10_000;
my $warmup = 500;
my $optimized = 120;

my $node = jitprof_node('leak');
$node->safe_psql('postgres', q{
CREATE TABLE leak_t AS
  SELECT g AS a, g * 2 AS b, 'x' || g AS c FROM generate_series(1, 100) g;
ANALYZE leak_t;
});

# Short queries of a few shapes (scan + deform, projection, hash join, and
# less often the costlier aggregation), each JIT-compiled.
sub workload
{
	my ($n, $offset) = @_;
	my $sql = '';
	for my $i ($offset .. $offset + $n - 1)
	{
		my $k = (0, 1, 0, 3, 0, 1, 0, 2)[$i % 8];
		$sql .=
			$k == 0 ? "SELECT count(*), sum(b) FROM leak_t WHERE a > " . ($i % 50) . ";\n"
		  : $k == 1 ? "SELECT c, a * 2 + $i FROM leak_t WHERE a = " . ($i % 100 + 1) . ";\n"
		  : $k == 2 ? "SELECT a % 5, avg(b) FROM leak_t GROUP BY 1 HAVING count(*) > " . ($i % 3) . " ORDER BY 1;\n"
		  : "SELECT count(*) FROM leak_t t1 JOIN leak_t t2 ON t1.a = t2.b WHERE t1.a < " . ($i % 70) . ";\n";
	}
	return $sql;
}

# Unoptimized JIT keeps 10,000 compilations within half a minute on two
# cores (optimized and inlined ones take ~30 ms each); a shorter optimized
# and inlined run follows, which must not leak code or mappings either.  Its
# warm-up loads the inliner's bitcode (about 25 MB, kept for the backend's
# life), so it is measured from its own baseline.
my $script = "SET jit_optimize_above_cost = -1;\nSET jit_inline_above_cost = -1;\n"
  . "\\o /dev/null\n"
  . workload($warmup, 0)
  . backend_footprint('before')
  . workload($queries, $warmup)
  . backend_footprint('after')
  . "RESET jit_optimize_above_cost;\nRESET jit_inline_above_cost;\n"
  . workload($optimized, 0)
  . backend_footprint('opt_before')
  . workload($optimized, $optimized)
  . backend_footprint('optimized');

my %m = footprint_run($node, $script);

for my $label ('before', 'after', 'opt_before', 'optimized')
{
	note("$label: " . join(', ', map { "$_=" . ($m{$label}{$_} // '?') }
		qw(maps rss_anon_kb anonymous_kb objects_linked objects_freed functions_linked code_pages_bytes epoch)));
}
note(sprintf("%d unoptimized queries took %.1f s, %d optimized ones %.1f s",
	$queries, $m{after}{epoch} - $m{before}{epoch},
	$optimized, $m{optimized}{epoch} - $m{opt_before}{epoch}));

cmp_ok($m{after}{objects_linked} - $m{before}{objects_linked}, '>=', $queries,
	"each of the $queries queries linked JIT code");
is($m{after}{linker}, 'jitlink', 'linked by JITLink');

cmp_ok(abs($m{after}{maps} - $m{before}{maps}), '<=', 10,
	"/proc/pid/maps line count flat over $queries queries ($m{before}{maps} -> $m{after}{maps})");
cmp_ok(abs($m{after}{rss_anon_kb} - $m{before}{rss_anon_kb}), '<=', 2048,
	"RssAnon flat within 2 MB ($m{before}{rss_anon_kb} kB -> $m{after}{rss_anon_kb} kB)");
cmp_ok(abs($m{after}{anonymous_kb} - $m{before}{anonymous_kb}), '<=', 2048,
	"smaps_rollup Anonymous flat within 2 MB ($m{before}{anonymous_kb} kB -> $m{after}{anonymous_kb} kB)");

for my $label ('after', 'optimized')
{
	is($m{$label}{objects_linked} - $m{$label}{objects_freed}, 0, "$label: every linked object was freed");
	is($m{$label}{code_pages_bytes}, '0', "$label: no code pages left committed");
	is($m{$label}{functions_live}, '0', "$label: no function left live");
}

cmp_ok($m{optimized}{objects_linked} - $m{opt_before}{objects_linked}, '>=', $optimized,
	"optimized run linked JIT code for each query");
cmp_ok(abs($m{optimized}{maps} - $m{opt_before}{maps}), '<=', 10,
	"maps flat over $optimized optimized, inlined queries ($m{opt_before}{maps} -> $m{optimized}{maps})");
# (Not the heap: LLVM's optimizer and inliner drift by a megabyte or two over
# a few hundred compilations, under stock llvmjit just as under jitprof;
# the 10,000-query run above is the memory check.)
note("anonymous memory over the optimized run: $m{opt_before}{anonymous_kb} kB -> $m{optimized}{anonymous_kb} kB");

$node->stop;
done_testing();
