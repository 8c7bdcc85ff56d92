# jitprof.steps and the sampler (issue 12, stage 3): each self sample of a
# JIT function is charged to the expression step its PC lies in, each
# sample in code a JIT function called to the step of the call, and
# jitprof_steps shows the result.  For a qual dominated by float8
# multiplication the top step is the multiplication; jitprof_explain's
# "Top JIT step" of each node is the entry its rule picks from
# jitprof_steps (the seven multiplications summed), and a node with code of
# no step only has none; a function's steps add
# up to its self and total samples; shares stay within 0..100; privacy
# follows jitprof_hotspots; rows survive a clean restart, go with
# jitprof_reset() and are capped by jitprof.max_steps.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# the opcode of float8mul's step on this server
my $call2 = strict_call2_step();
use JitprofPerf qw(query_id);

my $node = jitprof_node('steps_sampler',
	conf => "jitprof.sample_rate = 997\n");
$node->safe_psql('postgres', q{
CREATE TABLE f AS SELECT g::float8 AS a, (g % 10)::float8 AS b
  FROM generate_series(1, 2000000) g;
VACUUM ANALYZE f;
CREATE ROLE steps_other LOGIN;
CREATE ROLE steps_reader LOGIN IN ROLE pg_read_all_stats;
GRANT SELECT ON f TO steps_other;
});

# seven multiplications and a null test: float8mul does the work
my $mul = 'SELECT count(*) FROM f WHERE a * b * b * a * a * b * a * b IS NOT NULL';
my $mulq = query_id($node, $mul);

