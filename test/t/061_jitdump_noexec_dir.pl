# A jitdump directory on a file system mounted noexec: perf finds a dump
# through an executable mapping of it, which such a mount refuses.  jitprof
# says so in a WARNING naming the directory and the setting to change,
# writes nothing there, and the query runs (issue 10, case 6).
#
# Mounting needs root and the cluster refuses root, so tools/test.sh, run as
# root (as in CI), mounts a small tmpfs with -o noexec and passes its path in
# JITPROF_NOEXEC_DIR; a failed mount stops tools/test.sh.  Run any other way
# (make installcheck as the server's OS user), the test is skipped, saying
# why.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $dir = $ENV{JITPROF_NOEXEC_DIR} // '';
plan skip_all => 'JITPROF_NOEXEC_DIR does not name a noexec mount: run tools/test.sh as root'
  if $dir eq '';

# the directory really is a noexec mount, or this proves nothing
my ($mount) = grep { (split ' ')[1] eq $dir } split /\n/, slurp_file('/proc/mounts');
ok(defined $mount, "$dir is a mount point");
like((split ' ', $mount // '')[3] // '', qr/(^|,)noexec(,|$)/, 'mounted noexec');
ok(-w $dir, 'writable by the server\'s OS user');

my $node = jitprof_node('noexec');
my $small = 'SELECT sum(g) FROM generate_series(1, 100) g';

my ($ret, $out, $err) = $node->psql('postgres',
	"SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$dir'; $small; $small");
is($ret, 0, 'psql succeeded');
is($out, "5050\n5050", 'query results with a noexec jitdump directory');
like($err,
	qr/WARNING:  jitdump directory "\Q$dir\E" is on a file system mounted noexec/,
	'a WARNING says the directory is mounted noexec');
like($err, qr/HINT:  Set jitprof\.jitdump_dir to a directory on a file system mounted without noexec\./,
	'and which setting to change');
is(scalar(() = $err =~ /WARNING/g), 1, 'one WARNING per backend');
ok(!-e "$dir/.debug", 'nothing is written there');
is(scalar(() = glob("$dir/*")), 0, 'the directory stays empty');

$node->stop;
done_testing();
