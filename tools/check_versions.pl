#!/usr/bin/perl
# Check that the places that name jitprof's version agree (README,
# "Building and packaging"):
#
#   tools/check_versions.pl [TOP]       the files of TOP (default: this tree)
#   tools/check_versions.pl --self-test shows that each rule fails when broken
#
# The rules:
#  - META.json's "version" and provides.jitprof.version are the extension's
#    default_version in jitprof.control, as PGXN's semantic version
#    (default_version 1.3 is 1.3.0);
#  - provides.jitprof_powa.version is integrations/powa/jitprof_powa.control's
#    default_version, the same way;
#  - debian/changelog's newest entry is that version with a Debian revision
#    (1.3.0-1);
#  - each default_version has an install script, or an update script that
#    ends at it.
# Each broken rule is printed, and the exit status is 1.
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Temp qw(tempdir);
use JSON::PP;

my $top = dirname(dirname(__FILE__));

sub slurp
{
	my ($path) = @_;
	open(my $fh, '<', $path) or return undef;
	local $/;
	my $text = <$fh>;
	close $fh;
	return $text;
}

# default_version of a control file, or undef
sub default_version
{
	my ($path) = @_;
	my $text = slurp($path) // return undef;
	return $text =~ /^\s*default_version\s*=\s*'([^']*)'/m ? $1 : undef;
}

# an extension version as PGXN's semantic version: X.Y -> X.Y.0
sub semver
{
	my ($v) = @_;
	return $v =~ /^\d+\.\d+$/ ? "$v.0" : $v;
}

# the problems found in the tree at TOP, one line each
sub problems
{
	my ($dir) = @_;
	my @bad;

	my %control = (
		jitprof => "$dir/jitprof.control",
		jitprof_powa => "$dir/integrations/powa/jitprof_powa.control");
	my %sqldir = (
		jitprof => $dir,
		jitprof_powa => "$dir/integrations/powa");
	my %default;
	for my $ext (sort keys %control)
	{
		my $v = default_version($control{$ext});
		if (!defined $v)
		{
			push @bad, "$control{$ext}: no default_version";
			next;
		}
		$default{$ext} = $v;
		my @scripts = (glob("$sqldir{$ext}/$ext--$v.sql"),
			glob("$sqldir{$ext}/$ext--*--$v.sql"));
		push @bad, "$control{$ext}: default_version $v has no install or update script ($ext--$v.sql or $ext--*--$v.sql)"
		  unless grep { -f } @scripts;
	}

	my $text = slurp("$dir/META.json");
	my $meta;
	if (!defined $text)
	{
		push @bad, "$dir/META.json: missing";
	}
	elsif (!eval { $meta = JSON::PP->new->decode($text); 1 })
	{
		push @bad, "$dir/META.json: not JSON: $@";
	}
	if ($meta && defined $default{jitprof})
	{
		my $want = semver($default{jitprof});
		my $got = $meta->{version} // '(none)';
		push @bad, "META.json: version is $got, jitprof.control's default_version $default{jitprof} is $want"
		  if $got ne $want;
	}
	if ($meta)
	{
		for my $ext (sort keys %default)
		{
			my $want = semver($default{$ext});
			my $got = $meta->{provides}{$ext}{version} // '(none)';
			push @bad, "META.json: provides.$ext.version is $got, its control file's default_version $default{$ext} is $want"
			  if $got ne $want;
		}
	}

	my $changelog = slurp("$dir/debian/changelog");
	if (!defined $changelog)
	{
		push @bad, "$dir/debian/changelog: missing";
	}
	elsif ($changelog !~ /\A\S+ \(([^)]*)\)/)
	{
		push @bad, "debian/changelog: its first line names no version";
	}
	elsif (defined $default{jitprof})
	{
		my $version = $1;
		my $want = semver($default{jitprof});
		push @bad, "debian/changelog: version $version is not $want-REVISION (jitprof.control's default_version $default{jitprof})"
		  unless $version =~ /^\Q$want\E-[0-9A-Za-z.+~]+$/;
	}
	return @bad;
}

