# Tiered JIT's rests (doc/tiering.md, "Resting"): once a tiered query has
# counted its expressions for a window of CPU time, its hottest ones run
# without the counting wrapper until the sampler's next sample puts it
# back, and the work of the rest is credited from the CPU time.  Checked:
# results stay the interpreter's; a query that switches at the rule's
# first check switches at the same count as when it counts every
# evaluation (no rest before the first check); one that switches later
# rests, and switches at about the same count; one that never pays rests
# and never switches; nothing rests when the sampler
# is off or the switch point is forced (whose count stays exact); a cursor
# left resting, closed, or a query that fails while resting leaves the
# next query able to rest, with its results right.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('tiering_rest');
# a qual of 40 additions: 87 steps per row with the count's transition
my $qual = join(' + ', ('a') x 41) . ' > 0';
$node->safe_psql('postgres', q{
CREATE TABLE big AS SELECT (g % 1000)::int AS a FROM generate_series(1, 1000000) g;
ANALYZE big;
});
my $query = "SELECT count(*), sum(a) FROM big WHERE $qual";
my $off = $node->safe_psql('postgres', "SET jit = off; $query");
my $rests = "SET jit = off; SELECT value FROM jitprof_status WHERE name = 'tiering_rests'; RESET jit";
my $round_re = qr/jitprof tiering: round 1 after (\d+) evaluations compiled/;

sub session
{
	my (@sql) = @_;
	return psql_lines($node, "SET client_min_messages = debug1;\n"
		  . "SET jitprof.tiering = on;\nSET jitprof.tiering_min_cost = 0;\n"
		  . "SET jitprof.sample_rate = 1000;\n", [], @sql);
}

# A long query switches at the rule's first check, which a rest never
# delays: with and without rests, the same switch.
my ($counted, $counted_err) = session('SET jitprof.tiering_rest = off', $query, $rests);
my ($first, $first_err) = session($query, $rests);
is($counted->[0], $off, 'counting every evaluation: the interpreter\'s result');
is($counted->[1], '0', 'jitprof.tiering_rest = off: no rest');
is($first->[0], $off, 'resting allowed: the interpreter\'s result');
my ($at_counted) = ($counted_err =~ $round_re);
my ($at_first) = ($first_err =~ $round_re);
ok(defined $at_counted && defined $at_first, 'both switched');
is($at_first, $at_counted, 'the first check is exact: the same switch point');

# Under a LIMIT the rule predicts "as much again" and switches at the
# break-even, about half-way (096): the query rests before, and the work of
# its rests is estimated from the CPU time at the rate counted just
# before, so the switch comes at about the same count.  On a busy host a
# rest's CPU time includes the signal's and the scheduler's, hence the
# factor of two either way.
my $limited = "SELECT count(*), sum(a) FROM (SELECT a FROM big WHERE $qual LIMIT 999999) s";
my ($lim_counted, $lim_counted_err) = session('SET jitprof.tiering_rest = off', $limited, $rests);
my ($lim, $lim_err) = session($limited, $rests);
note("counted: $lim_counted_err\nrested: $lim_err");
is($lim_counted->[0], $off, 'under a LIMIT, counting: the interpreter\'s result');
is($lim->[0], $off, 'under a LIMIT, resting: the interpreter\'s result');
cmp_ok($lim->[1], '>', 0, "under a LIMIT: the query rested ($lim->[1] times)");
my ($lim_at_counted) = ($lim_counted_err =~ $round_re);
my ($lim_at) = ($lim_err =~ $round_re);
ok(defined $lim_at_counted && defined $lim_at, 'under a LIMIT: both switched');
$lim_at_counted //= 1;
$lim_at //= 0;
cmp_ok($lim_at, '>', $lim_at_counted / 2,
	"under a LIMIT: the switch after about as many evaluations ($lim_at against $lim_at_counted)");
cmp_ok($lim_at, '<', $lim_at_counted * 2, 'and not twice as many');

# a query the rule never compiles (both optimising levels forbidden, and
# unoptimised code priced as saving nothing) rests for its whole run
my ($never, $never_err) = session('SET jit_optimize_above_cost = -1',
	'SET jit_inline_above_cost = -1', $query, $rests,
	"SET jit = off; SELECT value FROM jitprof_status WHERE name = 'objects_linked'");
is($never->[0], $off, 'never switching: the interpreter\'s result');
cmp_ok($never->[1], '>', 10, "never switching: it rested ($never->[1] times)");
unlike($never_err, qr/jitprof tiering: round/, 'never switching: no round');
is($never->[2], '0', 'never switching: nothing linked');

# no timer, nothing to wake a query: it never rests
my ($quiet) = session('SET jitprof.sample_rate = 0', $query, $rests);
is($quiet->[0], $off, 'sampler off: the interpreter\'s result');
is($quiet->[1], '0', 'sampler off: no rest');

# a forced switch point counts every evaluation: the switch at exactly it
my ($forced, $forced_err) = session('SET jitprof.tiering_threshold = 300000', $query, $rests);
is($forced->[0], $off, 'forced switch point: the interpreter\'s result');
is($forced->[1], '0', 'forced switch point: no rest');
my ($at_forced) = ($forced_err =~ $round_re);
is($at_forced, '300001', 'forced switch point: the round at the exact count');

# A cursor rests between fetches while another query runs; one closed
# while it rests; a query that fails while it rests.  Each time, the next
# query still rests and gets the interpreter's result: what was armed for
# the one before was taken back when its memory went.
my $rows = "SELECT a, a + 1 FROM big WHERE $qual";
my ($cursor, $cursor_err) = session('SET jit_optimize_above_cost = -1',
	'SET jit_inline_above_cost = -1', 'SET synchronize_seqscans = off', 'BEGIN',
	"DECLARE c CURSOR FOR $rows",
	'MOVE 400000 IN c',
	$rests,
	$query,
	'FETCH 1 FROM c',
	'MOVE ALL IN c',
	'CLOSE c',
	$query,
	$rests,
	'COMMIT');
note($cursor_err);
cmp_ok($cursor->[0], '>', 0, "cursor: it rested while moving ($cursor->[0] times)");
is($cursor->[1], $off, 'cursor: a query between its fetches gets the interpreter\'s result');
my $next_row = $node->safe_psql('postgres',
	"SET jit = off; SET synchronize_seqscans = off; $rows OFFSET 400000 LIMIT 1");
is($cursor->[2], $next_row, 'cursor: the fetch after the query gets the next row');
is($cursor->[3], $off, 'cursor: after it is closed, a query gets the interpreter\'s result');
cmp_ok($cursor->[4], '>', $cursor->[0], 'cursor: after it is closed, a query rests again');

my ($failed, $failed_err) = session('SET jit_optimize_above_cost = -1',
	'SET jit_inline_above_cost = -1',
	"SELECT count(*) FROM big WHERE $qual AND 1 / (a + (ctid <= '(4000,0)')::int) > -1",
	$rests, $query, $rests);
like($failed_err, qr/division by zero/, 'failing query: it failed');
cmp_ok($failed->[0], '>', 0, 'failing query: it had rested before it failed');
is($failed->[1], $off, 'after a failure: the interpreter\'s result');
cmp_ok($failed->[2], '>', $failed->[0], 'after a failure: the next query rests');

done_testing();
