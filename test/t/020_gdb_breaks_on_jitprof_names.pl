# With jitprof.gdb on, a gdb attached to a backend breaks on a jitprof name,
# backtraces through it into the executor, forgets the function once the
# query's code is freed, and detaches leaving the backend healthy.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use JitprofTest;

my $query = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g';
my $result = '16668333';

# gdb runs as the cluster's OS user and attaches to a backend it did not
# start: Yama's ptrace_scope must allow that.
if (open my $yama, '<', '/proc/sys/kernel/yama/ptrace_scope')
{
	my $scope = <$yama>;
	chomp $scope;
	diag("kernel.yama.ptrace_scope is $scope: gdb cannot attach to backends; set it to 0")
	  if $scope ne '0';
}

my $node = jitprof_node('gdb');
my $tmp = PostgreSQL::Test::Utils::tempdir;

# gdb stops on the signals PostgreSQL uses among its processes; let them
# through untouched.
my $gdb_prologue = gdb_prologue();

# Start gdb in batch mode on a backend with a script; returns the handle and
# the file its output goes to.  gdb runs under timeout(1), whose SIGTERM
# makes gdb detach (not kill) if a test goes wrong.
my $gdb_runs = 0;

sub start_gdb
{
	my ($pid, $script) = @_;
	$gdb_runs++;
	my $cmds = "$tmp/gdb$gdb_runs.cmd";
	my $out = "$tmp/gdb$gdb_runs.out";
	open my $fh, '>', $cmds or die "could not write $cmds: $!";
	print $fh $gdb_prologue, $script;
	close $fh;
	my $h = IPC::Run::start(
		[ 'timeout', $PostgreSQL::Test::Utils::timeout_default,
		  'gdb', '-nx', '-batch', '-x', $cmds, '-p', $pid ],
		'<', \undef, '>', $out, '2>&1');
	return ($h, $out);
}

# Wait until gdb's output matches, or time out; returns the output.
sub wait_gdb_output
{
	my ($out, $re) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	my $text = '';
	while (time() < $deadline)
	{
		$text = -e $out ? slurp_file($out) : '';
		return $text if $text =~ $re;
		usleep(100_000);
	}
	diag("gdb output so far:\n$text");
	return $text;
}

# gdb's output between two markers echoed by its script
sub section
{
	my ($text, $name) = @_;
	return $text =~ /^\@\@$name\n(.*?)^\@\@/ms ? $1 : '';
}

my $psql = background_session($node, 'postgres');
$psql->query_safe('SET jitprof.gdb = on');
my $pid = $psql->query_safe('SELECT pg_backend_pid()');

# Run the query once to learn the name of its aggregate transition function:
# names are stable across executions.
is($psql->query_safe($query), $result, 'query result before gdb');
my $symbol = $psql->query_safe(
	q{SELECT DISTINCT symbol FROM jitprof_functions
	  WHERE node_type = 'Agg' AND role = 'transition'});