sub run_with_steps
{
	my ($sql, $times, $user, $settings) = @_;
	$node->safe_psql(
		'postgres',
		"SET jitprof.steps = on;\n"
		  . ($settings // '')
		  . ("$sql;\n" x $times),
		$user ? (extra_params => [ '-U', $user ]) : ());
}

$node->safe_psql('postgres', 'SELECT jitprof_reset()');
# Neither inlined nor optimized, each multiplication is a call of
# float8mul from its step: the step's total samples hold the call.  Inlined
# or optimized (code merged across steps gets no line), a multiplication
# step costs about what the entry and exit code (the row of no step) costs,
# and which row is on top is a toss-up.  30 runs take about 1,000
# CPU-timer ticks.  The plan-node profile is on too, for jitprof_explain's
# top steps.
run_with_steps($mul, 30, undef,
	"SET jit_inline_above_cost = -1;\nSET jit_optimize_above_cost = -1;\n"
	  . "SET jitprof.plan_nodes = on;\n");

my $rows = $node->safe_psql('postgres', qq{
SELECT step, attnum, opcode, detail, self_samples, total_samples
FROM jitprof_steps WHERE queryid = $mulq AND role = 'qual'
ORDER BY total_samples DESC, step});
note("steps of the qual:\n$rows");
my @rows = map { [ split /\|/ ] } split /\n/, $rows;
ok(@rows >= 2, 'the qual has step rows');
# The row of no step (entry and exit code, shared by the seven calls) can
# outweigh one multiplication step: forky under load once put it first.
# The claim is about steps, so it is left out here and weighed below.
my ($top) = grep { $_->[2] ne '' } @rows;
is($top->[2], $call2, 'top step of the qual is a function call step');
is($top->[3], 'float8mul', '... the float8 multiplication');
cmp_ok($top->[4], '>', 0, 'with samples');
my ($mul_pct) = $node->safe_psql('postgres', qq{
SELECT round(sum(pct_of_function)) FROM jitprof_steps
WHERE queryid = $mulq AND role = 'qual' AND detail = 'float8mul'});
cmp_ok($mul_pct, '>', 50, "the multiplication steps take most of the qual ($mul_pct%)");

# jitprof_explain's "Top JIT step" of every node follows its rule
# (doc/plan_nodes.md), computed here from jitprof_steps: of the node's rows
# with a step or an attnum (never the code of no step), those of one role,
# opcode and detail are summed, the most total samples win, ties go to the
# lower role, then steps before attributes, the lower step (attnum), opcode,
# detail; the share is of the query's samples.
my $explain = $node->safe_psql('postgres',
	"SELECT * FROM jitprof_explain($mulq)");
note("jitprof_explain:\n$explain");
my %top_line;
my $label;
for my $line (split /\n/, $explain)
{
	if ($line =~ /^\s*(?:->  )?(.+?)  \(self /)
	{
		$label = $1;
		$top_line{$label} = undef;
	}
	elsif ($line =~ /^\s+(Top JIT step: .*)$/ && defined $label)
	{
		$top_line{$label} = $1;
	}
}
my $qsamples = $node->safe_psql('postgres', qq{
SELECT sum(query_samples) FROM jitprof_plan_nodes
WHERE queryid = $mulq AND plan_node_id = -1});
my %node_id = map { split /\|/ } split /\n/, $node->safe_psql('postgres', qq{
SELECT DISTINCT label, plan_node_id FROM jitprof_plan_nodes
WHERE queryid = $mulq AND plan_node_id >= 0});
is_deeply([ sort keys %top_line ], [ sort keys %node_id ],
	'jitprof_explain shows every plan node of the query');
my %scan_groups;
for my $l (sort keys %node_id)
{
	my @groups = top_step_groups($mulq, $node_id{$l});
	$scan_groups{$l} = \@groups;
	my $want;
	if (@groups)
	{
		my ($role, $opcode, $detail, $step, $attnum, $n, $sum) = @{ $groups[0] };
		my $what;
		if ($opcode eq 'deform')
		{
			$what = "deform $detail" . ($n > 1 ? ", in $n functions" : '');
		}
		elsif ($opcode eq '')
		{
			$what = "step $step" . ($n > 1 ? ", in $n functions" : '');
		}
		else
		{
			$what = ($n == 1 ? "step $step " : '') . $opcode
			  . ($detail ne '' ? " $detail" : '')
			  . ($n > 1 ? ", $n steps" : '');
		}
		# the same double arithmetic and rounding as jitprof's %.1f
		$want = sprintf('Top JIT step: %s %s (%.1f%%)',
			$role, $what, 100 * $sum / $qsamples);
	}
	is($top_line{$l}, $want,
		"$l: jitprof_explain's top step follows the rule"
		  . (defined $want ? '' : ' (no line)'));
}

# Under this workload the rule puts the seven float8mul steps of the qual
# on top of the Seq Scan, well ahead of the next entry: measured over 6
# runs (3 of them beside a 2-process CPU hog), the sum was 7.3 to 9.4
# times the runner-up (each time the deform function's column a, 227 to
# 311 samples against 1,916 to 2,276), and 7.7 once more under the hog.
my $scan_top = $scan_groups{'Seq Scan on f'}[0] // [];
is(join('|', @{$scan_top}[ 0 .. 2, 5 ]),
	"qual|$call2|float8mul|7",
	"the Seq Scan's top step: the qual's seven float8mul steps");
my $runner_up = $scan_groups{'Seq Scan on f'}[1];
note(sprintf('float8mul: %d samples, runner-up %s: %d (ratio %.1f)',
		$scan_top->[6], join(' ', @{$runner_up}[ 0 .. 2 ]), $runner_up->[6],
		$scan_top->[6] / $runner_up->[6]))
  if $runner_up;

# a function's steps add up to its self and total samples in jitprof_hotspots
my $sums = $node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE s.self <> h.self_samples),
       count(*) FILTER (WHERE s.total <> h.total_samples),
       count(*) FILTER (WHERE s.ftotal <> h.total_samples),
       count(*)
FROM (SELECT queryid, plan_node_id, symbol, sum(self_samples) AS self,
             sum(total_samples) AS total,
             max(function_total_samples) AS ftotal
      FROM jitprof_steps GROUP BY 1, 2, 3) s
JOIN jitprof_hotspots h USING (queryid, plan_node_id, symbol)});
my ($self_diff, $total_diff, $ftotal_diff, $nfunc) = split /\|/, $sums;
is($self_diff, '0', "steps add up to the function's self samples ($nfunc functions)");
is($total_diff, '0', "... and to its total samples");
is($ftotal_diff, '0', 'function_total_samples is jitprof_hotspots.total_samples');
cmp_ok($nfunc, '>=', 1, 'at least one function has steps');
is($node->safe_psql('postgres', 'SELECT steps_dropped FROM jitprof_sampler'),
	'0', 'no step row dropped');

