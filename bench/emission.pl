# Driver of bench/emission.sh (see there): restarts the cluster in DATADIR
# under each configuration, runs the corpus's TPC-H-style queries with
# EXPLAIN (ANALYZE, FORMAT JSON), and reports medians and ratios.
use strict;
use warnings;

use FindBin;
use JSON::PP;
use lib $FindBin::Bin;
use Corpus;
use List::Util qw(sum);

my ($datadir, $corpus, @args) = @ARGV;
my $rounds = 5;
my $noopt = 0;
my $steps = 0;
my $plugins = 0;
for (@args)
{
	if ($_ eq '--noopt') { $noopt = 1 }
	elsif ($_ eq '--steps') { $steps = 1 }
	elsif ($_ eq '--plugins') { $plugins = 1 }
	elsif (/^\d+$/) { $rounds = $_ }
	else { die "usage: emission.sh [ROUNDS] [--noopt] [--steps] [--plugins]\n" }
}

my %configs = (
	stock => {
		server => "-c shared_preload_libraries= -c jit_provider=llvmjit",
		session => '',
	},
	jitlink => {
		server => "-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.tiering=off",
		session => '-c jitprof.linker=jitlink',
		linker => 'jitlink',
	},
	rtdyld => {
		server => "-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.tiering=off",
		session => '-c jitprof.linker=rtdyld',
		linker => 'rtdyld',
	},
);
my @order = qw(stock jitlink rtdyld);

# --steps (bench/steps.sh): jitprof with JITLink, jitprof.steps off and on
if ($steps)
{
	%configs = (
		steps_off => {
			server => "-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.tiering=off",
			session => '-c jitprof.steps=off',
			linker => 'jitlink',
		},
		steps_on => {
			server => "-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.tiering=off",
			session => '-c jitprof.steps=on',
			linker => 'jitlink',
		},
	);
	@order = qw(steps_off steps_on);
}
# --plugins (bench/llvm_plugins.sh): jitprof with JITLink, its perf map off,
# and one sink each: none, jitprof's jitdump, LLVM's PerfSupportPlugin,
# jitprof's gdb sink, LLVM's DebugObjectManagerPlugin
# (jitprof.llvm_plugins); both kinds of file go to JITDUMPDIR.
if ($plugins)
{
	my $server = "-c shared_preload_libraries=jitprof -c jit_provider=jitprof -c jitprof.tiering=off";
	my $off = '-c jitprof.perf_map=off -c jitprof.perf_jitdump=off -c jitprof.gdb=off -c jitprof.llvm_plugins=off';
	%configs = (
		none => { server => $server, session => $off, linker => 'jitlink' },
		jp_jitdump => { server => $server, session => "$off -c jitprof.perf_jitdump=on", linker => 'jitlink' },
		llvm_perf => { server => $server, session => "$off -c jitprof.llvm_plugins=perf", linker => 'jitlink' },
		jp_gdb => { server => $server, session => "$off -c jitprof.gdb=on", linker => 'jitlink' },
		llvm_gdb => { server => $server, session => "$off -c jitprof.llvm_plugins=debugger", linker => 'jitlink' },
	);
	@order = qw(none jp_jitdump llvm_perf jp_gdb llvm_gdb);
	$ENV{JITDUMPDIR} = "$datadir/../jitdump";
	mkdir $ENV{JITDUMPDIR};
}
my $base_config = $order[0];

sub run
{
	system(@_) == 0 or die "failed: @_\n";
}

sub start
{
	my ($opts) = @_;
	run('pg_ctl', '-D', $datadir, '-w', '-l', "$datadir/bench.log", '-o', $opts, 'start');
}

sub stop
{
	run('pg_ctl', '-D', $datadir, '-w', '-m', 'fast', 'stop');
}

sub psql
{
	my ($options, $script) = @_;
	local $ENV{PGOPTIONS} = "-c client_min_messages=warning $options";
	open my $fh, '>', "$datadir/../bench_script.sql" or die;
	print $fh $script;
	close $fh;
	my $out = `psql -X -At -v ON_ERROR_STOP=1 -d postgres -f $datadir/../bench_script.sql 2>&1`;
	die "psql failed:\n$out" if $?;
	return $out;
}

