#!/usr/bin/perl
# README's own commands, run as a user would run them, against the
# installed Debian package (doc/testing.md, "README's first session").  As
# root, in the package leg (tools/test.sh with JITPROF_INSTALLED=1, which
# runs both as units):
#
#   tools/readme_test.pl links DOCDIR
#       every relative link of DOCDIR/README.md (the installed README)
#       resolves to an installed file (anchors aside)
#   tools/readme_test.pl session README DEBDIR RELEASE MAJOR PORT [TRANSCRIPT]
#       runs README's marked blocks in README's order on a Debian cluster
#       MAJOR/main that it creates on PORT (as installing postgresql-MAJOR
#       does), and drops at the end:
#
#   <!-- readme-test: sh [RELEASE] [uninstall] -->  the fenced block after it
#       runs as root under "bash -euo pipefail", in a directory whose
#       dist/RELEASE/ holds DEBDIR's .debs; with a RELEASE, only on that one
#   <!-- readme-test: psql -->  the fenced block after it is a psql
#       transcript ("postgres=# " and "postgres-# " lines are the input, the
#       rest its output); consecutive psql blocks are one session of
#       "sudo -u postgres psql", which stops at the first error.  Each
#       statement's real output must have the transcript's column headers,
#       rows when it shows rows, the same command tags, and, for a
#       one-column result (EXPLAIN, jitprof_explain), the same lines once
#       numbers are masked.
#
# Before the first "uninstall" block it checks the package's prerm: "apt-get
# remove" of postgresql-MAJOR-jitprof must be refused, naming the cluster,
# while the cluster is configured to load jitprof.  After the last block the
# package must be gone, no jitprof file left in the data directory, and the
# cluster must restart.  The packages are purged before the first block (so
# that README's install line installs them) and reinstalled from DEBDIR at
# the end.  The last line is "readme: ok" or "readme: FAILED: why"; the
# real transcript of every block goes to TRANSCRIPT.
use strict;
use warnings;
use File::Temp qw(tempdir);
use File::Basename qw(dirname);

sub slurp { my ($f) = @_; open(my $h, '<', $f) or die "$f: $!\n"; local $/; my $s = <$h>; close $h; return $s; }

my $mode = shift @ARGV // '';
if ($mode eq 'links') {
	my ($docdir) = @ARGV;
	my $readme = "$docdir/README.md";
	-f $readme or die "readme: FAILED: no $readme (installed compressed?)\n";
	my $text = slurp($readme);
	my ($n, @bad) = (0);
	while ($text =~ /\]\(([^)\s]+)\)/g) {
		my $target = $1;
		next if $target =~ m{^(#|[a-z]+:)};
		$target =~ s/#.*//;
		$n++;
		push @bad, $target unless -e "$docdir/$target";
	}
	if (@bad) {
		print "readme: FAILED: links of $readme to no installed file: @bad\n";
		exit 1;
	}
	print "readme: $n relative links of $readme resolve\nreadme: ok\n";
	exit 0;
}
$mode eq 'session' or die "usage: tools/readme_test.pl links DOCDIR | session README DEBDIR RELEASE MAJOR PORT [TRANSCRIPT]\n";
my ($readme, $debdir, $release, $major, $port, $transcript) = @ARGV;
defined $port or die "usage: tools/readme_test.pl session README DEBDIR RELEASE MAJOR PORT [TRANSCRIPT]\n";

# README's blocks, in order: { kind, release, uninstall, text, line }
my @blocks;
{
	my @lines = split /\n/, slurp($readme);
	for (my $i = 0; $i < @lines; $i++) {
		next unless $lines[$i] =~ /^<!-- readme-test: (sh|psql)((?: [a-z]+)*) -->$/;
		my ($kind, $tags) = ($1, $2);
		my %tag = map { $_ => 1 } split ' ', $tags;
		my $j = $i + 1;
		$j++ while $j < @lines && $lines[$j] =~ /^\s*$/;
		die "readme: FAILED: README line " . ($i + 1) . ": no fenced block after the marker\n"
		  unless $j < @lines && $lines[$j] =~ /^```/;
		my @body;
		for ($j++; $j < @lines && $lines[$j] !~ /^```\s*$/; $j++) { push @body, $lines[$j]; }
		my ($rel) = grep { $_ ne 'uninstall' } keys %tag;
		push @blocks, { kind => $kind, release => $rel, uninstall => $tag{uninstall},
			text => join("\n", @body) . "\n", line => $i + 1 };
	}
}
@blocks or die "readme: FAILED: README marks no block\n";

