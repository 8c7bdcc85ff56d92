# jitprof in Prometheus, with the real programs: prometheus-postgres-exporter
# runs integrations/postgres_exporter/jitprof.yaml against a cluster after a
# known workload, and its /metrics agree with jitprof's views (and the query
# executions with pg_stat_statements); then a prometheus server scrapes that
# exporter and gives a jitprof series back through its HTTP query API.
# The JIT advisor's series (payoff of the top 20 queries, the advice, the
# advisor's counters) equal jitprof_jit_payoff, jitprof_jit_advice() and
# jitprof_advisor.
# Everything listens on 127.0.0.1 or a unix socket, and is stopped by PID.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;
use JitprofMonitor;

my $exporter_bin = program('prometheus-postgres-exporter', 'prometheus-postgres-exporter');
my $prometheus_bin = program('prometheus', 'prometheus');
my $src = $ENV{JITPROF_SRC} // '.';
my $queries = "$src/integrations/postgres_exporter/jitprof.yaml";
ok(-f $queries, "queries file $queries exists");

my $node = jitprof_node('exporter', conf => q{
shared_preload_libraries = 'jitprof,pg_stat_statements'
jitprof.sample_rate = 1000
jitprof.plan_nodes = on
jitprof.jit_advisor = explore
jitprof.advisor_min_cost = 1000
jitprof.advisor_fraction = 0
});
my $tmp = PostgreSQL::Test::Utils::tempdir;

# The exporter's role, as doc/monitoring.md recommends: pg_monitor to see
# every role's query IDs, and no JIT for its own queries, so that scraping
# adds nothing to the profile it reads.
$node->safe_psql('postgres', q{
CREATE EXTENSION pg_stat_statements;
CREATE ROLE jitprof_exporter LOGIN;
GRANT pg_monitor TO jitprof_exporter;
ALTER ROLE jitprof_exporter SET jit = off;
CREATE TABLE f AS
  SELECT random() AS a, random() AS b, random() AS c
  FROM generate_series(1, 200000);
VACUUM ANALYZE f;
SELECT jitprof_reset();
SELECT pg_stat_statements_reset();
});

# The known workload: one query whose hot code is its scan's JIT qual.
my $query = q{SELECT count(*) FROM f
  WHERE a * b + b * c - a * c * 0.5 + (a + b) * (b + c) * (c + a) > 0.7
    AND a * a + b * b + c * c < 2.5};
my $runs = 12;
$node->safe_psql('postgres', join('', map { "$query;\n" } 1 .. $runs));

# What the views say, read without JIT (so without touching the store).
sub view
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', "SET jit = off;\n$sql");
}
my $workload_qid = view(q{SELECT queryid FROM pg_stat_statements
  WHERE query LIKE 'SELECT count(*) FROM f%'});
like($workload_qid, qr/^-?\d+$/, "workload query ID $workload_qid");

my @health = split /\|/, view(q{SELECT samples_taken, jit_self_samples,
  jit_total_samples, samples_dropped, flushes, evictions, entries, max_hotspots
  FROM jitprof_sampler});

# The exporter's flags, as doc/monitoring.md has a user get them: from
# the installed exporter's --help (its collectors and their flags differ
# between releases), with only jitprof's series asked for.
my ($version) = split /\n/, program_output([ $exporter_bin, '--version' ]);
note("exporter: $version");
my $args_out = program_output([ "$src/integrations/postgres_exporter/exporter-args.sh",
	'--jitprof-only', $queries ], PG_EXPORTER => $exporter_bin);
my @args = split /\n/, $args_out;
is($args[0], "--extend.query-path=$queries", "exporter-args.sh passes the queries file first");
note("exporter-args.sh: @args");

my $eport = free_port();
my $dsn = sprintf('host=%s port=%d user=jitprof_exporter dbname=postgres sslmode=disable',
	$node->host, $node->port);
my $exporter = start_program(
	[ $exporter_bin, @args,
	  "--web.listen-address=127.0.0.1:$eport", '--log.level=warn' ],
	"$tmp/exporter.log", DATA_SOURCE_NAME => $dsn);

