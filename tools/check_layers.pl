#!/usr/bin/perl
# Check that jitprof's sources keep to their layers (doc/architecture.md).
#
#   tools/check_layers.pl [SRC]        the #include lines of SRC (default src)
#   tools/check_layers.pl --symbols SRC CORE_OBJS... -- LLVM_OBJS...
#                                      the same rules, over the symbols each
#                                      object file uses from another (nm)
#   tools/check_layers.pl --self-test  shows that each rule fails when broken
#
# The rules: each file under SRC is in one folder, its layer (src/jitprof.c
# is "top"); an include of one of jitprof's headers names its folder
# ("store/store.h"); an include from another folder points down the order
# below and names that folder's interface header; jitprof_llvm.so's folder
# (llvm) uses core only, and nothing includes it; there is no circle between
# folders, nor between files: by includes, and by calls (a function of one
# object file used by another), where a module folder (%MODULE_FOLDERS)
# counts as one file; a setting (a jitprof_* variable) of a folder other
# than core is read only inside it.  Each broken rule is printed with the file, the
# include (or symbol) and the rule, and the exit status is 1.
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Find;
use File::Path qw(make_path);
use File::Temp qw(tempdir);

# bottom first; a folder may use only the folders before it
my @ORDER = qw(core store advisor names link sinks sampler provider hooks views top);
my %RANK;
@RANK{@ORDER} = (0 .. $#ORDER);

# jitprof_llvm.so: a library of its own that sits on core alone
my %LLVM_USES = (core => 1);

# folders whose files are one module by design and call each other both
# ways (doc/layers_inside.md): the circle check by symbols takes such a
# folder as one file
my %MODULE_FOLDERS = (sampler => 1);

# the headers a folder shows to the others
my %INTERFACE = map { $_ => ["$_/$_.h"] } @ORDER;
# the seam between the two libraries is core's too: the C++ files include
# it, and they cannot include core.h (doc/architecture.md)
push @{ $INTERFACE{core} }, 'core/jitprof_llvm.h';
$INTERFACE{llvm} = [];

sub folder_of
{
	my ($rel) = @_;
	return 'top' if $rel eq 'jitprof.c';
	return $1 if $rel =~ m{^([^/]+)/[^/]+$};
	return undef;
}

# Why "from" may not use "to" (a folder each), or undef if it may.
sub layer_rule
{
	my ($from, $to) = @_;
	return undef if $from eq $to;
	if ($from eq 'llvm')
	{
		return $LLVM_USES{$to} ? undef
		  : "jitprof_llvm.so's files (llvm) use core only";
	}
	if ($to eq 'llvm')
	{
		return "only jitprof_llvm.so's own files use llvm; "
		  . "jitprof.so reaches it through core/jitprof_llvm.h";
	}
	return "folder $to is not in the layer table of tools/check_layers.pl"
	  unless defined $RANK{$to};
	return "folder $from is not in the layer table of tools/check_layers.pl"
	  unless defined $RANK{$from};
	return "$from is below $to: an arrow must point down"
	  . " (order: @ORDER)"
	  if $RANK{$to} > $RANK{$from};
	return undef;
}

# A circle in a graph given as { node => { node => 1 } }, as a list, or ().
sub find_circle
{
	my ($graph) = @_;
	my %state;    # 1 on the path, 2 done
	my @path;
	my @circle;
	my $visit;
	$visit = sub {
		my ($n) = @_;
		$state{$n} = 1;
		push @path, $n;
		for my $m (sort keys %{ $graph->{$n} // {} })
		{
			if (($state{$m} // 0) == 1)
			{
				my ($i) = grep { $path[$_] eq $m } 0 .. $#path;
				@circle = (@path[ $i .. $#path ], $m);
				return 1;
			}
			return 1 if !$state{$m} && $visit->($m);
		}
		pop @path;
		$state{$n} = 2;
		return 0;
	};
	for my $n (sort keys %$graph)
	{
		next if $state{$n};
		last if $visit->($n);
	}
	return @circle;
}

sub check_includes
{
	my ($src) = @_;
	my @errors;
	my @files;
	my %exists;
	find(
		{
			no_chdir => 1,
			wanted => sub {
				return unless -f $_ && /\.(c|h|cpp)$/;
				(my $rel = $File::Find::name) =~ s{^\Q$src\E/}{};
				push @files, $rel;
				$exists{$rel} = 1;
			}
		},
		$src);
	my %by_base;
	push @{ $by_base{ (split m{/}, $_)[-1] } }, $_ for @files;
	# made by the build (Makefile), so perhaps not there yet
	$exists{'names/eeop_names.h'} = 1;

	my (%file_graph, %folder_graph);
	for my $rel (sort @files)
	{
		my $from = folder_of($rel);
		if (!defined $from)
		{
			push @errors, "$rel: every source file but src/jitprof.c is in a"
			  . " layer's folder (doc/architecture.md)";
			next;
		}
		open my $fh, '<', "$src/$rel" or die "$src/$rel: $!";
		while (my $line = <$fh>)
		{
			next unless $line =~ /^\s*#\s*include\s+"([^"]+)"/;
			my $inc = $1;
			if ($inc !~ m{/})
			{
				# a bare name is someone else's (postgres.h) unless ours
				next unless $by_base{$inc};
				push @errors, "$rel: #include \"$inc\": name the folder,"
				  . " as in \"$by_base{$inc}[0]\"";
				next;
			}
			# "llvm/Support/Memory.h" and the like are not ours
			next unless $exists{$inc};
			my $to = folder_of($inc);
			$file_graph{$rel}{$inc} = 1;
			next if $to eq $from;
			$folder_graph{$from}{$to} = 1;
			if (my $why = layer_rule($from, $to))
			{
				push @errors, "$rel: #include \"$inc\": $why";
			}
			elsif (!grep { $_ eq $inc } @{ $INTERFACE{$to} })
			{
				push @errors, "$rel: #include \"$inc\": another folder"
				  . " includes only $to\'s interface header"
				  . " (@{ $INTERFACE{$to} })";
			}
		}
		close $fh;
	}
	my @circle = find_circle(\%folder_graph);
	push @errors, "circle between folders: " . join(' -> ', @circle)
	  if @circle;
	@circle = find_circle(\%file_graph);
	push @errors, "circle between files: " . join(' -> ', @circle)
	  if @circle;
	return @errors;
}

# The symbols one library's objects use from each other, as folder arrows.
sub check_symbols
{
	my ($src, $library, @objects) = @_;
	my (%defined_in, %is_function, %uses, @errors);
	for my $obj (@objects)
	{
		for (`nm $obj`)
		{
			my ($type, $sym) = /^\s*\S*\s+([A-Za-z])\s+(\S+)$/ or next;
			if ($type eq 'U')
			{
				$uses{$obj}{$sym} = 1;
			}
			elsif ($type =~ /[A-Z]/)
			{
				$defined_in{$sym} = $obj;
				$is_function{$sym} = 1 if $type eq 'T';
			}
		}
		die "nm $obj failed\n" if $?;
	}
	my (%folder_graph, %file_graph);
	for my $obj (sort keys %uses)
	{
		my $rel = source_of($obj);
		my $from = folder_of($rel);
		for my $sym (sort keys %{ $uses{$obj} })
		{
			my $def = $defined_in{$sym} or next;
			my $drel = source_of($def);
			my $to = folder_of($drel);
			my ($fnode, $tnode) = map {
				$MODULE_FOLDERS{ folder_of($_) } ? folder_of($_) . '/' : $_
			} ($rel, $drel);
			# calls only: a file that reads another's variable (a
			# setting, the store's shared-memory addresses, jp_core) does
			# not call it
			$file_graph{$fnode}{$tnode} = 1
			  if $fnode ne $tnode && $is_function{$sym};
			next if $to eq $from;
			$folder_graph{$from}{$to} = 1;
			if ($sym =~ /^jitprof_/ && !$is_function{$sym} && $to ne 'core')
			{
				push @errors, "$obj ($library): reads $sym of $def: another"
				  . " folder's setting is read through a function of its"
				  . " header (core/settings.c)";
				next;
			}
			my $why = layer_rule($from, $to) or next;
			push @errors, "$obj ($library): uses $sym of $def: $why";
		}
	}
	my @circle = find_circle(\%folder_graph);
	push @errors, "circle between folders ($library, by symbols): "
	  . join(' -> ', @circle)
	  if @circle;
	@circle = find_circle(\%file_graph);
	push @errors, "circle between files ($library, by symbols): "
	  . join(' -> ', @circle)
	  if @circle;
	return @errors;
}

# "…/src/names/naming.o" -> "names/naming.c" (a .cpp's object is named as a
# .c: only its folder and its stem matter here)
sub source_of
{
	my ($obj) = @_;
	(my $rel = $obj) =~ s{^.*\bsrc/(?=[^/]+(?:/[^/]+)?$)}{};
	$rel =~ s/\.o$/.c/;
	return $rel;
}

sub report
{
	my @errors = @_;
	print STDERR "check_layers: $_\n" for @errors;
	return @errors ? 1 : 0;
}

# Copy the .c, .h and .cpp files of "src" to a new directory.
sub copy_tree
{
	my ($src) = @_;
	my $dir = tempdir(CLEANUP => 1);
	find(
		{
			no_chdir => 1,
			wanted => sub {
				return unless -f $_ && /\.(c|h|cpp)$/;
				(my $rel = $File::Find::name) =~ s{^\Q$src\E/}{};
				make_path(dirname("$dir/$rel"));
				copy($_, "$dir/$rel") or die "copy $_: $!";
			}
		},
		$src);
	return $dir;
}

sub append
{
	my ($file, $text) = @_;
	open my $fh, '>>', $file or die "$file: $!";
	print $fh $text;
	close $fh;
}

sub self_test
{
	my ($src) = @_;
	my $failed = 0;
	my $n = 0;

	# one TAP line: the case passes when an error matches $pattern, or,
	# with no pattern, when there is no error
	my $verdict = sub {
		my ($what, $pattern, @errors) = @_;
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
	my $expect = sub {
		my ($what, $change, $pattern) = @_;
		my $dir = copy_tree($src);
		$change->($dir);
		my @errors = check_includes($dir);
		$verdict->($what, $pattern, @errors);
	};
	$expect->('the sources as they are pass', sub { }, undef);
	$expect->(
		'an include pointing up fails',
		sub { append("$_[0]/store/store.c", "#include \"sampler/sampler.h\"\n") },
		qr{^store/store\.c: #include "sampler/sampler\.h": store is below sampler});
	$expect->(
		'an include of another folder\'s inner header fails',
		sub { append("$_[0]/views/status.c", "#include \"sampler/sampler_shared.h\"\n") },
		qr{^views/status\.c: #include "sampler/sampler_shared\.h": another folder includes only sampler's interface});
	$expect->(
		'jitprof.so including jitprof_llvm.so\'s headers fails',
		sub { append("$_[0]/provider/provider.c", "#include \"llvm/linker.h\"\n") },
		qr{^provider/provider\.c: #include "llvm/linker\.h": only jitprof_llvm\.so's own files});
	$expect->(
		'jitprof_llvm.so including more than core fails',
		sub { append("$_[0]/llvm/sink_gdb.c", "#include \"link/link.h\"\n") },
		qr{^llvm/sink_gdb\.c: #include "link/link\.h": jitprof_llvm\.so's files \(llvm\) use core only});
	$expect->(
		'an include without its folder fails',
		sub { append("$_[0]/views/hotspots.c", "#include \"store.h\"\n") },
		qr{^views/hotspots\.c: #include "store\.h": name the folder});
	$expect->(
		'a circle between two files of one folder fails',
		sub {
			append("$_[0]/names/circle_a.h", "#include \"names/circle_b.h\"\n");
			append("$_[0]/names/circle_b.h", "#include \"names/circle_a.h\"\n");
		},
		qr{^circle between files: names/circle_a\.h -> names/circle_b\.h -> names/circle_a\.h$});
	$expect->(
		'a source file outside the folders fails',
		sub { append("$_[0]/stray.c", "#include \"core/core.h\"\n") },
		qr{^stray\.c: every source file but src/jitprof\.c is in a layer's folder});

	# by symbols: objects compiled from the given sources
	my $objects = sub {
		my ($what, $sources, $pattern) = @_;
		my $dir = tempdir(CLEANUP => 1);
		my @objects;
		for my $f (sort keys %$sources)
		{
			make_path(dirname("$dir/src/$f"));
			append("$dir/src/$f", $sources->{$f});
			(my $obj = "$dir/src/$f") =~ s/\.c$/.o/;
			system($ENV{CC} // 'cc', '-c', '-o', $obj, "$dir/src/$f") == 0
			  or die "cannot compile $dir/src/$f\n";
			push @objects, $obj;
		}
		my @errors = check_symbols("$dir/src", 'jitprof.so', @objects);
		$verdict->($what, $pattern, @errors);
	};
	my $circle = sub {
		my ($folder) = @_;
		return {
			"$folder/circle_a.c" => "void jp_circle_b(void);\n"
			  . "void jp_circle_a(void) { jp_circle_b(); }\n",
			"$folder/circle_b.c" => "void jp_circle_a(void);\n"
			  . "void jp_circle_b(void) { jp_circle_a(); }\n"
		};
	};
	$objects->(
		'two files of one folder calling each other fail',
		$circle->('names'),
		qr{^circle between files \(jitprof\.so, by symbols\): names/circle_a\.c -> names/circle_b\.c -> names/circle_a\.c$});
	$objects->('the same in a module folder (sampler) passes',
		$circle->('sampler'), undef);
	$objects->(
		'a call pointing up fails',
		{
			'store/up.c' => "void jp_top(void);\nvoid jp_up(void) { jp_top(); }\n",
			'sampler/top.c' => "void jp_top(void) { }\n"
		},
		qr{/store/up\.o \(jitprof\.so\): uses jp_top of .*: store is below sampler});
	$objects->(
		'reading another folder\'s setting fails',
		{
			'views/reader.c' => "extern int jitprof_x;\nint jp_read(void) { return jitprof_x; }\n",
			'store/owner.c' => "int jitprof_x = 1;\n"
		},
		qr{/views/reader\.o \(jitprof\.so\): reads jitprof_x of .*: another folder's setting is read through a function});
	$objects->(
		'reading core\'s setting passes',
		{
			'views/reader.c' => "extern int jitprof_x;\nint jp_read(void) { return jitprof_x; }\n",
			'core/owner.c' => "int jitprof_x = 1;\n"
		},
		undef);
	print "1..$n\n";
	return $failed ? 1 : 0;
}

my $top = dirname(dirname(__FILE__));
if (@ARGV && $ARGV[0] eq '--self-test')
{
	exit self_test($ARGV[1] // "$top/src");
}
if (@ARGV && $ARGV[0] eq '--symbols')
{
	shift @ARGV;
	my $src = shift @ARGV;
	my (@core, @llvm);
	my $list = \@core;
	for (@ARGV)
	{
		if ($_ eq '--') { $list = \@llvm; next; }
		push @$list, $_;
	}
	exit report(check_symbols($src, 'jitprof.so', @core),
		check_symbols($src, 'jitprof_llvm.so', @llvm));
}
exit report(check_includes($ARGV[0] // "$top/src"));
