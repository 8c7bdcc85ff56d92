# jitprof.llvmjit_library leading back into jitprof (jitprof itself, its LLVM
# library, a link to either, or a provider that loads jitprof in turn) used
# to make jitprof load itself without end: a log growing by megabytes a
# second, then a stack overflow that restarted the cluster.  Now the setting
# is refused with an ERROR naming it when it is set, and what gets past that
# check turns JIT off for the session with one WARNING: queries return
# their results, interpreted, and the server stays up.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $query = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g';
my $libdir = pkglibdir();
my $tmp = PostgreSQL::Test::Utils::tempdir;
symlink("$libdir/jitprof.so", "$tmp/my_provider.so") or die "symlink: $!";

my $node = jitprof_node('self_reference');

# SET is refused, naming the setting, with a hint.
for my $value ('jitprof', 'jitprof_llvm', '$libdir/jitprof', "$libdir/jitprof.so",
	"$tmp/my_provider")
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
SET jitprof.llvmjit_library = '$value';
$query;
SHOW jitprof.llvmjit_library;
}, on_error_stop => 0);
	like($stderr, qr/ERROR:  invalid value for parameter "jitprof\.llvmjit_library": "\Q$value\E"/,
		"SET jitprof.llvmjit_library = '$value' is an ERROR naming the setting");
	like($stderr, qr/DETAIL:  Library ".*" is part of jitprof, not PostgreSQL's JIT provider\./,
		'  the detail says why');
	like($stderr, qr/HINT:  Set jitprof\.llvmjit_library to PostgreSQL's llvmjit/, '  the hint says what to set');
	is($stdout, "16668333\n\$libdir/llvmjit", '  the query runs, and the setting is unchanged');
}
like($node->safe_psql('postgres', "$query; SELECT value FROM jitprof_status WHERE name = 'linker'"),
	qr/jitlink$/, 'JIT still links through jitprof');

# So is ALTER SYSTEM.
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"ALTER SYSTEM SET jitprof.llvmjit_library = 'jitprof'");
like($stderr, qr/invalid value for parameter "jitprof\.llvmjit_library"/, 'ALTER SYSTEM is refused too');

# In postgresql.conf the value is refused at start-up with the same message;
# the default stays, and JIT works.
$node->append_conf('postgresql.conf', "jitprof.llvmjit_library = 'jitprof'\n");
$node->restart;
like(slurp_file($node->logfile), qr/invalid value for parameter "jitprof\.llvmjit_library": "jitprof"/,
	'a bad value in postgresql.conf is reported in the log');
is($node->safe_psql('postgres', "$query; SELECT value FROM jitprof_status WHERE name = 'linker'"),
	"16668333\njitlink", 'and the server runs with the default, JIT through jitprof');
$node->stop;

# A provider that leads back into jitprof without being jitprof's file: the
# check hook cannot see it; provider start-up does.
my $loops_back = build_test_module('jp_loops_back', PostgreSQL::Test::Utils::tempdir);

for my $preloaded (1, 0)
{
	my $name = $preloaded ? 'loops_back_preloaded' : 'loops_back_provider_only';
	my $conf = "jitprof.llvmjit_library = '$loops_back'\njit_above_cost = 0\n";
	$conf = "jit_provider = 'jitprof'\ncompute_query_id = on\njitprof.tiering = off\n$conf"
	  unless $preloaded;
	$node = jitprof_node($name, conf => $conf, no_defaults => !$preloaded,
		no_extension => !$preloaded);
	my $log_before = -s $node->logfile;

	($ret, $stdout, $stderr) = $node->psql('postgres', "$query;\n$query;\n$query;");
	is($ret, 0, "$name: the queries succeed");
	is($stdout, "16668333\n16668333\n16668333", "$name: with the right results");
	my @warnings = $stderr =~ /WARNING:  jitprof\.llvmjit_library leads back into jitprof/g;
	is(scalar(@warnings), 1, "$name: one WARNING naming the setting");
	like($stderr, qr/DETAIL:  Library "\Q$loops_back\E" loads jitprof's JIT provider in turn\. JIT compilation is disabled for this session\./,
		"$name: the detail names the library");
	like($stderr, qr/HINT:  Set jitprof\.llvmjit_library to PostgreSQL's llvmjit/, "$name: with a hint");
	my $plan = $node->safe_psql('postgres', "EXPLAIN (ANALYZE) $query");
	unlike($plan, qr/JIT:/, "$name: JIT is off in such a session");

	my $log = slurp_file($node->logfile);
	unlike($log, qr/terminated by signal|PANIC|server process .* was terminated/,
		"$name: no process crashed");
	cmp_ok(-s $node->logfile - $log_before, '<', 20_000, "$name: the log stays small");
	$node->stop;
}

done_testing();