# inlined deforming: rows for the attributes, named after the columns
my $deform = $node->safe_psql('postgres', qq{
SELECT count(*), count(*) FILTER (WHERE detail !~ '^[ab] double precision [(]attno [12][)]\$'
                                     OR detail !~ ('attno ' || attnum))
FROM jitprof_steps WHERE queryid = $mulq AND opcode = 'deform'});
note("deform rows, badly labelled: $deform");
like($deform, qr/^\d+\|0$/, 'deform rows name their column, type and attnum');

# the invariants, for every row
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM jitprof_steps
WHERE NOT (total_samples > 0 AND self_samples <= total_samples
           AND total_samples <= function_total_samples
           AND function_total_samples <= query_samples
           AND pct_of_function BETWEEN 0 AND 100
           AND pct_of_query BETWEEN 0 AND 100
           AND pct_of_query <= pct_of_function)}),
	'0',
	'self <= total <= function total <= query samples, shares within 0..100');
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM jitprof_steps
WHERE queryid = $mulq
  AND ((step IS NOT NULL) <> (coalesce(opcode, '') LIKE 'EEOP_%')
       OR (attnum IS NOT NULL) <> (coalesce(opcode, '') = 'deform'))}),
	'0',
	'steps have an EEOP opcode, deform rows an attnum, the rest neither');

# without jitprof.steps, no rows
my $off = 'SELECT count(*) FROM f WHERE a + b > 1000.5';
my $offq = query_id($node, $off);
$node->safe_psql('postgres', "$off;\n" x 4);
is($node->safe_psql('postgres',
		"SELECT count(*) FROM jitprof_steps WHERE queryid = $offq"),
	'0', 'no step rows with jitprof.steps off');
cmp_ok($node->safe_psql('postgres',
		"SELECT sum(self_samples) FROM jitprof_hotspots WHERE queryid = $offq"),
	'>', 0, '... while the functions have samples');

# privacy: another role's rows hide query ID, symbol and detail
$node->safe_psql('postgres',
	'GRANT SET ON PARAMETER jitprof.steps TO steps_other');
run_with_steps('SELECT count(*) FROM f WHERE a * b * b > 1000.5', 8,
	'steps_other');
my $other = $node->safe_psql('postgres',
	"SELECT oid FROM pg_roles WHERE rolname = 'steps_other'");
my $hidden = $node->safe_psql(
	'postgres', qq{
SELECT count(*), count(queryid), count(symbol), count(detail)
FROM jitprof_steps WHERE userid <> $other},
	extra_params => [ '-U', 'steps_other' ]);
my ($n, $nq, $ns, $nd) = split /\|/, $hidden;
cmp_ok($n, '>', 0, 'another role sees the rows of others');
is("$nq|$ns|$nd", '0|0|0', '... without query ID, symbol or detail');
my $own = $node->safe_psql('postgres',
	"SELECT count(*) = count(queryid) AND count(*) > 0 FROM jitprof_steps WHERE userid = $other",
	extra_params => [ '-U', 'steps_other' ]);
is($own, 't', 'a role sees its own rows whole');
my $reader = $node->safe_psql('postgres',
	"SELECT count(*) = count(queryid) AND count(*) = count(symbol) FROM jitprof_steps",
	extra_params => [ '-U', 'steps_reader' ]);
is($reader, 't', 'pg_read_all_stats sees every row whole');

# a clean restart keeps the rows
my $before = $node->safe_psql('postgres',
	'SELECT count(*), sum(self_samples) FROM jitprof_steps');