my $metrics = wait_for(30, sub {
	my $m = http_get("http://127.0.0.1:$eport/metrics");
	return defined $m && $m =~ /^jitprof_sampler_samples_taken/m ? $m : undef;
});
ok($metrics, 'the exporter serves jitprof metrics')
  or diag(slurp_file("$tmp/exporter.log"));
$metrics //= '';
my @samples = grep { $_->[0] =~ /^jitprof_/ } parse_metrics($metrics);
note(join("\n", grep { /^jitprof_/ } split /\n/, $metrics));

# Types: counters are counters, so that rate() works.
like($metrics, qr/^# TYPE jitprof_hotspot_self_samples counter$/m, 'hotspot self samples are a counter');
like($metrics, qr/^# TYPE jitprof_query_executions counter$/m, 'query executions are a counter');
like($metrics, qr/^# TYPE jitprof_sampler_entries gauge$/m, 'store entries are a gauge');
unlike($metrics, qr/^jitprof_\w+\{[^}]*SELECT/mi, 'no query text in any label');
# --jitprof-only: besides jitprof's, only the exporter's own health series
my @others = sort { $a cmp $b } keys %{ { map { $_->[0] => 1 }
	grep { $_->[0] =~ /^pg_/ && $_->[0] !~ /^pg_(up|exporter_\w+|scrape_collector_\w+)$/ }
	  parse_metrics($metrics) } };
is("@others", '', 'no series of the exporter\'s own collectors with --jitprof-only');

sub series
{
	my ($name, %want) = @_;
	return grep {
		my $s = $_;
		$s->[0] eq $name && !grep { ($s->[1]{$_} // '') ne $want{$_} } keys %want
	} @samples;
}

# Sampler health: each counter equals the view.  The sampler runs for
# every statement, the exporter's too, so one of them could be sampled and
# flushed during the scrape: the view is read before it (@health) and after
# it (@later), and the scrape must lie between the two (equal to both when
# nothing moved, as is usual with statements this short).
my @names = qw(samples_taken jit_self_samples jit_total_samples samples_dropped
  flushes evictions entries max_hotspots);
my $health_sql = 'SELECT ' . join(', ', @names) . ' FROM jitprof_sampler';
my @later = split /\|/, view($health_sql);
for my $i (0 .. $#names)
{
	my ($s) = series("jitprof_sampler_$names[$i]");
	my $v = $s ? $s->[2] + 0 : -1;
	ok($v >= $health[$i] && $v <= $later[$i],
		"jitprof_sampler_$names[$i] = $v, as in jitprof_sampler ($health[$i] before the scrape, $later[$i] after)");
}
cmp_ok($health[0], '>', 50, "the workload was sampled ($health[0] samples)");
my ($since) = series('jitprof_sampler_seconds_since_reset');
ok($since && $since->[2] >= 0 && $since->[2] < 600, 'seconds since reset is plausible');

# Per query: the workload's executions, samples and JIT share.
my ($calls) = split /\|/, view(qq{SELECT calls FROM pg_stat_statements WHERE queryid = $workload_qid});
my ($qexec, $qsamples, $qself) = split /\|/, view(qq{
  SELECT sum(executions), sum(query_samples), sum(jit_self_samples)
  FROM jitprof_queries WHERE queryid = $workload_qid});
my ($e) = series('jitprof_query_executions', queryid => $workload_qid, datname => 'postgres');
is($e ? $e->[2] + 0 : undef, $runs, "jitprof_query_executions of the workload is $runs");
is($calls, $runs, 'pg_stat_statements counted the same calls');
my ($qs) = series('jitprof_query_samples', queryid => $workload_qid);
is($qs ? $qs->[2] + 0 : undef, $qsamples, "jitprof_query_samples = $qsamples, as in jitprof_queries");
my ($share) = series('jitprof_query_jit_share', queryid => $workload_qid);
ok($share && abs($share->[2] - $qself / $qsamples) < 1e-9, 'jitprof_query_jit_share = jit_self_samples / query_samples');
my @q = series('jitprof_query_samples');
ok(@q >= 1 && @q <= 20, scalar(@q) . ' query series, at most the top 20');

# The JIT advisor.  The exporter's statements and view() are below
# jitprof.advisor_min_cost (1000), so they do not move the advisor's rows.
my ($pexec, $pverdict) = split /\|/, view(qq{SELECT executions,
  CASE verdict WHEN 'jit pays' THEN 1 WHEN 'jit loses' THEN -1 ELSE 0 END
  FROM jitprof_jit_payoff WHERE queryid = $workload_qid});
is($pexec, $runs, "jitprof_jit_payoff counts the workload's $runs executions");
my ($pe) = series('jitprof_jit_payoff_executions', queryid => $workload_qid, datname => 'postgres');
is($pe ? $pe->[2] + 0 : undef, $pexec, 'jitprof_jit_payoff_executions of the workload equals the view');
my ($pv) = series('jitprof_jit_payoff_verdict', queryid => $workload_qid);
is($pv ? $pv->[2] + 0 : undef, $pverdict, 'and so does its verdict (0: undecided)');
my @payoff = series('jitprof_jit_payoff_executions');
ok(@payoff >= 1 && @payoff <= 20, scalar(@payoff) . ' payoff series, at most the top 20');
like($metrics, qr/^# TYPE jitprof_jit_payoff_executions counter$/m, 'payoff executions are a counter');
like($metrics, qr/^# TYPE jitprof_jit_advice_advised_cpu_ms gauge$/m, 'the advice is a gauge');
my @advice_cols = qw(queries current_cpu_ms advised_cpu_ms);
my @advice = split /\|/, view('SELECT ' . join(', ', @advice_cols) . ' FROM jitprof_jit_advice()');
for my $i (0 .. $#advice_cols)
{
	my ($a) = series("jitprof_jit_advice_$advice_cols[$i]");
	ok($a && abs($a->[2] - $advice[$i]) <= 1e-6 * (1 + abs($advice[$i])),
		"jitprof_jit_advice_$advice_cols[$i] = " . ($a ? $a->[2] : 'missing') . ", as jitprof_jit_advice() says ($advice[$i])");
}
my ($aexec) = series('jitprof_advisor_executions');
is($aexec ? $aexec->[2] + 0 : undef, view('SELECT executions FROM jitprof_advisor') + 0,
	'jitprof_advisor_executions equals jitprof_advisor');

# Per hotspot: every exported series equals the view summed over its labels,
# at most 50 of them, and the top one is the workload's scan qual.
my %expect;
for my $row (split /\n/, view(q{SELECT queryid, plan_node_id, coalesce(node_type, ''),
  role, self_samples, total_samples FROM jitprof_hotspots WHERE queryid IS NOT NULL}))
{
	my ($qid, $node_id, $type, $role, $self, $total) = split /\|/, $row;
	my $k = join('|', $qid, $node_id, $type, $role);
	$expect{$k}[0] += $self;
	$expect{$k}[1] += $total;
}
my @hot = series('jitprof_hotspot_total_samples');
ok(@hot >= 1 && @hot <= 50, scalar(@hot) . ' hotspot series, at most the top 50');
my $mismatch = 0;
for my $s (@hot, series('jitprof_hotspot_self_samples'))
{
	my $k = join('|', map { $s->[1]{$_} } qw(queryid plan_node_id node_type role));
	my $want = $expect{$k}[ $s->[0] =~ /self/ ? 0 : 1 ];
	if (!defined $want || $want != $s->[2])
	{
		$mismatch++;
		diag("$s->[0] $k = $s->[2], view says " . ($want // 'nothing'));
	}
}
is($mismatch, 0, 'every hotspot series equals jitprof_hotspots');
my ($top) = sort { $b->[2] <=> $a->[2] } @hot;
is(join(' ', map { $top->[1]{$_} } qw(queryid node_type role)), "$workload_qid SeqScan qual",
	'the top hotspot is the workload scan qual');

# Per plan node: every exported series equals jitprof_plan_nodes, at most
# 50 of them, and the workload's hottest node is its Seq Scan.
my %nexpect;
for my $row (split /\n/, view(q{SELECT queryid, plan_node_id, coalesce(node_type, ''),
  self_samples, total_samples, jit_self_samples, jit_compile_samples
  FROM jitprof_plan_nodes WHERE queryid IS NOT NULL}))
{
	my ($qid, $node_id, $type, @v) = split /\|/, $row;
	$nexpect{ join('|', $qid, $node_id, $type) } = \@v;
}
my %ncol = (self_samples => 0, total_samples => 1, jit_self_samples => 2,
	jit_compile_samples => 3);
my @pn = series('jitprof_plan_node_self_samples');
ok(@pn >= 1 && @pn <= 50, scalar(@pn) . ' plan-node series, at most the top 50');
my $nmismatch = 0;
for my $col (sort keys %ncol)
{
	for my $s (series("jitprof_plan_node_$col"))
	{
		my $k = join('|', map { $s->[1]{$_} } qw(queryid plan_node_id node_type));
		my $want = $nexpect{$k} ? $nexpect{$k}[ $ncol{$col} ] : undef;
		if (!defined $want || $want != $s->[2])
		{
			$nmismatch++;
			diag("jitprof_plan_node_$col $k = $s->[2], view says " . ($want // 'nothing'));
		}
	}
}
is($nmismatch, 0, 'every plan-node series equals jitprof_plan_nodes');
like($metrics, qr/^# TYPE jitprof_plan_node_self_samples counter$/m, 'plan-node self samples are a counter');
my ($ntop) = sort { $b->[2] <=> $a->[2] }
  grep { $_->[1]{queryid} eq $workload_qid } @pn;
is($ntop && $ntop->[1]{node_type}, 'SeqScan', 'the workload\'s hottest plan node is its scan');

# The whole pipeline: a Prometheus server scrapes the exporter every second
# and answers PromQL over it.
my $pport = free_port();
my $config = "$tmp/prometheus.yml";
open my $fh, '>', $config or die "could not write $config: $!";
print $fh <<"EOF";
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: postgres
    static_configs:
      - targets: ['127.0.0.1:$eport']
        labels:
          instance: 'db1'
EOF
close $fh;
my $prometheus = start_program(
	[ $prometheus_bin, "--config.file=$config", "--storage.tsdb.path=$tmp/tsdb",
	  "--web.listen-address=127.0.0.1:$pport", '--log.level=warn' ],
	"$tmp/prometheus.log");

sub promql
{
	my ($q) = @_;
	$q =~ s/([^A-Za-z0-9_.~-])/sprintf('%%%02X', ord($1))/ge;
	my $body = http_get("http://127.0.0.1:$pport/api/v1/query?query=$q") // '';
	return $body;
}
my $answer = wait_for(60, sub {
	my $b = promql('jitprof_sampler_samples_taken');
	return $b =~ /"result":\[\{/ ? $b : undef;
});
ok($answer, 'prometheus answers a jitprof series') or diag(slurp_file("$tmp/prometheus.log"));
my ($through) = ($answer // '') =~ /"value":\[[0-9.]+,"(\d+)"\]/;
my ($now) = view('SELECT samples_taken FROM jitprof_sampler');
ok(defined $through && $through >= $health[0] && $through <= $now,
	"through prometheus, jitprof_sampler_samples_taken is " . ($through // 'missing')
	  . " (the view: $health[0] before the first scrape, $now now)");
my $topk = promql('topk(1, sum by (instance, queryid, node_type, role) (jitprof_hotspot_self_samples))');
note("topk: $topk");
like($topk, qr/"queryid":"$workload_qid"/, 'topk over the fleet names the workload query');
like($topk, qr/"instance":"db1"/, 'and the server it ran on');

# A reset, as Prometheus sees it: the counter falls, and resets() counts it.
view('SELECT jitprof_reset()');
$node->safe_psql('postgres', join('', map { "$query;\n" } 1 .. 3));
my $after = wait_for(30, sub {
	my $b = promql(qq{jitprof_query_executions{queryid="$workload_qid"}});
	return $b =~ /"value":\[[0-9.]+,"3"\]/ ? $b : undef;
});
ok($after, 'after jitprof_reset() and 3 more runs, prometheus shows 3 executions');
my $resets = promql(qq{resets(jitprof_query_executions{queryid="$workload_qid"}[5m])});
like($resets, qr/"value":\[[0-9.]+,"1"\]/, 'prometheus saw the reset as one counter reset');

stop_program($prometheus);
stop_program($exporter);
ok(!kill(0, $prometheus->{KIDS}[0]{PID}) && !kill(0, $exporter->{KIDS}[0]{PID}),
	'prometheus and the exporter are stopped');
$node->stop;
done_testing();
