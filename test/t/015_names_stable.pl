# JIT function names depend on the query and the plan only: the same in
# every backend and every execution, whatever order the data makes the
# executor compile code in.  Checked with a hash aggregate forced to spill
# (its transition code is compiled again for spilling and for reading
# spilled tuples back), with two hashed SubPlans whose hash tables the data
# builds in either order, and with deform functions (optimization off, so
# that they are not inlined).  Then a query with inlining and optimization
# on, whose functions (helpers included, if LLVM keeps any) are compared
# the same way and checked against the grammar.
#
# Then the first JIT query of a backend that loads jitprof only as the JIT
# provider: with compute_query_id = auto it was parsed before jitprof asked
# for query IDs, so its names say q0 and the log says why, once; with
# session_preload_libraries or compute_query_id = on it gets its ID.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

my $node = jitprof_node('names', conf => q{
jit_optimize_above_cost = -1
jit_inline_above_cost = -1
});

$node->safe_psql('postgres', q{
CREATE TABLE st AS SELECT g AS id, g % 7 AS grp FROM generate_series(1, 3000) g;
CREATE TABLE su AS SELECT g AS id FROM generate_series(1, 400) g;
ANALYZE st, su;
});

my $spill = 'SELECT count(*) FROM (SELECT g % 20000, count(*) FROM generate_series(1, 60000) g GROUP BY 1) s';
my $spill_settings = "SET work_mem = '64kB'; SET enable_sort = off;";

# query ID as EXPLAIN VERBOSE shows it
sub qid
{
	my ($session_sql, $sql) = @_;
	my $plan = $node->safe_psql('postgres', "$session_sql EXPLAIN (VERBOSE) $sql");
	$plan =~ /Query Identifier: (-?\d+)/ or die "no query identifier in: $plan";
	return $1;
}

# Run $sql $times times in one backend; return, for each execution, its
# functions in generation order as "llvm_name symbol" lines (functions of
# one execution share its module generations, so split by generation).
sub run_and_list
{
	my ($session_sql, $sql, $times, $qid) = @_;
	my $out = $node->safe_psql('postgres',
		"$session_sql\n\\o /dev/null\n" . ("$sql;\n" x $times) . "\\o\n"
		  . "SELECT llvm_name, symbol, role FROM jitprof_functions WHERE queryid = $qid");
	return [ map { [ split /\|/ ] } split /\n/, $out ];
}

# symbols of the rows, as a sorted list with multiplicities
sub symbols { return join(',', sort map { $_->[1] } @{ $_[0] }) }

my $spill_qid = qid($spill_settings, $spill);
my $twice = run_and_list($spill_settings, $spill, 2, $spill_qid);
my $once = run_and_list($spill_settings, $spill, 1, $spill_qid);
my %count;
$count{ $_->[1] }++ for @$twice;
my @names = sort keys %count;

ok(scalar(@names) > 0, 'the spilling aggregate has named functions');
is(join(',', grep { $count{$_} != 2 } @names), '',
	'two executions in one backend give the same names, each once per execution');
is(symbols($once), join(',', @names),
	'another backend gives the same names');
ok((grep { /_Agg_transition_spill$/ } @names)
	  && (grep { /_Agg_transition_refill$/ } @names),
	'the spill variants of the transition code have their own roles');
is(join(',', grep { /_transition_\d+($|_)/ } @names), '',
	'no transition code is numbered by compile order');

