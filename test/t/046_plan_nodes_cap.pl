# The plan-node table's cap (jitprof.max_plan_nodes, doc/plan_nodes.md): a
# query whose plan has more nodes than the table has room for gets no
# plan-node rows at all, never some of them; plan_nodes_dropped counts the
# rows that found no room, once each (a node both sampled and in the plan's
# shape was counted twice before 2026-12-06); the query itself is still profiled; and a query
# that fits still gets its rows.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;
use JitprofPerf;

# 100 is the setting's minimum
my $node = jitprof_node('plan_nodes_cap', conf => q{
jitprof.max_plan_nodes = 100
jitprof.plan_nodes = on
jitprof.sample_rate = 1000
});
$node->safe_psql('postgres', q{
CREATE TABLE t AS SELECT g AS a FROM generate_series(1, 100000) g;
ANALYZE t;
});

# an Aggregate over an Append of 60 Aggregates over Seq Scans: 122 nodes
my $big = 'SELECT sum(s) FROM ('
  . join(' UNION ALL ',
	map { "SELECT count(*) AS s FROM t WHERE a % $_ = 0" } 2 .. 61)
  . ') u';
my $small = 'SELECT count(*) FROM t WHERE a % 3 = 1';
my $fast = "SET jit_optimize_above_cost = -1; SET jit_inline_above_cost = -1;";
my $sampler = 'SELECT %s FROM jitprof_sampler';

my $expected = $node->safe_psql('postgres', "SET jit = off; $big");
my $big_qid = query_id($node, $big);
my $small_qid = query_id($node, $small);
my $nodes_in_big = () = $node->safe_psql('postgres', "EXPLAIN $big") =~ /\(cost=/g;
cmp_ok($nodes_in_big, '>', 100, "the plan has more nodes than the table's 100 rows ($nodes_in_big)");

is($node->safe_psql('postgres', "$fast $big"), $expected,
	'the query whose nodes do not fit: the interpreter\'s result');
my $dropped = $node->safe_psql('postgres', sprintf($sampler, 'plan_nodes_dropped'));
is($dropped, $nodes_in_big,
	'plan_nodes_dropped counts the rows that found no room, each node once');
is($node->safe_psql('postgres',
		"SELECT count(*) FROM jitprof_plan_nodes WHERE queryid = $big_qid"),
	'0', 'none of its nodes got a row: all or none');
cmp_ok($node->safe_psql('postgres',
		"SELECT coalesce(sum(query_samples), 0) FROM jitprof_queries WHERE queryid = $big_qid"),
	'>', 0, 'the query itself is still profiled');
cmp_ok($node->safe_psql('postgres', sprintf($sampler, 'plan_node_entries')), '<=', 100,
	'the table stays within its cap');

$node->safe_psql('postgres', "$fast $small");
cmp_ok($node->safe_psql('postgres',
		"SELECT count(*) FROM jitprof_plan_nodes WHERE queryid = $small_qid"),
	'>=', 2, 'a query that fits gets its node rows');
is($node->safe_psql('postgres', sprintf($sampler, 'plan_nodes_dropped')), $dropped,
	'and drops nothing');

$node->stop;
done_testing();