# The TPC-H-style statements of the corpus, with their "-- Qn" labels.
my @queries = Corpus::tpch_statements("$corpus/tpch.sql");

# Load the data once, JIT off.
start($configs{$base_config}{server});
psql('-c jit=off', "SET client_min_messages = warning;\n\\i $corpus/schema.sql\n");
stop();

my $session_settings = $noopt
  ? ' -c jit_optimize_above_cost=-1 -c jit_inline_above_cost=-1' : '';

my %samples;    # config -> metric -> [values]
my $ticks_per_s = `getconf CLK_TCK` + 0 || 100;
my %perquery;   # config -> [query index] -> [emission times]
for my $round (1 .. $rounds)
{
	my $k = ($round - 1) % @order;
	my @rot = (@order[$k .. $#order], @order[0 .. $k - 1]);
	for my $config (@rot)
	{
		my $c = $configs{$config};
		start($c->{server});

		# The first JIT compilation of a backend also sets LLVM up: warm up.
		my $script = "\\o /dev/null\nSELECT count(*) FROM lineitem WHERE l_quantity > 1;\n\\o\n";
		# CPU time of the backend over the pass (utime + stime, in clock
		# ticks), which other processes' load disturbs less than wall time.
		my $cpu = q{SELECT sum(f::bigint) FROM unnest((string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' '))[12:13]) f;};
		$script .= "\\echo ==cpu_before\n$cpu\n";
		for my $q (@queries)
		{
			$script .= "\\echo ==$q->{label}\nEXPLAIN (ANALYZE, FORMAT JSON) $q->{sql};\n";
		}
		$script .= "\\echo ==cpu_after\n$cpu\n";
		$script .= "\\echo ==status\nSELECT coalesce((SELECT value FROM jitprof_status WHERE name = 'linker'), 'none');\n"
		  if $c->{linker};
		$script = "CREATE EXTENSION IF NOT EXISTS jitprof;\n\\o\n" . $script if $c->{linker};
		$script = "\\o /dev/null\n" . $script if $c->{linker};
		my $out = psql($c->{session} . $session_settings, $script);

		my $qi = 0;
		my %cpu_ticks;
		for my $part (split /^==/m, $out)
		{
			my ($label, $body) = split /\n/, $part, 2;
			next unless defined $body;
			if ($label =~ /^cpu_(before|after)$/)
			{
				chomp $body;
				$cpu_ticks{$1} = $body;
				next;
			}
			if ($label eq 'status')
			{
				chomp $body;
				die "$config: jitprof_status says linker $body\n" unless $body eq $c->{linker};
				next;
			}
			my $plan = eval { decode_json($body)->[0] }
			  or die "$config: could not parse the plan of $label:\n$body\n";
			my $jit = $plan->{JIT} or die "$config: $label was not JIT-compiled\n";
			push @{ $samples{$config}{emission} }, $jit->{Timing}{Emission};
			push @{ $perquery{$config}[ $qi++ ] }, $jit->{Timing}{Emission};
			push @{ $samples{$config}{jit_total} }, $jit->{Timing}{Total};
			push @{ $samples{$config}{execution} }, $plan->{'Execution Time'};
			push @{ $samples{$config}{run} }, $plan->{'Execution Time'} - $jit->{Timing}{Total};
			push @{ $samples{$config}{functions} }, $jit->{Functions};
		}
		push @{ $samples{$config}{cpu} }, ($cpu_ticks{after} - $cpu_ticks{before}) * 1000 / $ticks_per_s;
		stop();
	}
	print STDERR "round $round/$rounds done\n";
}

sub median
{
	my @v = sort { $a <=> $b } @_;
	return 0 unless @v;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

printf "%d queries x %d rounds per configuration, JIT forced%s\n",
  scalar(@queries), $rounds, $noopt ? ' (no optimization, no inlining)' : ' (optimized and inlined)';
printf "medians over all query executions, in ms\n\n";
printf "%-10s %9s %6s %10s %6s %10s %6s %9s %6s %10s\n",
  'config', 'emission', 'ratio', 'jit total', 'ratio', 'execution', 'ratio', 'exec-jit', 'ratio', 'sum(emis.)';
my @metrics = qw(emission jit_total execution run);
my %base = map { $_ => median(@{ $samples{$base_config}{$_} }) } @metrics;
for my $config (@order)
{
	my $s = $samples{$config};
	my %m = map { $_ => median(@{ $s->{$_} }) } @metrics;
	printf "%-10s %9.3f %6.3f %10.3f %6.3f %10.3f %6.3f %9.3f %6.3f %10.1f\n", $config,
	  map({ ($m{$_}, $m{$_} / $base{$_}) } @metrics),
	  sum(@{ $s->{emission} }) / $rounds;
}
# Per query, the median emission time of each configuration against
# stock's: the geometric mean of those ratios weighs small and large
# queries alike.
print "\nemission per query against $base_config (geometric mean of per-query median ratios):\n";
for my $config (@order)
{
	my $logsum = 0;
	my $n = @{ $perquery{$base_config} };
	for my $i (0 .. $n - 1)
	{
		$logsum += log(median(@{ $perquery{$config}[$i] }) / median(@{ $perquery{$base_config}[$i] }));
	}
	printf "  %-10s %.3f\n", $config, exp($logsum / $n);
}

# --plugins: each of jitprof's sinks against LLVM's plugin of the same kind
if ($plugins)
{
	print "\njitprof's sink / LLVM's plugin, emission (median ratio; geometric mean of per-query median ratios):\n";
	for my $pair ([qw(jp_jitdump llvm_perf)], [qw(jp_gdb llvm_gdb)])
	{
		my ($a, $b) = @$pair;
		my $logsum = 0;
		my $n = @{ $perquery{$a} };
		$logsum += log(median(@{ $perquery{$a}[$_] }) / median(@{ $perquery{$b}[$_] })) for 0 .. $n - 1;
		printf "  %-10s / %-10s %.3f  %.3f\n", $a, $b,
		  median(@{ $samples{$a}{emission} }) / median(@{ $samples{$b}{emission} }), exp($logsum / $n);
	}
}

# Spread: per round, each configuration's emission time of the pass (sum
# over the queries) and CPU time against the base configuration's in the
# same round; the median and range of those ratios.
print "\nper-round ratios against $base_config (median, min .. max over $rounds rounds): emission of a pass; backend CPU of a pass\n";
for my $config (@order)
{
	my (@e, @c);
	my $nq = @queries;
	for my $r (0 .. $rounds - 1)
	{
		my $sum = sub { my ($cfg) = @_; sum(@{ $samples{$cfg}{emission} }[ $r * $nq .. ($r + 1) * $nq - 1 ]) };
		push @e, $sum->($config) / $sum->($base_config);
		push @c, $samples{$config}{cpu}[$r] / $samples{$base_config}{cpu}[$r] if $samples{$base_config}{cpu}[$r];
	}
	@e = sort { $a <=> $b } @e;
	@c = sort { $a <=> $b } @c;
	printf "  %-10s %.3f (%.3f .. %.3f); %.3f (%.3f .. %.3f)\n", $config, median(@e), $e[0], $e[-1],
	  median(@c), $c[0], $c[-1];
}

print "\nbackend CPU time of one pass over all queries (median over rounds, ms):\n";
my $cpu_base = median(@{ $samples{$base_config}{cpu} });
printf "  %-10s %8.0f  %.3f\n", $_, median(@{ $samples{$_}{cpu} }), median(@{ $samples{$_}{cpu} }) / $cpu_base
  for @order;

print "\nemission, jit total, execution: EXPLAIN ANALYZE's JIT Emission, JIT Total and\n"
  . "Execution Time (which includes JIT); exec-jit: Execution Time minus JIT Total;\n"
  . "sum(emis.): emission time of one pass over all queries, averaged over rounds.\n"
  . "Ratios are against $base_config.\n";