my $failed;
sub fail { my ($why) = @_; print "readme: FAILED: $why\n"; $failed //= $why; }

my $work = tempdir('/tmp/jitprof-readme.XXXXXX', CLEANUP => 1);
chmod 0755, $work;
system('mkdir', '-p', "$work/dist/$release") == 0 or die;
system("cp $debdir/*.deb $work/dist/$release/") == 0 or die "readme: FAILED: no .debs in $debdir\n";
# "apt install" as README writes it asks before installing dependencies:
# answer yes, as the user would
open(my $ac, '>', "$work/apt.conf") or die;
print $ac "APT::Get::Assume-Yes \"true\";\n";
close $ac;
my %env = (APT_CONFIG => "$work/apt.conf", DEBIAN_FRONTEND => 'noninteractive');
delete @ENV{qw(PGPORT PGHOST PGDATA PGDATABASE PGUSER PGOPTIONS)};
@ENV{keys %env} = values %env;

open(my $tr, '>', $transcript // '/dev/null') or die;

sub run_logged {
	my ($cmd) = @_;
	my $out = `$cmd 2>&1`;
	return ($? >> 8, $out);
}

my @pkgs = grep { !/dbgsym/ } map { m{/([^/_]+)_[^/]*\.deb$} ? $1 : () } glob("$debdir/*.deb");
my $cluster_made;
sub cleanup {
	if ($cluster_made) {
		system("pg_dropcluster --stop $major main >/dev/null 2>&1");
	}
	# the state the package leg set up: every .deb installed
	my ($rc, $out) = run_logged("apt-get install -y -qq --reinstall $debdir/*.deb");
	print "readme: reinstalling $debdir/*.deb failed:\n$out" if $rc;
}

eval {
	my ($rc, $out) = run_logged("pg_lsclusters -h");
	die "clusters exist already, the test needs a fresh system:\n$out" if $out =~ /^$major\s/m;
	# the test's own preparation: sudo, as on most servers; no jitprof
	unless (`dpkg-query -W -f '\${Status}' sudo 2>/dev/null` =~ /install ok installed/) {
		($rc, $out) = run_logged("apt-get install -y -qq sudo");
		die "cannot install sudo:\n$out" if $rc;
	}
	my @installed = split ' ', `dpkg-query -W -f '\${db:Status-Abbrev} \${Package}\n' 'postgresql-$major-jitprof*' 2>/dev/null | awk '\$1 == "ii" { print \$2 }'`;
	if (@installed) {
		($rc, $out) = run_logged("apt-get purge -y -qq @installed");
		die "apt-get purge @installed failed:\n$out" if $rc;
		print "readme: purged @installed, for README's install to install them\n";
	}
	# what installing postgresql-MAJOR does on Debian: a cluster "main"
	($rc, $out) = run_logged("pg_createcluster $major main --port $port --start");
	die "pg_createcluster failed:\n$out" if $rc;
	$cluster_made = 1;

	my $checked_refusal;
	my @session;
	my $flush = sub {
		return unless @session;
		psql_session(@session);
		@session = ();
	};
	for my $b (@blocks) {
		next if $b->{release} && $b->{release} ne $release;
		if ($b->{kind} eq 'psql') {
			push @session, $b;
			next;
		}
		$flush->();
		if ($b->{uninstall} && !$checked_refusal) {
			check_refusal();
			$checked_refusal = 1;
		}
		print $tr "# README line $b->{line}\n\$ $b->{text}";
		print "== README line $b->{line}: sh\n$b->{text}";
		open(my $sh, '>', "$work/block.sh") or die;
		print $sh $b->{text};
		close $sh;
		($rc, $out) = run_logged("cd $work && bash -euo pipefail $work/block.sh");
		print $out;
		print $tr $out, "\n";
		die "the block of README line $b->{line} failed (exit status $rc)\n" if $rc;
	}
	$flush->();
	die "README has no block marked uninstall\n" unless $checked_refusal;

	# after README's uninstall: no package, nothing of jitprof's left in the
	# data directory, and the cluster restarts
	for my $p (@pkgs) {
		die "$p is still installed after README's uninstall\n"
		  if `dpkg-query -W -f '\${Status}' $p 2>/dev/null` =~ /install ok installed/;
	}
	my $data = `pg_conftool -s $major main show data_directory`;
	chomp $data;
	my @left = grep { -e } glob("$data/pg_stat/jitprof*");
	die "jitprof files left in $data: @left\n" if @left;
	($rc, $out) = run_logged("pg_ctlcluster $major main restart && pg_lsclusters -h");
	die "the cluster does not restart after README's uninstall:\n$out" if $rc || $out !~ /^$major\s+main\s+\d+\s+online/m;
	print "readme: after README's uninstall the cluster restarts: $out";
};
fail($@ =~ s/\n$//r) if $@;
cleanup();
close $tr;
print $failed ? "" : "readme: ok\n";
exit($failed ? 1 : 0);

# check_refusal: with the cluster configured to load jitprof, removing the
# package is refused with a message that names the cluster and the way out,
# and leaves the package installed.
sub check_refusal {
	my ($rc, $out) = run_logged("apt-get remove -y postgresql-$major-jitprof");
	print "== apt-get remove postgresql-$major-jitprof while $major/main loads jitprof (must be refused)\n$out";
	die "apt-get remove postgresql-$major-jitprof was not refused while $major/main loads jitprof\n" unless $rc;
	die "the refusal does not name cluster $major/main and the commands to run\n"
	  unless $out =~ m{cluster $major/main } && $out =~ /pg_ctlcluster $major main restart/
	  && $out =~ /(pg_conftool $major main set shared_preload_libraries|ALTER SYSTEM SET shared_preload_libraries)/;
	die "postgresql-$major-jitprof is not installed after the refused removal\n"
	  unless `dpkg-query -W -f '\${Status}' postgresql-$major-jitprof 2>/dev/null` =~ /install ok installed/;
	print "readme: removal refused while $major/main loads jitprof, as it should\n";
}

# mask LINE: numbers (and a leading minus) as N, runs of blanks as one
sub mask { my ($l) = @_; $l =~ s/-?\d[\d.,]*/N/g; $l =~ s/\s+/ /g; $l =~ s/^ | $//g; return $l; }

# shape OUTPUT: [ headers, rows per table, tags, one-column lines ]
sub shape {
	my ($text) = @_;
	my @l = split /\n/, $text;
	my (@headers, @rows, @tags, @single);
	for (my $i = 0; $i < @l; $i++) {
		if ($i + 1 < @l && $l[$i + 1] =~ /^-+(\+-+)*$/) {
			my $one = $l[$i + 1] !~ /\+/;
			push @headers, mask($l[$i]);
			my $n = 0;
			for ($i += 2; $i < @l && $l[$i] !~ /^\(\d+ rows?\)$/; $i++) {
				$n++;
				push @single, mask($l[$i]) if $one;
			}
			push @rows, $n;
		} elsif ($l[$i] =~ /^[A-Z][A-Z ]*[A-Z]( \d+)*$/) {
			push @tags, mask($l[$i]);
		}
	}
	return (\@headers, \@rows, \@tags, \@single);
}

# psql_session BLOCK...: the blocks' statements in one psql session
sub psql_session {
	my @bl = @_;
	my (@stmts, $cur);
	for my $b (@bl) {
		for my $line (split /\n/, $b->{text}) {
			if ($line =~ /^postgres=# (.*)$/) {
				push @stmts, $cur = { sql => $1, expected => '', line => $b->{line} };
			} elsif ($line =~ /^postgres-# (.*)$/) {
				die "README line $b->{line}: a continuation line before any statement\n" unless $cur;
				$cur->{sql} .= "\n$1";
			} else {
				die "README line $b->{line}: output before any statement\n" unless $cur;
				$cur->{expected} .= "$line\n";
			}
		}
	}
	open(my $f, '>', "$work/session.sql") or die;
	for my $i (0 .. $#stmts) {
		print $f "\\echo '\@\@readme $i'\n$stmts[$i]{sql}\n";
	}
	print $f "\\echo '\@\@readme end'\n";
	close $f;
	chmod 0644, "$work/session.sql";
	print "== README lines $bl[0]{line} to $bl[-1]{line}: one psql session of " . scalar(@stmts) . " statements\n";
	my ($rc, $out) = run_logged("cd $work && sudo -u postgres psql -X -v ON_ERROR_STOP=1 -f $work/session.sql");
	my %got;
	my $at;
	for my $line (split /\n/, $out) {
		if ($line =~ /^\@\@readme (\d+|end)$/) { $at = $1; $got{$at} //= ""; next; }
		next unless defined $at;
		$line =~ s/^psql:[^ ]*session\.sql:\d+: //;
		$got{$at} .= "$line\n";
	}
	for my $i (0 .. $#stmts) {
		my $s = $stmts[$i];
		my $g = $got{$i} // '';
		my $shown = join("\n", map { ($_ == 0 ? 'postgres=# ' : 'postgres-# ') . (split /\n/, $s->{sql})[$_] } 0 .. (split /\n/, $s->{sql}) - 1);
		print "$shown\n$g";
		print $tr "$shown\n$g";
		last unless exists $got{$i};
		my ($eh, $er, $et, $es) = shape($s->{expected});
		my ($gh, $gr, $gt, $gs) = shape($g);
		my $what = "README line $s->{line}, statement \"" . (split /\n/, $s->{sql})[0] . "\"";
		fail("$what: column headers [@$gh], README shows [@$eh]") if "@$eh" ne "@$gh";
		for my $k (0 .. $#$er) {
			fail("$what: no rows, README shows $er->[$k]") if $er->[$k] && !($gr->[$k] // 0);
		}
		fail("$what: printed [@$gt], README shows [@$et]") if join('|', @$et) ne join('|', @$gt);
		fail("$what: one-column output differs from README's once numbers are masked:\n  README: " . join("\n          ", @$es) . "\n  real:   " . join("\n          ", @$gs))
		  if join('|', @$es) ne join('|', @$gs);
	}
	die "the psql session of README lines $bl[0]{line} to $bl[-1]{line} stopped (exit status $rc)\n" if $rc;
	die "the psql session did not reach its end\n" unless exists $got{end};
}