$node->restart;
is($node->safe_psql('postgres',
		'SELECT count(*), sum(self_samples) FROM jitprof_steps'),
	$before, 'step rows survive a clean restart');

# The saved file: a header (StoreFileHeader: format 4 appended its last
# three fields, format 5 kept them), the store's shared block (format 4
# appended one int64, steps_dropped), then the rows, then a CRC-32C.  The header's size is
# its fields'; the shared block's is what the file holds besides the header,
# the rows (their sizes and counts are header fields) and the CRC.
my $header_v4 = 'L4 q L2 q L2 q';
my $header_v3 = 'L4 q L2 q';
my $stat = $node->data_dir . '/pg_stat/jitprof.stat';

sub read_stat_file
{
	my $data = slurp_file($stat);
	my %f;
	@f{qw(magic version esize maxsym nent nsize pad nnodes ssize pad2 nsteps)}
	  = unpack($header_v4, $data);
	my $hsize = length(pack($header_v4, (0) x 11));
	$f{shared_size} = length($data) - $hsize - length(pack('L', 0))
	  - $f{nent} * $f{esize} - $f{nnodes} * $f{nsize} - $f{nsteps} * $f{ssize};
	$f{shared} = substr($data, $hsize, $f{shared_size});
	my $at = $hsize + $f{shared_size};
	$f{entries} = substr($data, $at, $f{nent} * $f{esize});
	$at += $f{nent} * $f{esize};
	$f{nodes} = substr($data, $at, $f{nnodes} * $f{nsize});
	$at += $f{nnodes} * $f{nsize};
	$f{steps} = [ map { substr($data, $at + $_ * $f{ssize}, $f{ssize}) }
		  0 .. $f{nsteps} - 1 ];
	return \%f;
}

sub write_stat_file
{
	my ($data) = @_;
	$data .= pack('L', crc32c($data));
	open(my $fh, '>:raw', $stat) or die "$stat: $!";
	print $fh $data;
	close $fh;
}

# A node whose step rows are all code of no step gets no "Top JIT step"
# line: leave only those rows to the Seq Scan, in the saved file.
$node->stop;
my $f = read_stat_file();
is($f->{version}, 7, 'the saved file has format 7');
# JpStoreStepKey: userid, dbid, queryid, plan_node_id, discriminator, step
my @kept = grep {
	my (undef, undef, $q, $id, undef, $step) = unpack('L2 q l L l', $_);
	!($q eq $mulq && $id == $node_id{'Seq Scan on f'} && $step != -1)
} @{ $f->{steps} };
write_stat_file(
	pack($header_v4, @{$f}{qw(magic version esize maxsym nent nsize pad nnodes
			ssize pad2)}, scalar @kept)
	  . $f->{shared} . $f->{entries} . $f->{nodes} . join('', @kept));
$node->start;
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) > 0 AND bool_and(step IS NULL AND attnum IS NULL)
FROM jitprof_steps
WHERE queryid = $mulq AND plan_node_id = $node_id{'Seq Scan on f'}}),
	't',
	'the Seq Scan is left with rows of code of no step only');
$explain = $node->safe_psql('postgres',
	"SELECT * FROM jitprof_explain($mulq)");
note("jitprof_explain:\n$explain");
like($explain, qr/^\s+->  Seq Scan on f .*\n(?!\s+Top JIT step)/m,
	'... and no Top JIT step line');
like($explain, qr/^Aggregate .*\n\s+Top JIT step: /m,
	'... while the Aggregate keeps its line');

# a statistics file of jitprof 1.1 (format 3: no step rows, and no ordinal
# in its function rows, as in format 4) is refused: rewrite the saved file
# in that format's layout, as that release wrote it
$node->stop;
$f = read_stat_file();
write_stat_file(
	pack($header_v3, @{$f}{qw(magic)}, 3, @{$f}{qw(esize maxsym nent nsize)},
		0, $f->{nnodes})
	  . substr($f->{shared}, 0, $f->{shared_size} - length(pack('q', 0)))
	  . $f->{entries} . $f->{nodes});
