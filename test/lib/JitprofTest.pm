# Helpers shared by jitprof's TAP tests.
#
# jitprof_node() returns a started PostgreSQL::Test::Cluster configured like
# the regression suite (test/jitprof.conf: jitprof preloaded, chosen as
# jit_provider, JIT forced for every query), plus any extra settings given,
# with the extension created in database "postgres".

package JitprofTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(jitprof_node jitprof_conf status_value build_test_module
  maps_of pkglibdir);

# The regression suite's settings, as a string for append_conf.
sub jitprof_conf
{
	my $src = $ENV{JITPROF_SRC} // '.';
	return slurp_file("$src/test/jitprof.conf");
}

sub jitprof_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%{ $opts{init} // {} });
	$node->append_conf('postgresql.conf',
		($opts{no_defaults} ? '' : jitprof_conf()) . ($opts{conf} // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION jitprof')
	  unless $opts{no_extension};
	return $node;
}

# One value of jitprof_status, as seen by the session running $sql first.
sub status_value
{
	my ($node, $name, $sql) = @_;
	$sql = defined $sql ? "\\o /dev/null\n$sql;\n\\o\n" : '';
	return $node->safe_psql('postgres',
		"${sql}SELECT value FROM jitprof_status WHERE name = '$name'");
}

# Build a small shared library from C source for a test, with the
# server's compiler and flags; returns its path (in a temporary directory the
# server can read).  Extra arguments go to the compiler (libraries, -I).
# The private installation trees of tools/test.sh (JITPROF_PGTREE) hold no
# headers, so the system pg_config is asked for them when needed.
sub build_test_module
{
	my ($name, $source, @extra) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir;
	my $include;
	for my $pg_config ('pg_config', '/usr/bin/pg_config')
	{
		my $dir = `$pg_config --includedir-server 2>/dev/null`;
		chomp $dir;
		if ($dir ne '' && -f "$dir/postgres.h")
		{
			$include = $dir;
			last;
		}
	}
	die "no PostgreSQL server headers found" unless defined $include;
	my $cc = `pg_config --cc`;
	my $cflags = `pg_config --cflags`;
	chomp($cc, $cflags);

	open my $fh, '>', "$dir/$name.c" or die "could not write $dir/$name.c: $!";
	print $fh $source;
	close $fh;
	my $cmd = "$cc $cflags -fPIC -shared -I$include -o $dir/$name.so $dir/$name.c @extra";
	system($cmd) == 0 or die "could not build $name: $cmd";
	return "$dir/$name.so";
}

# The library directory of the installation under test.
sub pkglibdir
{
	my $dir = `pg_config --pkglibdir`;
	chomp $dir;
	return $dir;
}

# /proc/<pid>/maps of a process, as one string.
sub maps_of
{
	my ($pid) = @_;
	return slurp_file("/proc/$pid/maps");
}

1;
