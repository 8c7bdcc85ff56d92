# Post-mortem perf: the perf map of a backend that has exited is kept, so
# that "perf record -a -g", then "perf report" once the connection has
# closed, still shows jitprof's names; and the maps kept stay within
# jitprof.perf_map_keep_files and jitprof.perf_map_keep_size, the oldest
# removed first and counted in jitprof_status, while a kept map that was
# replaced (a symbolic link) or rewritten since is never removed.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use JitprofTest;
use JitprofPerf;

my $tmp = PostgreSQL::Test::Utils::tempdir;

# JIT only where a session asks for it, so that the psql calls that read
# jitprof_status compile nothing and leave no map of their own.
# The suite's settings remove maps at exit (test/jitprof.conf): this test
# runs with jitprof's defaults for them.
my $node = jitprof_node('perf_map_post_mortem', no_defaults => 1,
	conf => (jitprof_conf() =~ s/^jitprof\.perf_map_keep_\w+\s*=.*\n//mgr)
	  . "jit_above_cost = 100000000\n");
my $heavy = heavy_table($node, 1_000_000);
my $qid = query_id($node, $heavy);
my $small = 'SELECT sum(g) FROM generate_series(1, 100) g';

sub map_path { return "/tmp/perf-$_[0].map"; }

sub status { return status_value($node, $_[0]); }

# A session whose statements JIT, and its backend's pid.
sub jit_session
{
	my $s = background_session($node, 'postgres', on_error_stop => 0);
	$s->query_safe('SET jit_above_cost = 0');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	return ($s, $pid);
}

# One backend that runs $sql with JIT and exits; returns its pid.
sub run_and_exit
{
	my ($sql) = @_;
	my ($s, $pid) = jit_session();
	$s->query_safe($sql);
	$s->quit;
	wait_for_pid_exit($pid) or die "backend $pid did not exit";
	return $pid;
}

sub reload_with
{
	my ($conf) = @_;
	$node->append_conf('postgresql.conf', $conf);
	$node->reload;
	# a new backend reads the file anew; wait until one sees the change
	my ($name, $value) = $conf =~ /^(\S+)\s*=\s*(\S+)/;
	$node->poll_query_until('postgres', "SHOW $name", $value)
	  or die "$name did not become $value";
	return;
}

is($node->safe_psql('postgres', 'SHOW jitprof.perf_map_keep_files'),
	'64', 'by default 64 maps of exited backends are kept');
is($node->safe_psql('postgres', 'SHOW jitprof.perf_map_keep_size'),
	'64MB', 'and at most 64 MB of them');

# System-wide recording needs root, CAP_PERFMON or perf_event_paranoid <= 0;
# tools/test.sh runs the TAP tests as the server's user with CAP_PERFMON.
my ($may, undef, $why) = perf_run('record', '-e', 'cpu-clock', '-a', '-o',
	"$tmp/probe.data", '--', 'true');
ok($may, 'perf record -a may run here') or die
  "perf record -a failed: run this test as root, with CAP_PERFMON (tools/test.sh gives it) or at perf_event_paranoid <= 0:\n$why";

# --- perf record -a -g while a backend runs a JIT query and exits, then
# --- perf report after it is gone ---
my $first;
{
	my %h = (stdout => '', stderr => '');
	my $run = IPC::Run::start(
		[ 'perf', 'record', '-e', 'cpu-clock', '-a', '-g', '-o', "$tmp/perf.data" ],
		'<', \undef, '>', \$h{stdout}, '2>', \$h{stderr},
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	usleep(1_000_000);

	my ($s, $pid) = jit_session();
	$s->query_safe($heavy) for 1 .. 3;
	$s->quit;
	ok(wait_for_pid_exit($pid), 'backend exited');
	$first = $pid;

	$run->signal('INT');
	$run->finish;
	note "perf record: $h{stderr}";

	ok(-f map_path($pid), 'the map of the exited backend is kept by default');
	my ($ok, $report) = perf_run('report', '-i', "$tmp/perf.data", '--stdio',
		'--no-children', '-g', 'none', '--sort', 'sym', '--pid', $pid,
		'--percentage', 'relative');
	ok($ok, 'perf report ran after the backend had exited');
	my $shares = symbol_shares($report);
	my @ours = grep { /^q\Q$qid\E#\d+_/ } keys %$shares;
	my $named = 0;
	$named += $shares->{$_} for @ours;
	cmp_ok(scalar(@ours), '>', 0,
		"perf report names the exited backend's JIT functions q$qid#...")
	  or diag($report);
	# shares of the backend's own samples (--percentage relative): the heavy
	# query spends a large share in JIT code (010 sees 40 to 70%); 5% is a
	# margin far below that, but far above none
	cmp_ok($named, '>', 5, 'with a real share of the samples');
	my $hex = grep { /^0x0*[0-9a-f]{6,}$/ } keys %$shares;
	note "hex-only symbols in the report: $hex";

	my $kept = status('perf_maps_kept');
	cmp_ok($kept, '>=', 1, 'jitprof_status lists the kept map');
	cmp_ok(status('perf_maps_kept_bytes'), '>=', -s map_path($pid),
		'and counts its bytes');
}

# --- the bound: more exited backends than jitprof.perf_map_keep_files ---
{
	reload_with("jitprof.perf_map_keep_files = 3\n");
	my $kept0 = status('perf_maps_kept');
	my $removed0 = status('perf_maps_removed');
	my @pids = map { run_and_exit($small) } 1 .. 6;

	is(status('perf_maps_kept'), 3, 'three maps kept, the cap');
	ok(!-e map_path($first), 'the post-mortem map, the oldest, was removed');
	ok(!-e map_path($_), "older map of $_ removed") for @pids[ 0 .. 2 ];
	ok(-f map_path($_), "newer map of $_ kept") for @pids[ 3 .. 5 ];
	is(status('perf_maps_removed') - $removed0, $kept0 + 6 - 3,
		'perf_maps_removed counts every map removed');

	# a kept map replaced by a symbolic link, and one rewritten since its
	# backend exited, are never removed: only forgotten
	my $victim = "$tmp/victim";
	append_to_file($victim, "not a perf map\n");
	unlink(map_path($pids[3])) or die "unlink: $!";
	symlink($victim, map_path($pids[3])) or die "symlink: $!";
	append_to_file(map_path($pids[4]), "dead0000 10 written_later\n");
	$removed0 = status('perf_maps_removed');
	my @more = map { run_and_exit($small) } 1 .. 2;
	ok(-l map_path($pids[3]), 'a symbolic link at a kept path is left alone');
	is(slurp_file($victim), "not a perf map\n", 'and its target too');
	like(slurp_file(map_path($pids[4])), qr/written_later/,
		'a kept map written since is left alone');
	is(status('perf_maps_removed') - $removed0, 0,
		'neither counts as removed');
	is(status('perf_maps_kept'), 3, 'the ledger still holds three');
	ok(-f map_path($_), "map of $_ kept") for ($pids[5], @more);
	unlink(map_path($pids[3]), map_path($pids[4]));

	# --- the size bound: small maps until one is removed for it ---
	reload_with("jitprof.perf_map_keep_files = 100\n");
	reload_with("jitprof.perf_map_keep_size = 1kB\n");
	$removed0 = status('perf_maps_removed');
	my @sized;
	while (@sized < 30 && status('perf_maps_removed') == $removed0)
	{
		push @sized, run_and_exit($small);
	}
	cmp_ok(status('perf_maps_removed'), '>', $removed0,
		'maps are removed once the kept maps pass 1 kB');
	my @by_age = ($pids[5], @more, @sized);
	my @left = grep { -e map_path($_) } @by_age;
	my $on_disk = 0;
	$on_disk += -s map_path($_) for @left;
	my $bytes = status('perf_maps_kept_bytes');
	cmp_ok($bytes, '<=', 1024, 'the kept maps hold at most 1 kB');
	is($on_disk, $bytes, 'the maps left in /tmp are the ones counted');
	is(scalar(@left), status('perf_maps_kept'), 'as many as the ledger lists');
	is_deeply(\@left, [ @by_age[ @by_age - @left .. $#by_age ] ],
		'the oldest went first: the maps left are the newest');
	ok(-e map_path($sized[-1]), 'the newest map is kept');

	# --- 0 removes a map at exit, as jitprof did before ---
	reload_with("jitprof.perf_map_keep_files = 0\n");
	my $gone = run_and_exit($small);
	ok(!-e map_path($gone), 'with jitprof.perf_map_keep_files = 0 the map is removed at exit');
	unlink(map_path($_)) for @more, @sized;
}

# leave nothing in /tmp: the maps the ledger still lists go with the node
reload_with("jitprof.perf_map_keep_files = 1\n");
unlink(map_path(run_and_exit($small)));

$node->stop;
done_testing();