like($symbol, qr/^q-?\d+#\d+_Agg_transition$/, "jitprof name of the aggregate's transition: $symbol");
is($psql->query_safe(
		q{SELECT string_agg(name || '=' || (value::bigint > 0)::text, ',' ORDER BY name)
		  FROM jitprof_status WHERE name IN ('gdb_objects_registered', 'gdb_failures')}),
	'gdb_failures=false,gdb_objects_registered=true',
	'the session registered images with gdb, without failures');

# Break on that name (pending until the query's code is registered), show
# the stack when it is hit, then stop again once the query is over and its
# code freed, and look for the function there.
my ($gdb, $out) = start_gdb($pid, <<"EOF");
set breakpoint pending on
break '$symbol'
echo \@\@READY\\n
continue
echo \@\@HIT\\n
set \$jit_pc = \$pc
info symbol \$pc
printf "jit_pc=0x%lx\\n", \$jit_pc
echo \@\@BT\\n
bt
echo \@\@LISTED\\n
info functions _Agg_transition\$
echo \@\@ENTRIES\\n
maint info jit
echo \@\@
delete
tbreak ReadyForQuery
continue
echo \@\@AFTER\\n
info symbol \$jit_pc
echo \@\@AFTER_LISTED\\n
info functions _Agg_transition\$
echo \@\@AFTER_ENTRIES\\n
maint info jit
echo \@\@DETACH\\n
detach
echo \@\@END\\n
EOF

my $text = wait_gdb_output($out, qr/^\@\@READY$|ptrace: |Could not attach/m);
like($text, qr/Breakpoint 1 \('\Q$symbol\E'\) pending/, 'breakpoint on the jitprof name is pending while no code has it');

# The query runs while gdb is attached; gdb stops it twice and detaches.
my ($qout, $qerr) = $psql->query($query);
is($qout, $result, 'query result with gdb attached and breaking in its JIT code');
is($qerr, 0, 'no error or warning for the query');
$gdb->finish;
$text = slurp_file($out);
note "gdb output:\n$text";

like($text, qr/^Breakpoint 1, 0x[0-9a-f]+ in \Q$symbol\E \(\)$/m, 'breakpoint on the jitprof name is hit');
# gdb 13 (Debian 12) names the image <in-memory@0xADDR>, gdb 16 (Debian 13)
# <in-memory@0xADDR-0xEND>, and omits "+ 0" when the breakpoint is at the
# function's first byte
like(section($text, 'HIT'),
	qr/^\Q$symbol\E(?: \+ \d+)? in section \.text of <in-memory\@0x[0-9a-f]+(?:-0x[0-9a-f]+)?>$/m,
	'the stopped pc belongs to the in-memory image');

my $bt = section($text, 'BT');
like($bt, qr/\A#0  0x[0-9a-f]+ in \Q$symbol\E \(\)$/m, 'bt frame #0 is the jitprof name');
like($bt, qr/^#\d+ .* in standard_ExecutorRun \(\)$/m, 'bt continues into the executor (standard_ExecutorRun)');
like($bt, qr/^#\d+ .* in PortalRun \(\)$/m, 'bt reaches PortalRun');
like($bt, qr/^#\d+ .* in main \(\)$/m, 'bt unwinds to main');

like(section($text, 'LISTED'), qr/^0x[0-9a-f]+\s+\Q$symbol\E$/m, 'gdb lists the function while its code is live');
my @live_entries = section($text, 'ENTRIES') =~ /^0x[0-9a-f]+\s+0x[0-9a-f]+\s+\d+\s*$/mg;
is(scalar @live_entries, 1, 'maint info jit shows the query\'s one registered object');

my ($jit_pc) = $text =~ /^jit_pc=(0x[0-9a-f]+)$/m;
ok(defined $jit_pc, 'pc of the JIT frame recorded');
like(section($text, 'AFTER'), qr/^No symbol matches \$jit_pc\.$/m, 'after the query, gdb no longer knows the address');
unlike(section($text, 'AFTER_LISTED'), qr/\Q$symbol\E/, 'after the query, gdb no longer lists the function');
unlike(section($text, 'AFTER_ENTRIES'), qr/^0x[0-9a-f]+\s+0x/m, 'after the query, no JIT entry is registered');
like($text, qr/\[Inferior 1 \(process $pid\) detached\]/, 'gdb detached');
like($text, qr/^\@\@END$/m, 'gdb ran its whole script');

# The address gdb stopped at is inside the function jitprof_functions reports
# for that execution, now freed.  (Every execution of the query gets the same
# addresses from the code arena, so each of its freed copies covers it.)
my $inside = $psql->query_safe(
	qq{SELECT count(*) FROM (SELECT * FROM jitprof_functions WHERE symbol = '$symbol') f
	   WHERE NOT live
	     AND ('x' || lpad(substr(address, 3), 16, '0'))::bit(64)::bigint <= ('x' || lpad(substr('$jit_pc', 3), 16, '0'))::bit(64)::bigint
	     AND ('x' || lpad(substr('$jit_pc', 3), 16, '0'))::bit(64)::bigint < ('x' || lpad(substr(address, 3), 16, '0'))::bit(64)::bigint + size});
cmp_ok($inside, '>=', 1, 'the breakpoint address lies in the function jitprof reported, since freed');

# After detaching, the backend keeps working and registering.
is($psql->query_safe($query), $result, 'same session answers correctly after gdb detached');
is($psql->query_safe(q{SELECT value FROM jitprof_status WHERE name = 'gdb_objects_live'}), '0',
	'no image stays registered between queries');
$psql->quit;
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $pid"),
	'the backend gdb was attached to exits normally when its session ends');

# With several objects live, freeing one in the middle of gdb's list leaves
# the others registered and the list walkable.
$psql = background_session($node, 'postgres');
$psql->query_safe('SET jitprof.gdb = on');
$pid = $psql->query_safe('SELECT pg_backend_pid()');
$psql->query_safe('BEGIN');
for my $c (1 .. 3)
{
	$psql->query_safe("DECLARE c$c CURSOR FOR SELECT sum(g) + $c FROM generate_series(1, 100) g");
	$psql->query_safe("FETCH c$c");
}
$psql->query_safe('CLOSE c2');
is($psql->query_safe(q{SELECT value FROM jitprof_status WHERE name = 'gdb_objects_live'}), '2',
	'two cursors keep two images registered');
# (The descriptor's type comes from jitprof.so's debug information.)
($gdb, $out) = start_gdb($pid, <<'EOF');
echo @@ENTRIES\n
maint info jit
echo @@FUNCTIONS\n
info functions _Agg_projection$
echo @@DESCRIPTOR\n
info symbol &__jit_debug_descriptor
info variables ^__jit_debug_descriptor$
echo @@LINKS\n
set $first = __jit_debug_descriptor.first_entry
printf "head_prev_null=%d\n", $first->prev_entry == 0
printf "second_prev_is_head=%d\n", $first->next_entry->prev_entry == $first
printf "second_is_last=%d\n", $first->next_entry->next_entry == 0
echo @@
detach
EOF
$gdb->finish;
$text = slurp_file($out);
note "gdb output:\n$text";
my @entries = section($text, 'ENTRIES') =~ /^0x[0-9a-f]+\s+0x[0-9a-f]+\s+\d+\s*$/mg;
is(scalar @entries, 2, 'gdb reads exactly the two live entries from the list');
my @functions = section($text, 'FUNCTIONS') =~ /_Agg_projection$/mg;
is(scalar @functions, 2, 'gdb knows one projection function per open cursor');
my $libllvm = llvmjit_libllvm();
like(section($text, 'DESCRIPTOR'), qr/^__jit_debug_descriptor in section \.data of \S*\/\Q$libllvm\E$/m,
	"the process's one descriptor is ${libllvm}'s");
my @descriptors = section($text, 'DESCRIPTOR') =~ /^0x[0-9a-f]+\s+__jit_debug_descriptor$/mg;
is(scalar @descriptors, 1, 'no second descriptor is defined');
like(section($text, 'LINKS'), qr/^head_prev_null=1\nsecond_prev_is_head=1\nsecond_is_last=1$/m,
	'the list is doubly linked and consistent after freeing its middle entry');
is($psql->query_safe('FETCH c3'), '', 'cursor still usable after gdb attached and detached');
$psql->query_safe('COMMIT');
is($psql->query_safe(q{SELECT value FROM jitprof_status WHERE name = 'gdb_objects_live'}), '0',
	'commit frees the cursors and unregisters their images');
$psql->quit;

# The RuntimeDyld linker feeds the same sink.
$psql = background_session($node, 'postgres');
$psql->query_safe('SET jitprof.linker = rtdyld');
$psql->query_safe('SET jitprof.gdb = on');
$pid = $psql->query_safe('SELECT pg_backend_pid()');
$psql->query_safe('BEGIN');
$psql->query_safe("DECLARE c CURSOR FOR $query");
is($psql->query_safe('FETCH c'), $result, 'cursor result under rtdyld');
is($psql->query_safe(q{SELECT value FROM jitprof_status WHERE name = 'linker'}), 'rtdyld', 'session links with RuntimeDyld');
($gdb, $out) = start_gdb($pid, <<'EOF');
echo @@FUNCTIONS\n
info functions _Agg_transition$
echo @@
detach
EOF
$gdb->finish;
$text = slurp_file($out);
note "gdb output:\n$text";
like(section($text, 'FUNCTIONS'), qr/^0x[0-9a-f]+\s+q-?\d+#\d+_Agg_transition$/m,
	'gdb knows the jitprof name of code linked by RuntimeDyld');
$psql->query_safe('COMMIT');
$psql->quit;

# jitprof.gdb is superuser-only; the stock jit_debugging_support turns the
# sink on too, and without either nothing is registered.
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
my ($ret, $stdout, $stderr) = $node->psql('postgres', 'SET jitprof.gdb = on', extra_params => [ '-U', 'plain' ]);
like($stderr, qr/permission denied to set parameter "jitprof\.gdb"/, 'jitprof.gdb is superuser-only');

is(status_value($node, 'gdb_objects_registered', $query), '0', 'nothing registered by default');
{
	local $ENV{PGOPTIONS} = '-c jit_debugging_support=on';
	cmp_ok(status_value($node, 'gdb_objects_registered', $query), '>', 0,
		'jit_debugging_support = on registers with gdb');
}

# No backend died under or after gdb (a breakpoint left behind kills it
# with SIGTRAP, and the postmaster would restart the cluster).
unlike(slurp_file($node->logfile), qr/terminated by signal/, 'no backend crashed');

$node->stop;
done_testing();
