# jitprof links llvmjit's code whatever was loaded before it: a library
# linked with libLLVM listed ahead of jitprof in shared_preload_libraries
# (which puts libLLVM ahead of jitprof in the global symbol scope), llvmjit
# itself preloaded first, or llvmjit LOADed in the session before its first
# JIT compilation.  jitprof binds llvmjit.so's own calls (its GOT), so no
# symbol order matters.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# the LLVM jitprof was built against, which is llvmjit's
my $llvm_include = llvm_config('--includedir');
my $llvm_libdir = llvm_config('--libdir');
my @llvm_libs = split ' ', llvm_config('--libs');
my $libllvm = llvmjit_libllvm();

# Any extension module that links libLLVM (test/modules/jp_llvm_user.c).
my $llvm_user = build_test_module('jp_llvm_user', PostgreSQL::Test::Utils::tempdir,
	"-I$llvm_include", '-Wl,--no-as-needed', "-L$llvm_libdir",
	"-Wl,-rpath,$llvm_libdir", @llvm_libs);
like(`readelf -d $llvm_user`, qr/NEEDED.*\[\Q$libllvm\E\]/, "the test module links $libllvm");

my $query = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g';
my $check = qq{$query;
SELECT value FROM jitprof_status WHERE name = 'linker';
SELECT count(*) > 0 FROM jitprof_functions WHERE symbol ~ '^q-?[0-9]+#'};

sub check_order
{
	my ($name, $preload, $setup) = @_;
	my $node = jitprof_node($name, conf => "shared_preload_libraries = '$preload'\n");
	my ($ret, $stdout, $stderr) = $node->psql('postgres', ($setup // '') . $check);
	is($ret, 0, "$name: the queries succeed");
	is($stdout, "16668333\njitlink\nt",
		"$name: jitprof links the code with JITLink and names it");
	unlike($stderr, qr/WARNING/, "$name: no WARNING");
	$node->stop;
	return $node;
}

my $node = check_order('llvm_user_first', "$llvm_user, jitprof");
like(slurp_file($node->logfile), qr/database system is ready/, 'server with the LLVM module first started');
check_order('llvmjit_first', 'llvmjit, jitprof');
check_order('llvm_user_last', "jitprof, $llvm_user");
check_order('load_llvmjit', 'jitprof', "LOAD 'llvmjit';\n");

# Parallel workers load the leader's libraries (llvmjit included) before
# their first JIT compilation, and bind llvmjit the same way: a link failure
# injected into workers is reported by a worker (and RuntimeDyld takes the
# object), so their code went through jitprof's layer.
$node = jitprof_node('parallel', conf => qq{
shared_preload_libraries = '$llvm_user, jitprof'
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
});
$node->safe_psql('postgres', 'CREATE TABLE t AS SELECT g FROM generate_series(1, 100000) g');
my $expected = $node->safe_psql('postgres', 'SET jit = off; SELECT sum(g) FROM t WHERE g % 7 = 1');
my ($ret, $stdout, $stderr) = $node->psql('postgres', q{
SET parallel_leader_participation = off;
SELECT sum(g) FROM t WHERE g % 7 = 1;
});
is($stdout, $expected, 'parallel query with the LLVM module first: right result');
is($stderr, '', '  and no WARNING');
# The fallback WARNING comes once per backend: the leader gives it at the
# first query, so the second query's come from its (new) workers.
($ret, $stdout, $stderr) = $node->psql('postgres', q{
SET parallel_leader_participation = off;
SET jit_optimize_above_cost = -1;
SET jit_inline_above_cost = -1;
SET jitprof.debug_fail_link = on;
SELECT sum(g) FROM t WHERE g % 7 = 1;
SELECT sum(g) FROM t WHERE g % 7 = 1;
});
my @from_workers = $stderr =~ /^psql:<stdin>:7: WARNING:  JIT code could not be linked with JITLink/mg;
cmp_ok(scalar(@from_workers), '>=', 1,
	'workers link through jitprof\'s layer (injected failure reported by a worker)');
like($stderr, qr/DETAIL:  link failure injected by jitprof\.debug_fail_link/, '  with the injected cause');
is($stdout, "$expected\n$expected", '  the queries still succeed (RuntimeDyld took the objects)');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no process crashed');
$node->stop;

done_testing();