# Break each rule in a copy of the tree's files and expect a problem, and
# expect none in an unbroken copy.
sub self_test
{
	my @files = qw(jitprof.control META.json debian/changelog
	  integrations/powa/jitprof_powa.control);
	my $copy = sub {
		my $dir = tempdir(CLEANUP => 1);
		mkdir "$dir/debian";
		mkdir "$dir/integrations";
		mkdir "$dir/integrations/powa";
		for my $f (@files, glob("$top/jitprof--*.sql"),
			glob("$top/integrations/powa/jitprof_powa--*.sql"))
		{
			my $rel = $f =~ s{^\Q$top\E/}{}r;
			my $text = slurp("$top/$rel") // die "$top/$rel: $!";
			open(my $fh, '>', "$dir/$rel") or die "$dir/$rel: $!";
			print $fh $text;
			close $fh;
		}
		return $dir;
	};
	my $edit = sub {
		my ($path, $sub) = @_;
		my $text = slurp($path);
		local $_ = $text;
		$sub->();
		die "self-test: the edit of $path changed nothing" if $_ eq $text;
		open(my $fh, '>', $path) or die "$path: $!";
		print $fh $_;
		close $fh;
	};
	# a control file's next minor version, with an update script to it, so
	# that only the versions elsewhere disagree
	my $bump = sub {
		my ($dir, $control, $ext) = @_;
		my $v = default_version("$dir/$control");
		my ($major, $minor) = $v =~ /^(\d+)\.(\d+)$/ or die "self-test: $control: $v";
		my $next = "$major." . ($minor + 1);
		$edit->("$dir/$control", sub { s/(default_version = ')[^']*/$1$next/ });
		my $script = dirname("$dir/$control") . "/$ext--$v--$next.sql";
		open(my $fh, '>', $script) or die "$script: $!";
		close $fh;
	};
	my @cases = (
		[ 'jitprof.control default_version bumped (with its update script)',
			sub { $bump->($_[0], 'jitprof.control', 'jitprof') } ],
		[ 'META.json version changed',
			sub { $edit->("$_[0]/META.json", sub { s/("version"\s*:\s*")(\d+)\./$1 . ($2 + 1) . '.'/e }) } ],
		[ 'META.json provides.jitprof.version changed',
			sub { $edit->("$_[0]/META.json", sub {
				my $meta = JSON::PP->new->decode($_);
				$meta->{provides}{jitprof}{version} .= '1';
				$_ = JSON::PP->new->pretty->canonical->encode($meta) }) } ],
		[ 'jitprof_powa.control default_version bumped (with its update script)',
			sub { $bump->($_[0], 'integrations/powa/jitprof_powa.control', 'jitprof_powa') } ],
		[ 'debian/changelog upstream version changed',
			sub { $edit->("$_[0]/debian/changelog", sub { s/\A(\S+ \()(\d+)\./$1 . ($2 + 1) . '.'/e }) } ],
		[ 'debian/changelog without a Debian revision',
			sub { $edit->("$_[0]/debian/changelog", sub { s/\A(\S+ \([^)-]*)-[^)]*\)/$1)/ }) } ],
		[ 'META.json not JSON',
			sub { $edit->("$_[0]/META.json", sub { s/\}\s*\z/,/ }) } ],
		[ 'no script ends at the default_version',
			sub {
				my $d = shift;
				my $v = default_version("$d/jitprof.control");
				unlink glob("$d/jitprof--$v.sql"), glob("$d/jitprof--*--$v.sql");
			} ],
	);
	my $failures = 0;
	my @clean = problems($copy->());
	if (@clean)
	{
		print "self-test: an unbroken copy has problems:\n", map { "  $_\n" } @clean;
		$failures++;
	}
	for my $case (@cases)
	{
		my ($name, $break) = @$case;
		my $dir = $copy->();
		$break->($dir);
		my @bad = problems($dir);
		if (@bad)
		{
			print "self-test: $name: caught ($bad[0])\n";
		}
		else
		{
			print "self-test: $name: NOT caught\n";
			$failures++;
		}
	}
	return $failures ? 1 : 0;
}

if (@ARGV && $ARGV[0] eq '--self-test')
{
	exit self_test();
}
my $dir = $ARGV[0] // $top;
my @bad = problems($dir);
print "$_\n" for @bad;
exit(@bad ? 1 : 0);
