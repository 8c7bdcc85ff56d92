# jitprof.steps with jitprof.gdb (issue 12, stage 4): the gdb sink's image
# of each object carries .debug_info and .debug_line made from the step
# tables, so that a gdb attached to a backend says which expression step a
# JIT pc implements ("info line *$pc"), lists the step file around it, and
# stops on a breakpoint set on a step's line of the step file.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use JitprofTest;

# the opcode of float8mul's step on this server
my $call2 = strict_call2_step();

my $node = jitprof_node('steps_gdb');
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $jd = "$tmp/jd";
mkdir $jd or die;
$node->safe_psql('postgres', q{
CREATE TABLE f AS SELECT g::float8 AS a, (g % 10)::float8 AS b
  FROM generate_series(1, 100000) g;
});
my $query = 'SELECT count(*) FROM f WHERE a * b > 1000.5';
my $result = $node->safe_psql('postgres', "SET jit = off; $query");

my $psql = background_session($node, 'postgres');
$psql->query_safe("SET jitprof.gdb = on; SET jitprof.steps = on; SET jitprof.jitdump_dir = '$jd'");
my $pid = $psql->query_safe('SELECT pg_backend_pid()');
is($psql->query_safe($query), $result, 'query result before gdb');
my $symbol = $psql->query_safe(
	q{SELECT DISTINCT symbol FROM jitprof_functions WHERE role = 'qual' AND node_type = 'SeqScan'});
like($symbol, qr/^q-?\d+#\d+_SeqScan_qual$/, "the qual's jitprof name: $symbol");

# Each execution appends the same listing to the step file: measure one
# (between two reads of the file with only the query in between), and find
# the float8mul step's line in the next one.
my ($file) = glob("$jd/.debug/jit/jitprof-steps-*/steps-$pid.txt");
ok(defined $file, 'step file written');
my $before = () = slurp_file($file) =~ /\n/g;
$psql->query_safe($query);
my @lines = split /\n/, slurp_file($file);
my $per_run = @lines - $before;
cmp_ok($per_run, '>', 0, "one execution lists $per_run lines");
my ($mul) = grep { $lines[ $_ - 1 ] =~ /\Q$call2\E float8mul$/ } $before + 1 .. @lines;
ok(defined $mul, "float8mul step on line " . ($mul // '?') . " of that listing");
my $mul_next = $mul + $per_run;

my $script = gdb_prologue() . <<"EOF";
set breakpoint pending on
break '$symbol'
echo \@\@READY\\n
continue
echo \@\@HIT\\n
info line *\$pc
echo \@\@BREAK_STEP\\n
break steps-$pid.txt:$mul_next
continue
echo \@\@STEP\\n
info line *\$pc
echo \@\@LIST\\n
list $mul_next,$mul_next
echo \@\@BT\\n
bt 2
echo \@\@END\\n
delete
detach
EOF
open my $fh, '>', "$tmp/gdb.cmd" or die;
print $fh $script;
close $fh;
my $out = "$tmp/gdb.out";
my $gdb = IPC::Run::start(
	[ 'timeout', $PostgreSQL::Test::Utils::timeout_default,
	  'gdb', '-nx', '-batch', '-x', "$tmp/gdb.cmd", '-p', $pid ],
	'<', \undef, '>', $out, '2>&1');
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
usleep(100_000) until (-e $out && slurp_file($out) =~ /^\@\@READY$/m) || time() > $deadline;

my ($qout, $qerr) = $psql->query($query);
is($qout, $result, 'query result with gdb stopping in its JIT code');
$gdb->finish;
my $text = slurp_file($out);
note "gdb output:\n$text";

sub section
{
	my ($name) = @_;
	return $text =~ /^\@\@$name\n(.*?)^\@\@/ms ? $1 : '';
}

like(section('HIT'), qr/^Line \d+ of "\Q$file\E" starts at address 0x[0-9a-f]+ <\Q$symbol\E(\+\d+)?>/m,
	'info line *$pc at the function entry names a line of the step file');
like(section('BREAK_STEP'), qr/^Breakpoint 2 at 0x[0-9a-f]+: file \Q$file\E, line $mul_next\./m,
	"a breakpoint on the float8mul step's line ($mul_next) resolves to JIT code");
like(section('STEP'), qr/^Line $mul_next of "\Q$file\E" starts at address 0x[0-9a-f]+ <\Q$symbol\E\+\d+>/m,
	'stopped there, info line *$pc names the float8mul step line');
like(section('LIST'), qr/^$mul_next\s+step \d+: \Q$call2\E float8mul$/m,
	'list shows the step');
like(section('BT'), qr/^#0  .*\Q$symbol\E .* at \Q$file\E:$mul_next$/m,
	'the JIT frame is at the step file line');

$psql->quit;
$node->stop;
done_testing();
