# Driver of bench/emission_sessions.sh (see there): one new connection per
# query and set-up, EXPLAIN (ANALYZE, FORMAT JSON) with every JIT threshold
# at 0, the plan's JIT timings kept; medians per query and set-up, and
# their ratios to stock's.
use strict;
use warnings;

use File::Temp qw(tempfile);
use FindBin;
use JSON::PP;
use lib $FindBin::Bin;
use Corpus;
use List::Util qw(shuffle min max sum);

my ($corpus, $rounds, $port_stock, $port_stock_b, $port_jitprof) = @ARGV;
my $warm = $ENV{WARM} // 0;

my $thresholds = '-c jit_above_cost=0 -c jit_inline_above_cost=0 '
  . '-c jit_optimize_above_cost=0 -c client_min_messages=warning';
my %setups = (
	stock => { port => $port_stock, options => '' },
	stock_b => { port => $port_stock_b, options => '' },
	jitprof => { port => $port_jitprof, options => '' },
	nosinks => {
		port => $port_jitprof,
		options => '-c jitprof.perf_map=off -c jitprof.gdb=off -c jitprof.perf_jitdump=off'
	},
	rtdyld => { port => $port_jitprof, options => '-c jitprof.linker=rtdyld' },
);
my @order = qw(stock stock_b jitprof nosinks rtdyld);

# The TPC-H-style statements of the corpus, with their "-- Qn" labels.
my @queries = Corpus::tpch_statements("$corpus/tpch.sql");

# A plan's JIT timings in ms: PostgreSQL 17 made Generation an object.
sub jit_timing
{
	my ($json) = @_;
	my $plan = decode_json($json)->[0];
	my $t = $plan->{JIT}{Timing} or die "no JIT in the plan\n";
	return {
		emission => $t->{Emission},
		total => $t->{Total},
	};
}

# warm-up: a query that JIT-compiles, in the same connection, output dropped
my $warmup = "SELECT count(*) FROM lineitem WHERE l_quantity > 1 \\g /dev/null\n";

sub run_one
{
	my ($setup, $sql) = @_;
	my $s = $setups{$setup};
	local $ENV{PGOPTIONS} = "$thresholds $s->{options}";
	local $ENV{PGPORT} = $s->{port};
	my $script = ($warm ? $warmup : '')
	  . "EXPLAIN (ANALYZE, FORMAT JSON) $sql;\n";
	my ($sfh, $sfile) = tempfile(UNLINK => 1);
	print $sfh $script;
	close $sfh;
	open my $fh, '-|', 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1', '-d',
	  'postgres', '-f', $sfile
	  or die "psql: $!";
	local $/;
	my $out = <$fh>;
	close $fh or die "psql failed for $setup: $out\n";
	return jit_timing($out);
}

my %t;    # setup -> query index -> metric -> [values]
for my $round (1 .. $rounds)
{
	for my $qi (shuffle(0 .. $#queries))
	{
		for my $setup (shuffle(@order))
		{
			my $r = run_one($setup, $queries[$qi]{sql});
			push @{ $t{$setup}[$qi]{$_} }, $r->{$_} for keys %$r;
		}
	}
	print STDERR "round $round done\n";
}

sub median
{
	my @v = sort { $a <=> $b } @_;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

sub geomean
{
	return exp(sum(map { log } @_) / @_);
}

printf "%d queries, %d rounds, one new connection per query%s\n",
  scalar(@queries), $rounds, $warm ? ' after a JIT-compiling warm-up' : '';
printf "%-8s %-9s %9s %9s %9s %9s\n", 'query', 'setup', 'emit ms', 'total ms',
  'emit ÷', 'total ÷';
for my $qi (0 .. $#queries)
{
	my $base = $t{stock}[$qi];
	for my $setup (@order)
	{
		my $m = $t{$setup}[$qi];
		printf "%-8s %-9s %9.3f %9.3f %9.3f %9.3f\n", $queries[$qi]{label},
		  $setup, median(@{ $m->{emission} }), median(@{ $m->{total} }),
		  median(@{ $m->{emission} }) / median(@{ $base->{emission} }),
		  median(@{ $m->{total} }) / median(@{ $base->{total} });
	}
}

print "\nratios to stock, geometric mean over queries of per-query medians (range):\n";
for my $setup (@order[ 1 .. $#order ])
{
	for my $metric (qw(emission total))
	{
		my @r = map {
			median(@{ $t{$setup}[$_]{$metric} }) /
			  median(@{ $t{stock}[$_]{$metric} })
		} 0 .. $#queries;
		printf "%-9s %-9s %.3f (%.3f to %.3f)\n", $setup, $metric, geomean(@r),
		  min(@r), max(@r);
	}
}
print "\nsums over queries of median emission, ms:\n";
for my $setup (@order)
{
	printf "%-9s %.2f\n", $setup,
	  sum(map { median(@{ $t{$setup}[$_]{emission} }) } 0 .. $#queries);
}
