# jitprof.so, the preloaded library, links no LLVM, libstdc++ or libelf, and
# exports only what PostgreSQL looks up; jitprof_llvm.so exports one entry
# point.  Preloading jitprof therefore maps no libLLVM into the postmaster,
# the checkpointer, a backend that has not JIT-compiled or a tiered one whose
# queries never switched; the first JIT compilation maps it, and jitprof
# links that backend's code.
#
# (The postmaster maps libstdc++ without jitprof: Debian's postgres links
# ICU, which needs it.  So for libstdc++ the test checks jitprof.so's
# DT_NEEDED, not the maps.)
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $libdir = pkglibdir();
my $core = "$libdir/jitprof.so";
my $llvm = "$libdir/jitprof_llvm.so";
ok(-f $core && -f $llvm, 'both libraries are installed in pkglibdir');

# DT_NEEDED
my $needed = `readelf -d $core`;
is($?, 0, 'readelf reads jitprof.so');
my @needed = $needed =~ /\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g;
note("jitprof.so needs: @needed");
ok(@needed > 0, 'jitprof.so lists its needed libraries');
is((grep { /LLVM|stdc\+\+|libelf/ } @needed), 0,
	'jitprof.so needs no libLLVM, libstdc++ or libelf');
my @llvm_needed = `readelf -d $llvm` =~ /\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g;
my $libllvm = llvmjit_libllvm();
is((grep { /^libLLVM/ } @llvm_needed), 1, 'jitprof_llvm.so needs one libLLVM');
ok((grep { $_ eq $libllvm } @llvm_needed),
	"jitprof_llvm.so needs $libllvm, the libLLVM of the server's llvmjit.so");

# Exported symbols: the linker's own (_edata...) aside, only what PostgreSQL
# or jitprof.so looks up by name.
sub exported
{
	my ($lib) = @_;
	my @syms = map { (split ' ')[2] } grep { / [TDBRVW] / } `nm -D --defined-only $lib`;
	return grep { !/^(__bss_start|_edata|_end|_init|_fini)$/ } @syms;
}
# The C functions that the install and update scripts (all of them) name.
my $src = $ENV{JITPROF_SRC} // '.';
my @scripts = glob("$src/jitprof--*.sql");
my @sql_functions = map { slurp_file($_) =~ /'MODULE_PATHNAME', '(\w+)'/g } @scripts;
my %named = map { $_ => 1 } @sql_functions;
my @core_syms = exported($core);
note("jitprof.so exports: @core_syms");
my @unexpected = grep {
	!/^(Pg_magic_func|_PG_init|_PG_jit_provider_init)$/ && !$named{ s/^pg_finfo_//r }
} @core_syms;
is_deeply(\@unexpected, [], 'jitprof.so exports only PostgreSQL entry points (its SQL functions, their info functions, the init functions)');
my %core_syms = map { $_ => 1 } @core_syms;
ok(@sql_functions >= 6, 'the install and update scripts name their C functions');
is_deeply([ grep { !$core_syms{$_} || !$core_syms{"pg_finfo_$_"} } @sql_functions ], [],
	'every SQL-callable function and its info function is exported');
ok($core_syms{_PG_init} && $core_syms{_PG_jit_provider_init} && $core_syms{Pg_magic_func},
	'_PG_init, _PG_jit_provider_init and the magic block are exported');
is_deeply([ sort(exported($llvm)) ], [ 'Pg_magic_func', 'jitprof_llvm_connect' ],
	'jitprof_llvm.so exports its magic block and its one entry point');

# Neither library refers to the other's symbols.
for my $lib ($core, $llvm)
{
	my @undef = grep { /\b(jp_|jitprof_)/ } `nm -D --undefined-only $lib`;
	is_deeply(\@undef, [], "$lib refers to no jitprof symbol of another library");
}

# The processes.
my $node = jitprof_node('footprint', no_defaults => 1, conf => q{
shared_preload_libraries = 'jitprof'
jit_provider = 'jitprof'
compute_query_id = on
jitprof.tiering = off
});

sub llvm_lines
{
	my ($maps) = @_;
	return join '', grep { /libLLVM|libelf|jitprof_llvm/ } split /^/, $maps;
}

my $postmaster = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
my $checkpointer = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
like($checkpointer, qr/^\d+$/, 'checkpointer found');

for ([ 'postmaster', $postmaster ], [ 'checkpointer', $checkpointer ])
{
	my ($what, $pid) = @$_;
	my $maps = maps_of($pid);
	like($maps, qr{/jitprof\.so$}m, "$what maps jitprof.so (it is preloaded)");
	is(llvm_lines($maps), '', "$what maps no libLLVM, libelf or jitprof_llvm.so");
}

my $query = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g';
my $bg = background_session($node, 'postgres');
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
is($bg->query_safe($query), '16668333', 'a query without JIT (default costs)');
is($bg->query_safe("SELECT value FROM jitprof_status WHERE name = 'linker'"), 'none',
	'no linker before the first JIT compilation');
is($bg->query_safe("SELECT value FROM jitprof_status WHERE name = 'llvm_version'"), 'none',
	'jitprof_status does not load LLVM to answer');
my $maps = maps_of($pid);
like($maps, qr{/jitprof\.so$}m, 'the backend maps jitprof.so');
is(llvm_lines($maps), '', 'a backend that has not JIT-compiled maps no libLLVM, libelf or jitprof_llvm.so');

# A tiered query that never switches compiles nothing, so it loads no LLVM
# either (a forced switch point its 10,000 rows never reach).
$bg->query_safe('SET jit_above_cost = 0');
$bg->query_safe('SET jitprof.tiering = on');
$bg->query_safe('SET jitprof.tiering_threshold = 1000000000');
is($bg->query_safe($query), '16668333', 'the same query, tiered, never switching');
# (at least 1: the status query itself may be tiered too)
cmp_ok($bg->query_safe("SELECT value FROM jitprof_status WHERE name = 'tiering_queries'"), '>=', 1,
	'... went through tiering');
is($bg->query_safe("SELECT value FROM jitprof_status WHERE name = 'provider_active'"), 'on',
	'... with jitprof as the JIT provider');
is(llvm_lines(maps_of($pid)), '',
	'a tiered backend whose queries never switched maps no libLLVM, libelf or jitprof_llvm.so');
$bg->query_safe('RESET jitprof.tiering_threshold');
$bg->query_safe('RESET jitprof.tiering');

is($bg->query_safe($query), '16668333', 'the same query JIT-compiled');
$maps = maps_of($pid);
like($maps, qr{/\Q$libllvm\E$}m, "after a JIT compilation the backend maps $libllvm");
like($maps, qr{/jitprof_llvm\.so$}m, '... and jitprof_llvm.so');
is($bg->query_safe("SELECT value FROM jitprof_status WHERE name = 'linker'"), 'jitlink',
	'jitprof links the code, with JITLink');
# the Makefile's installcheck exports the version of the LLVM jitprof is built with
my $built_llvm = $ENV{JITPROF_LLVM_VERSION}
  // die 'JITPROF_LLVM_VERSION is not set: run the tests through make installcheck';
is($bg->query_safe("SELECT value FROM jitprof_status WHERE name = 'llvm_version'"), $built_llvm,
	'jitprof_status reports the LLVM version once loaded');
$bg->quit;

# The postmaster still has none.
is(llvm_lines(maps_of($postmaster)), '', 'the postmaster still maps no LLVM');

$node->stop;
done_testing();