my $log_pos = -s $node->logfile;
$node->start;
like(substr(slurp_file($node->logfile), $log_pos),
	qr/WARNING:  ignoring jitprof statistics file .*\n.*DETAIL:  The file has format 3, written by an earlier version of jitprof/,
	'a format 3 file of jitprof 1.1 is refused with a WARNING');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM jitprof_hotspots WHERE queryid IN ($mulq, $offq)"),
	'0', '... and none of its hotspots is loaded');
is($node->safe_psql('postgres', 'SELECT count(*) FROM jitprof_steps'),
	'0', '... nor step rows');

# jitprof_reset() empties them
$node->safe_psql('postgres', 'SELECT jitprof_reset()');
is($node->safe_psql('postgres', 'SELECT count(*) FROM jitprof_steps'),
	'0', 'jitprof_reset() removes the step rows');

# the cap: jitprof.max_steps rows at most, the rest counted
$node->append_conf('postgresql.conf', "jitprof.max_steps = 100\n");
$node->restart;
# each query a different shape, so a different query ID and new step rows
for my $k (1 .. 30)
{
	my $long = join(' + ', map { "a * $_" } 1 .. (20 + $k));
	run_with_steps("SELECT count(*) FROM f WHERE $long > 0", 2);
	last
	  if $node->safe_psql('postgres',
		'SELECT steps_dropped FROM jitprof_sampler') > 0;
}
my ($entries, $max, $dropped) = split /\|/,
  $node->safe_psql('postgres',
	'SELECT step_entries, max_steps, steps_dropped FROM jitprof_sampler');
is($max, '100', 'jitprof.max_steps is 100');
cmp_ok($entries, '<=', 100, "at most 100 step rows ($entries)");
cmp_ok($dropped, '>', 0, "the rest were counted as dropped ($dropped)");
is($node->safe_psql('postgres', 'SELECT count(*) FROM jitprof_steps'),
	$entries, 'the view shows every row');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM (SELECT queryid, plan_node_id, symbol,
                             sum(total_samples) AS sum
                      FROM jitprof_steps GROUP BY 1, 2, 3) s
JOIN jitprof_hotspots h USING (queryid, plan_node_id, symbol)
WHERE s.sum > h.total_samples}),
	'0',
	"with rows dropped, steps still never exceed their function's samples");

$node->stop;
done_testing();

# The entries a node's top step is chosen from, best first, by the rule of
# jitprof_explain: [role, opcode, detail, lowest step, lowest attnum,
# steps summed, total samples].
sub top_step_groups
{
	my ($queryid, $plan_node_id) = @_;
	my $out = $node->safe_psql(
		'postgres', qq{
SELECT role, coalesce(opcode, ''), coalesce(detail, ''), min(step),
       min(attnum), count(DISTINCT (symbol, step, attnum)), sum(total_samples)
FROM jitprof_steps
WHERE queryid = $queryid AND plan_node_id = $plan_node_id
  AND (step IS NOT NULL OR attnum IS NOT NULL)
GROUP BY role, opcode, detail, CASE WHEN opcode IS NULL THEN step END
ORDER BY sum(total_samples) DESC, role COLLATE "C", min(step) NULLS LAST,
         min(attnum), coalesce(opcode, '') COLLATE "C",
         coalesce(detail, '') COLLATE "C"});
	return map { [ split /\|/, $_, -1 ] } split /\n/, $out;
}

# CRC-32C (Castagnoli), as PostgreSQL's pg_crc32c computes it
sub crc32c
{
	my ($data) = @_;
	my @table;
	for my $i (0 .. 255)
	{
		my $c = $i;
		$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
		$table[$i] = $c;
	}
	my $crc = 0xFFFFFFFF;
	$crc = $table[ ($crc ^ $_) & 0xFF ] ^ ($crc >> 8) for unpack('C*', $data);
	return $crc ^ 0xFFFFFFFF;
}
