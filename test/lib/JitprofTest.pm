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

our @EXPORT = qw(jitprof_node jitprof_conf status_value);

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

1;
