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
#    ends at it;
# and that the places that name its license and maintainer agree:
#  - LICENSE is the PostgreSQL License: its copyright line, then the
#    license's three paragraphs;
#  - debian/copyright's "Files: *" has that copyright holder and year and
#    "License: PostgreSQL", and its "License: PostgreSQL" paragraph is
#    LICENSE's text (DEP-5 continuation lines, words compared);
#  - META.json's "license" is "postgresql" (PGXN's name for it);
#  - both control files' comments name the PostgreSQL License;
#  - every C and C++ file of src/ but a generated one carries LICENSE's
#    copyright line and an IDENTIFICATION line with its own path, as
#    PostgreSQL's files do;
#  - the maintainer of debian/control.in, debian/control, the newest
#    debian/changelog entry, debian/copyright's Upstream-Contact and
#    META.json's only "maintainer" is one name and address.
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

	# the license
	my $license = slurp("$dir/LICENSE");
	my ($holder, $license_text);
	if (!defined $license)
	{
		push @bad, "$dir/LICENSE: missing";
	}
	elsif ($license !~ /^Copyright \(c\) (\d{4}(?:-\d{4})?), (.+?)\s*$/m)
	{
		push @bad, "LICENSE: no \"Copyright (c) YEAR, HOLDER\" line";
	}
	else
	{
		$holder = "$1 $2";
		my $uc = uc $2;
		$license_text = words(substr($license, $+[0]));
		push @bad, "LICENSE: not the PostgreSQL License with $2 as the holder"
		  unless $license_text =~ /^Permission to use, copy, modify, and distribute this software and its documentation for any purpose, without fee, and without a written agreement is hereby granted, provided that the above copyright notice and this paragraph and the following two paragraphs appear in all copies\. IN NO EVENT SHALL \Q$uc\E BE LIABLE .* THE SOFTWARE PROVIDED HEREUNDER IS ON AN "AS IS" BASIS, AND \Q$uc\E HAVE NO OBLIGATIONS TO PROVIDE MAINTENANCE, SUPPORT, UPDATES, ENHANCEMENTS, OR MODIFICATIONS\.$/;
	}
	my $copyright = slurp("$dir/debian/copyright");
	my %para;
	if (!defined $copyright)
	{
		push @bad, "$dir/debian/copyright: missing";
	}
	else
	{
		# DEP-5: paragraphs of fields; a continuation line starts with a
		# space, and " ." is an empty line
		for my $p (split /\n\s*\n/, $copyright)
		{
			my %f;
			my $name;
			for my $line (split /\n/, $p)
			{
				if ($line =~ /^(\S[^:]*):\s*(.*)$/)
				{
					$name = $1;
					$f{$name} = $2;
				}
				elsif (defined $name && $line =~ /^\s+(.*)$/)
				{
					$f{$name} .= "\n" . ($1 eq '.' ? '' : $1);
				}
			}
			if (defined $f{Files} && $f{Files} eq '*')
			{
				$para{files} = \%f;
			}
			elsif (defined $f{License} && !defined $f{Files} && !defined $f{Format})
			{
				my ($short, $text) = split /\n/, $f{License}, 2;
				$para{"license $short"} = $text // '';
			}
			$para{header} = \%f if defined $f{Format};
		}
		my $files = $para{files};
		if (!$files)
		{
			push @bad, "debian/copyright: no \"Files: *\" paragraph";
		}
		else
		{
			push @bad, "debian/copyright: \"Files: *\" has License: " . ($files->{License} // '(none)') . ", not PostgreSQL"
			  unless ($files->{License} // '') eq 'PostgreSQL';
			push @bad, "debian/copyright: \"Files: *\" has Copyright: " . ($files->{Copyright} // '(none)') . ", LICENSE says $holder"
			  if defined $holder && words($files->{Copyright} // '') ne $holder;
		}
		my $text = $para{'license PostgreSQL'};
		if (!defined $text)
		{
			push @bad, "debian/copyright: no \"License: PostgreSQL\" paragraph with its text";
		}
		elsif (defined $license_text && words($text) ne $license_text)
		{
			push @bad, "debian/copyright: the text of \"License: PostgreSQL\" is not LICENSE's";
		}
	}
	if ($meta)
	{
		my $got = $meta->{license} // '(none)';
		push @bad, "META.json: license is $got, not postgresql" if $got ne 'postgresql';
	}
	for my $ext (sort keys %control)
	{
		my $text = slurp($control{$ext}) // next;
		push @bad, "$control{$ext}: its comment does not name the PostgreSQL License"
		  unless $text =~ /^#.*\bThe PostgreSQL License\b/m;
	}

	# each source file's banner: LICENSE's copyright line, its own path
	if (defined $holder)
	{
		my ($line) = $license =~ /^(Copyright \(c\) .*?)\s*$/m;
		for my $path (sort(glob("$dir/src/*.{c,h,cpp}"), glob("$dir/src/*/*.{c,h,cpp}")))
		{
			my $rel = substr($path, length($dir) + 1);
			my $text = slurp($path) // next;
			next if $text =~ /\A\/\* generated by /;
			push @bad, "$rel: its banner lacks LICENSE's line \"$line\""
			  unless $text =~ m{^(?: \*|//) \Q$line\E$}m;
			push @bad, "$rel: its banner lacks \"IDENTIFICATION\" followed by \"$rel\""
			  unless $text =~ m{^(?: \*|//) IDENTIFICATION\n(?: \*|//)\s+\Q$rel\E$}m;
		}
	}

	# the maintainer, as "Name <address>"
	my %maintainer;
	for my $f ('debian/control.in', 'debian/control')
	{
		my $text = slurp("$dir/$f");
		if (!defined $text)
		{
			push @bad, "$dir/$f: missing";
		}
		elsif ($text =~ /^Maintainer:\s*(.*?)\s*$/m)
		{
			$maintainer{$f} = $1;
		}
		else
		{
			push @bad, "$f: no Maintainer field";
		}
	}
	$maintainer{'debian/changelog'} = $1
	  if defined $changelog && $changelog =~ /^ -- (.*?>)  /m;
	$maintainer{"debian/copyright's Upstream-Contact"} = $para{header}{'Upstream-Contact'}
	  if $para{header};
	if ($meta)
	{
		my $m = $meta->{maintainer};
		$m = [$m] if defined $m && ref $m ne 'ARRAY';
		if (!defined $m || @$m != 1)
		{
			push @bad, "META.json: maintainer is not one name and address";
		}
		else
		{
			$maintainer{'META.json'} = $m->[0];
		}
	}
	my $want = $maintainer{'debian/control.in'};
	if (defined $want)
	{
		push @bad, "debian/control.in: Maintainer \"$want\" is not \"Name <address>\""
		  unless $want =~ /^[^<>]+ <[^<>\s]+@[^<>\s]+\.[^<>\s]+>$/;
		for my $f (sort keys %maintainer)
		{
			push @bad, "$f: maintainer is \"$maintainer{$f}\", debian/control.in's is \"$want\""
			  if $maintainer{$f} ne $want;
		}
	}
	return @bad;
}

# TEXT's words, separated by single spaces
sub words
{
	my ($text) = @_;
	return join(' ', split(' ', $text));
}

# Break each rule in a copy of the tree's files and expect a problem, and
# expect none in an unbroken copy.
sub self_test
{
	my @files = qw(jitprof.control META.json debian/changelog
	  integrations/powa/jitprof_powa.control LICENSE debian/copyright
	  debian/control.in debian/control src/jitprof.c);
	my $copy = sub {
		my $dir = tempdir(CLEANUP => 1);
		mkdir "$dir/debian";
		mkdir "$dir/src";
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
		[ 'META.json license changed',
			sub { $edit->("$_[0]/META.json", sub { s/("license"\s*:\s*")[^"]*/${1}mit/ }) } ],
		[ 'LICENSE text changed',
			sub { $edit->("$_[0]/LICENSE", sub { s/HAVE NO OBLIGATIONS/HAS NO OBLIGATIONS/ }) } ],
		[ 'LICENSE copyright year changed',
			sub { $edit->("$_[0]/LICENSE", sub { s/^(Copyright \(c\) )\d+/${1}1999/m }) } ],
		[ 'debian/copyright license text changed',
			sub { $edit->("$_[0]/debian/copyright", sub { s/without fee,/for a fee,/ }) } ],
		[ 'debian/copyright Files: * under another license',
			sub { $edit->("$_[0]/debian/copyright", sub { s/^(License: )PostgreSQL$/${1}MIT/m }) } ],
		[ 'a control file\'s comment without the license',
			sub { $edit->("$_[0]/integrations/powa/jitprof_powa.control", sub { s/The PostgreSQL License/A license/ }) } ],
		[ 'debian/control Maintainer changed',
			sub { $edit->("$_[0]/debian/control", sub { s/^(Maintainer: )\S+/${1}someone/m }) } ],
		[ 'debian/changelog maintainer changed',
			sub { $edit->("$_[0]/debian/changelog", sub { s/^( -- [^<]*<)[^@]*/${1}someone/m }) } ],
		[ 'META.json maintainer changed',
			sub { $edit->("$_[0]/META.json", sub {
				my $meta = JSON::PP->new->decode($_);
				$meta->{maintainer} = ['A Person <a.person@jitprof.example>'];
				$_ = JSON::PP->new->pretty->canonical->encode($meta) }) } ],
		[ 'a source file without the copyright line',
			sub { $edit->("$_[0]/src/jitprof.c", sub { s/^ \* Copyright .*\n//m }) } ],
		[ 'a source file whose IDENTIFICATION names another path',
			sub { $edit->("$_[0]/src/jitprof.c", sub { s{^( \*\s+)src/jitprof\.c$}{${1}src/other.c}m }) } ],
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
