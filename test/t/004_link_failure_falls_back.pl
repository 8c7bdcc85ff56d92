# A JITLink failure (injected with jitprof.debug_fail_link) no longer ends
# the query: jitprof's object layer hands the object to RuntimeDyld, so the
# query gives the right answer, with one WARNING per backend naming the
# reason; link_failures and rtdyld_fallbacks count every such object, the
# functions are still reported to the registry (and so to every sink), and
# repeated fallbacks leak neither code pages, mappings nor memory.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('linkfail');
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a, g % 7 AS b FROM generate_series(1, 1000) g;
ANALYZE t;
});

my $query = 'SELECT b, count(*), sum(a) FROM t WHERE a % 3 <> 0 GROUP BY b ORDER BY b';
my $expected = $node->safe_psql('postgres', "SET jit = off; $query");

# One session: an injected failure, then normal linking again.
my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
SET jit = off;
SELECT 'pid', pg_backend_pid();
SET jit = on;
SET jitprof.debug_fail_link = on;
SELECT 'failed';
$query;
SET jit = off;
SELECT 'mid', name, value FROM jitprof_status;
SET jit = on;
SET jitprof.debug_fail_link = off;
SELECT 'result';
$query;
SET jit = off;
SELECT 'status', name, value FROM jitprof_status;
}, on_error_stop => 0);

is($ret, 0, 'the session succeeded');
my @warnings = $stderr =~ /WARNING:  JIT code could not be linked with JITLink, RuntimeDyld links it instead\nDETAIL:  link failure injected by jitprof\.debug_fail_link in object/g;
is(scalar(@warnings), 1, 'one WARNING names the injected failure');
unlike($stderr, qr/ERROR/, 'no ERROR');
my ($failed) = $stdout =~ /^failed\n(.*?)\nmid/ms;
is($failed, $expected, 'the query with the failed link gives the right answer');
my ($after) = $stdout =~ /^result\n(.*?)\nstatus/ms;
is($after, $expected, 'and so does the next one');
my (%mid, %status);
for (split /\n/, $stdout)
{
	my ($label, $k, $v) = split /\|/, $_, 3;
	$mid{$k} = $v if $label eq 'mid';
	$status{$k} = $v if $label eq 'status';
}
cmp_ok($mid{link_failures}, '>', 0, 'link_failures counts the failure');
is($mid{rtdyld_fallbacks}, $mid{link_failures}, 'each failed object went to RuntimeDyld');
is($mid{objects_linked}, $mid{rtdyld_fallbacks}, 'and RuntimeDyld reported it to the registry');
cmp_ok($mid{functions_linked}, '>', 0, 'with its functions');
is($status{rtdyld_fallbacks}, $mid{rtdyld_fallbacks}, 'without the injection, no more fallbacks');
cmp_ok($status{objects_linked}, '>', $mid{objects_linked}, 'the later query was linked by JITLink');

# Repeated fallbacks in one backend: each object's memory goes back.
my $fail = join('', map { "SELECT count(*) FROM t WHERE a > $_;\n" } 1 .. 300);
my $measure = sub {
	my ($label) = @_;
	return qq{\\o
SET jit = off;
SELECT '$label', 'maps', count(*) FROM regexp_split_to_table(rtrim(pg_read_file('/proc/self/maps'), E'\\n'), E'\\n');
SELECT '$label', 'rss_anon_kb', (regexp_match(pg_read_file('/proc/self/status'), 'RssAnon:\\s+(\\d+) kB'))[1];
SELECT '$label', name, value FROM jitprof_status;
SET jit = on;
\\o /dev/null
};
};
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SET jit_optimize_above_cost = -1;\nSET jit_inline_above_cost = -1;\nSET jitprof.debug_fail_link = on;\n\\o /dev/null\n"
	  . $fail . $measure->('before') . $fail . $fail . $measure->('after'),
	on_error_stop => 0);
my %m;
for (split /\n/, $stdout)
{
	my ($label, $name, $value) = split /\|/, $_, 3;
	$m{$label}{$name} = $value;
}
is($ret, 0, '900 queries with failed links succeeded');
unlike($stderr, qr/ERROR/, 'no ERROR');
is(scalar(() = $stderr =~ /WARNING:  JIT code could not be linked with JITLink/g), 1,
	'one WARNING for the backend');
is($m{after}{link_failures} - $m{before}{link_failures}, 600, 'link_failures counted each failure');
is($m{after}{rtdyld_fallbacks} - $m{before}{rtdyld_fallbacks}, 600, 'rtdyld_fallbacks counted each fallback');
note("before: maps $m{before}{maps}, RssAnon $m{before}{rss_anon_kb} kB; after: maps $m{after}{maps}, RssAnon $m{after}{rss_anon_kb} kB");
cmp_ok(abs($m{after}{maps} - $m{before}{maps}), '<=', 10, 'maps flat over 600 fallbacks');
cmp_ok(abs($m{after}{rss_anon_kb} - $m{before}{rss_anon_kb}), '<=', 2048, 'anonymous memory flat over 600 fallbacks');
is($m{after}{code_pages_bytes}, '0', 'no arena pages used by RuntimeDyld objects');
is($m{after}{objects_linked}, $m{after}{objects_freed}, 'no object left live');

my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC|server process .* exited with exit code [^0]/, 'no backend crashed');

$node->stop;
done_testing();
