# With jitprof preloaded but jit_provider = 'llvmjit' (the escape hatch back
# to stock JIT), llvmjit stays stock: RuntimeDyld links its code, jitprof
# sees none of it, and LLVM's own perf listener (jit_profiling_support)
# still works.  jitprof rebinds llvmjit's LLVM calls only when it is the
# provider (doc/provider.md), so this llvmjit is never touched.
use strict;
use warnings;

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $dumpdir = PostgreSQL::Test::Utils::tempdir;
local $ENV{JITDUMPDIR} = $dumpdir;

my $node = jitprof_node('stock', conf => q{
jit_provider = 'llvmjit'
jit_profiling_support = on
});

my $query = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g';
is($node->safe_psql('postgres', 'SHOW jit_provider'), 'llvmjit', 'stock provider chosen');

my $plan = $node->safe_psql('postgres', "EXPLAIN (ANALYZE, FORMAT JSON) $query");
like($plan, qr/"JIT":.*"Functions": [1-9]/s, 'stock llvmjit compiled the query');

is($node->safe_psql('postgres', "$query; SELECT string_agg(name || '=' || value, ',' ORDER BY name) FROM jitprof_status WHERE name IN ('linker', 'objects_linked', 'provider_active')"),
	"16668333\nlinker=none,objects_linked=0,provider_active=off",
	'jitprof linked nothing: RuntimeDyld did');

# The listener creates its file when it is created; only a registered one
# writes code-load records into it (the header alone is 40 bytes).
my @sizes;
find(sub { push @sizes, -s $_ if /^jit-\d+\.dump$/ }, $dumpdir);
note("jitdump file sizes: @sizes");
ok((grep { $_ > 40 } @sizes), "LLVM's perf listener, registered, wrote code-load records");

$node->stop;
done_testing();
