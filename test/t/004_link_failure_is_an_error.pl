# A JITLink failure (injected with jitprof.debug_fail_link, a link pass that
# returns an LLVM error) ends the query with an ERROR; LLVM's message reaches
# the client (llvmjit reports the link error as a WARNING, then fails the
# symbol lookup with an ERROR naming the functions, and jitprof gives that
# ERROR LLVM's message as its CONTEXT); the backend keeps working, answers
# correctly once the failure is
# gone, counts the failures, and repeated failures leak neither code pages,
# mappings nor memory.
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

# One session: fail, then recover.
my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
SET jit = off;
SELECT 'pid', pg_backend_pid();
SET jit = on;
SET jitprof.debug_fail_link = on;
$query;
SET jitprof.debug_fail_link = off;
SELECT 'still', pg_backend_pid();
SELECT 'result';
$query;
SELECT 'status', name, value FROM jitprof_status WHERE name IN ('link_failures', 'objects_linked', 'objects_freed');
}, on_error_stop => 0);

like($stderr, qr/WARNING:  error during JITing: link failure injected by jitprof\.debug_fail_link in graph/,
	"LLVM's link error reaches the client");
like($stderr, qr/ERROR:  failed to look up symbol "evalexpr_\d+_\d+": Failed to materialize symbols/,
	'the query fails with an ERROR from the failed lookup');
like($stderr, qr/ERROR:  failed to look up symbol.*\nCONTEXT:  JIT code could not be linked: link failure injected by jitprof\.debug_fail_link in graph/,
	"the ERROR's context carries LLVM's message");
unlike($stderr, qr/server closed the connection|terminated abnormally/, 'the backend did not die');
my ($pid) = $stdout =~ /^pid\|(\d+)$/m;
my ($pid2) = $stdout =~ /^still\|(\d+)$/m;
is($pid2, $pid, 'the same backend goes on after the failure');
my ($after) = $stdout =~ /^result\n(.*?)\nstatus/ms;
is($after, $expected, 'and gives the right result once linking works again');
my %status = map { (split /\|/)[1, 2] } grep { /^status\|/ } split /\n/, $stdout;
cmp_ok($status{link_failures}, '>', 0, 'link_failures counts the failure');
cmp_ok($status{objects_linked}, '>', 0, 'the recovered query was linked');

# Repeated failures in one backend: each failed link gives its memory back.
my $fail = join('', map { "SELECT count(*) FROM t WHERE a > $_;\n" } 1 .. 300);
my $measure = sub {
	my ($label) = @_;
	return qq{\\o
SET jitprof.debug_fail_link = off;
SET jit = off;
SELECT '$label', 'maps', count(*) FROM regexp_split_to_table(rtrim(pg_read_file('/proc/self/maps'), E'\\n'), E'\\n');
SELECT '$label', 'rss_anon_kb', (regexp_match(pg_read_file('/proc/self/status'), 'RssAnon:\\s+(\\d+) kB'))[1];
SELECT '$label', name, value FROM jitprof_status;
SET jit = on;
SET jitprof.debug_fail_link = on;
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
my @warnings = ($stderr =~ /WARNING:  error during JITing: link failure injected/g);
my @errors = ($stderr =~ /ERROR:  failed to look up symbol/g);
is(scalar(@warnings), 900, 'every one of the 900 queries failed to link');
is(scalar(@errors), 900, 'and ended with an ERROR');
is($m{after}{link_failures} - $m{before}{link_failures}, 600, 'link_failures counted each failure');
note("before: maps $m{before}{maps}, RssAnon $m{before}{rss_anon_kb} kB; after: maps $m{after}{maps}, RssAnon $m{after}{rss_anon_kb} kB");
cmp_ok(abs($m{after}{maps} - $m{before}{maps}), '<=', 10, 'maps flat over 600 failed links');
cmp_ok(abs($m{after}{rss_anon_kb} - $m{before}{rss_anon_kb}), '<=', 2048, 'anonymous memory flat over 600 failed links');
is($m{after}{code_pages_bytes}, '0', 'no code pages left from failed links');
is($m{after}{objects_linked}, $m{after}{objects_freed}, 'no object left live');

# The server log shows the errors, and no crash.
my $log = slurp_file($node->logfile);
like($log, qr/WARNING:  error during JITing: link failure injected.*\n.*ERROR:  failed to look up symbol/, 'server log has the link error and the ERROR');
unlike($log, qr/terminated by signal|PANIC|server process .* exited with exit code [^0]/, 'no backend crashed');

$node->stop;
done_testing();
