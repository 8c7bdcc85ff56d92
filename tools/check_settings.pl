#!/usr/bin/perl
# Check that README's table of settings lists every setting jitprof defines,
# and nothing else.
#
#   tools/check_settings.pl [TOP]     the tree at TOP (default: this one)
#   tools/check_settings.pl --self-test
#                                     shows that a missing row and a row
#                                     of no setting each fail
#
# A setting is a name given to a DefineCustom*Variable call in a .c file
# under TOP/src.  README's table is the one whose header starts
# "| setting |"; a row names its setting in its first cell ("`jitprof.x`").
# Each difference is printed, and the exit status is 1.
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Find;
use File::Path qw(make_path);
use File::Temp qw(tempdir);

# the names defined in the sources under $src
sub defined_settings
{
	my ($src) = @_;
	my %names;
	find(
		{
			no_chdir => 1,
			wanted => sub {
				return unless -f $_ && /\.c$/;
				open my $fh, '<', $_ or die "$_: $!";
				local $/;
				my $text = <$fh>;
				close $fh;
				$names{$1} = $File::Find::name
				  while $text =~ /\bDefineCustom\w+Variable\(\s*"([^"]+)"/g;
			}
		},
		$src);
	return %names;
}

# the names in the first cells of README's table of settings
sub listed_settings
{
	my ($readme) = @_;
	my (%names, $in_table);
	open my $fh, '<', $readme or die "$readme: $!";
	while (my $line = <$fh>)
	{
		if ($line =~ /^\|\s*setting\s*\|/)
		{
			$in_table = 1;
			next;
		}
		next unless $in_table;
		last unless $line =~ /^\|/;
		next if $line =~ /^\|\s*-/;
		my ($cell) = $line =~ /^\|\s*([^|]*?)\s*\|/;
		my ($name) = $cell =~ /^`([^`]+)`$/;
		$names{ $name // $cell } = $.;
	}
	close $fh;
	return %names;
}

sub check
{
	my ($top) = @_;
	my %defined = defined_settings("$top/src");
	my %listed = listed_settings("$top/README.md");
	my @errors;
	push @errors, "$_ (defined in $defined{$_}) has no row in README.md's"
	  . " table of settings"
	  for grep { !$listed{$_} } sort keys %defined;
	push @errors, "README.md:$listed{$_}: $_ is in the table of settings,"
	  . " but no DefineCustom*Variable in src/ defines it"
	  for grep { !$defined{$_} } sort keys %listed;
	return @errors;
}

sub self_test
{
	my ($top) = @_;
	my ($n, $failed) = (0, 0);
	my $expect = sub {
		my ($what, $c_text, $readme_text, $pattern) = @_;
		my $dir = tempdir(CLEANUP => 1);
		make_path("$dir/src/core");
		open my $c, '>', "$dir/src/core/settings.c" or die $!;
		print $c $c_text;
		close $c;
		open my $r, '>', "$dir/README.md" or die $!;
		print $r $readme_text;
		close $r;
		my @errors = check($dir);
		my $ok = defined $pattern
		  ? (grep { /$pattern/ } @errors) > 0
		  : @errors == 0;
		$n++;
		print(($ok ? "ok" : "not ok") . " $n - $what\n");
		if (!$ok)
		{
			print "#   $_\n" for @errors;
			print "#   (no error)\n" unless @errors;
			$failed++;
		}
	};
	my $c = "DefineCustomBoolVariable(\"jitprof.a\", NULL);\n"
	  . "DefineCustomIntVariable(\n\t\"jitprof.b\", NULL);\n";
	my $head = "# x\n\n| setting | default | context | what it does |\n"
	  . "|---|---|---|---|\n";
	my $row_a = "| `jitprof.a` | `on` | superuser | a |\n";
	my $row_b = "| `jitprof.b` | `1` | superuser | b |\n";
	$expect->('a table of every setting passes', $c,
		"$head$row_a$row_b\nafter\n", undef);
	$expect->('a setting without a row fails', $c, "$head$row_a\n",
		qr{^jitprof\.b \(defined in .*\) has no row});
	$expect->('a row of no setting fails', $c,
		"$head$row_a$row_b| `jitprof.c` | `off` | superuser | c |\n",
		qr{^README\.md:\d+: jitprof\.c is in the table of settings});
	print "1..$n\n";
	return $failed ? 1 : 0;
}

my $top = dirname(dirname(__FILE__));
if (@ARGV && $ARGV[0] eq '--self-test')
{
	exit self_test();
}
my @errors = check($ARGV[0] // $top);
print STDERR "check_settings: $_\n" for @errors;
exit(@errors ? 1 : 0);
