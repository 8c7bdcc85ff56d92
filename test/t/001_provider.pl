# jitprof as a JIT provider, with and without preloading, and its handling of
# a missing llvmjit and of bad settings.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $query = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g';

# Without shared_preload_libraries: the provider alone still links with
# JITLink.
my $node = jitprof_node('provider_only', no_defaults => 1, conf => q{
jit_provider = 'jitprof'
jit_above_cost = 0
jit_inline_above_cost = 0
jit_optimize_above_cost = 0
jitprof.tiering = off
});

is($node->safe_psql('postgres', $query), '16668333', 'query result under provider-only jitprof');
is(status_value($node, 'linker', $query), 'jitlink', 'provider-only load links with JITLink');
is(status_value($node, 'preloaded', $query), 'off', 'not reported as preloaded');
cmp_ok(status_value($node, 'objects_linked', $query), '>', 0, 'objects linked without preloading');

# A missing llvmjit is named in a WARNING, once, and the session goes on
# without JIT: no query fails because of it.
my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
SET jitprof.llvmjit_library = '\$libdir/no_such_llvmjit';
$query;
$query;
});
is($ret, 0, 'no query fails with a missing llvmjit');
like($stderr, qr{WARNING:  could not find PostgreSQL's JIT provider ".*/no_such_llvmjit\.so"},
	'missing llvmjit named in a WARNING');
like($stderr, qr/DETAIL:  JIT compilation is disabled for this session/, 'detail says JIT is off');
like($stderr, qr/HINT:.*jitprof\.llvmjit_library/, 'hint says what to set');
is(scalar(() = $stderr =~ /could not find PostgreSQL's JIT provider/g), 1, 'said once');
is(scalar(() = $stdout =~ /^16668333$/mg), 2, 'both queries answer, without JIT');

# An unloadable one (not a shared library): the loader's message, the file
# name and what was being loaded, in one WARNING; the query answers.
my $bogus = $node->data_dir . '/not_a_library.so';
open my $fh, '>', $bogus or die;
print $fh "this is not ELF\n";
close $fh;
($ret, $stdout, $stderr) = $node->psql('postgres', qq{
SET jitprof.llvmjit_library = '$bogus';
$query;
});
is($ret, 0, 'no query fails with an unloadable llvmjit');
like($stderr, qr/WARNING:  could not load PostgreSQL's JIT provider "\Q$bogus\E", so JIT compilation is disabled for this session/,
	'unloadable llvmjit named in a WARNING');
like($stderr, qr/DETAIL:  could not load library "\Q$bogus\E"/, 'the loader\'s message is its detail');
like($stdout, qr/^16668333$/m, 'the query answers without JIT');

$node->stop;

# GUCs are checked where jitprof is preloaded (a provider-only session only
# defines them at its first JIT compilation).
$node = jitprof_node('preloaded');

# Bad GUC values are rejected with the allowed values.
($ret, $stdout, $stderr) = $node->psql('postgres', 'SET jitprof.linker = mclinker');
like($stderr, qr/invalid value for parameter "jitprof\.linker": "mclinker".*\n.*Available values: jitlink, rtdyld/,
	'bad jitprof.linker lists the allowed values');

# Ordinary users cannot switch linkers.
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
($ret, $stdout, $stderr) = $node->psql('postgres', 'SET jitprof.linker = rtdyld', extra_params => ['-U', 'plain']);
like($stderr, qr/permission denied to set parameter "jitprof\.linker"/, 'jitprof.linker is superuser-only');

$node->stop;
done_testing();