my @deforms = grep { /_deform_(scan|outer|inner)$/ } @names;
ok(scalar(@deforms) > 0, 'deform functions are named');
my %is_name = map { $_ => 1 } @names;
is(join(',', grep { my $o = $_; $o =~ s/_deform_(scan|outer|inner)$//; !$is_name{$o} } @deforms),
	'', "every deform function is named after its expression's function");

# Two hashed SubPlans under an OR: the data decides which of them builds
# its hash table (and compiles the table's comparison) first.  $1 = 0: the
# first one first; $1 = 1: the first row skips it, so the second one first.
my $or = 'SELECT count(*) FROM st WHERE (id > $1 AND id NOT IN (SELECT id % 300 FROM su))'
  . ' OR grp NOT IN (SELECT id % 5 FROM su)';
my $prep = "PREPARE q(int) AS $or; SET plan_cache_mode = force_custom_plan;";
my $or_qid = qid($prep, 'EXECUTE q(0)');

my %order;
for my $first (0, 1)
{
	my $rows = run_and_list($prep, "EXECUTE q($first)", 1, $or_qid);
	my @tables = map { $_->[1] } grep { $_->[2] eq 'subplan_table_equal' }
	  sort { ($a->[0] =~ /_(\d+)$/)[0] <=> ($b->[0] =~ /_(\d+)$/)[0] } @$rows;
	is(scalar(@tables), 2, "both tables' comparisons are named (\$1 = $first)");
	$order{$first} = join(',', map { /_(subplan_table_equal(?:_2)?)$/ ? $1 : $_ } @tables);
	$order{"set$first"} = symbols($rows);
	is(scalar(grep { $_->[1] =~ /_subplan_table_equal(_2)?_deform_outer$/ } @$rows), 2,
		"the deform functions of both comparisons are named after them (\$1 = $first)");
}
is($order{0}, 'subplan_table_equal,subplan_table_equal_2',
	'first SubPlan built first: compiled in the order of the names');
is($order{1}, 'subplan_table_equal_2,subplan_table_equal',
	'second SubPlan built first: compiled in the other order, same names');
is($order{set1}, $order{set0}, 'both executions have the same names');

# With inlining and optimization on (the defaults' behaviour for costly
# queries), every function of the object, helpers included (functions
# llvmjit generated for no expression, named q<queryid>_helper[_<n>] from
# their ordinal), has the same name in two executions and in another
# backend, and follows the grammar: no llvmjit counter leaks into a name.
my $inline = 'SET jit_inline_above_cost = 0; SET jit_optimize_above_cost = 0;';
my $numeric = 'SELECT g % 7, sum(g::numeric * 1.5), avg(length(md5(g::text)))'
  . ' FROM generate_series(1, 5000) g WHERE g::text LIKE $$%3%$$ GROUP BY 1';
my $numeric_qid = qid($inline, $numeric);
my $inlined_twice = run_and_list($inline, $numeric, 2, $numeric_qid);
my $inlined_once = run_and_list($inline, $numeric, 1, $numeric_qid);
my %inlined;
$inlined{ $_->[1] }++ for @$inlined_twice;
ok(scalar(keys %inlined) > 0, 'the inlined query has named functions');
is(join(',', grep { $inlined{$_} != 2 } sort keys %inlined), '',
	'inlined: two executions give the same names, each once per execution');
is(symbols($inlined_once), join(',', sort keys %inlined),
	'inlined: another backend gives the same names, helpers included');
is(join(',', map { $_->[1] } grep {
	$_->[1] !~ ($_->[2] eq 'helper'
		? qr/^q\Q$numeric_qid\E_helper(_\d+)?$/
		: qr/^q\Q$numeric_qid\E#\d+_[A-Za-z]+_[a-z_]+(_rel\d+)?(_\d+)?(_deform_(scan|outer|inner))?$/)
} @$inlined_once), '', 'every name, a helper\'s too, is made of its parts only');

$node->stop;

# The first JIT query of a backend that loads jitprof as its JIT provider.
my $lazy = jitprof_node('names_lazy', no_defaults => 1, conf => q{
jit_provider = 'jitprof'
jit = on
jit_above_cost = 0
compute_query_id = auto
jitprof.tiering = off
});
my $q = 'SELECT sum(g) FILTER (WHERE g % 3 = 0) FROM generate_series(1, 10000) g';

sub first_query_ids
{
	my ($n) = @_;
	return $n->safe_psql('postgres',
		"\\o /dev/null\n$q;\n$q;\n\\o\n"
		  . "SELECT string_agg(DISTINCT queryid::text COLLATE \"C\", ',' ORDER BY queryid::text COLLATE \"C\")"
		  . " FROM jitprof_functions"
		  . " WHERE node_type = 'Agg' AND role = 'transition'");
}

my $lazy_qid = $lazy->safe_psql('postgres',
	"SET compute_query_id = on; EXPLAIN (VERBOSE) $q") =~ /Query Identifier: (-?\d+)/ ? $1 : 'none';
my $log_start = -s $lazy->logfile;
my $ids = first_query_ids($lazy);
is($ids, join(',', sort ('0', $lazy_qid)),
	'without preloading, the loading statement is named q0 and the next one by its ID');
my $log = slurp_file($lazy->logfile, $log_start);
my @hints = $log =~ /LOG:  JIT-compiled functions of a statement parsed before jitprof was loaded are named without a query ID/g;
is(scalar(@hints), 1, 'the log says why, once');
like($log, qr/HINT:  Add jitprof to session_preload_libraries or shared_preload_libraries, or set compute_query_id to "on"\./,
	'and what to do about it');

$log_start = -s $lazy->logfile;
$ids = first_query_ids($lazy);
is($ids, join(',', sort ('0', $lazy_qid)), 'every new backend has the same first statement');

$lazy->append_conf('postgresql.conf', "session_preload_libraries = 'jitprof'");
$lazy->reload;
$ids = first_query_ids($lazy);
is($ids, $lazy_qid, 'with session_preload_libraries the first statement has its ID');

$lazy->append_conf('postgresql.conf', "session_preload_libraries = ''\ncompute_query_id = on");
$lazy->reload;
$log_start = -s $lazy->logfile;
$ids = first_query_ids($lazy);
is($ids, $lazy_qid, 'with compute_query_id = on the first statement has its ID');
unlike(slurp_file($lazy->logfile, $log_start), qr/named without a query ID/,
	'and nothing is logged');

$lazy->stop;
done_testing();
