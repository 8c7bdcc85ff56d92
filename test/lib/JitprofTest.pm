# Helpers shared by jitprof's TAP tests.
#
# jitprof_node() returns a started PostgreSQL::Test::Cluster configured like
# the regression suite (test/jitprof.conf: jitprof preloaded, chosen as
# jit_provider, JIT forced for every query), plus any extra settings given,
# with the extension created in database "postgres".
#
# corpus_database() and run_corpus() run the correctness corpus
# (test/corpus) under given settings, for the tests that compare its output
# with the interpreter's.
#
# kill_backend() is how a test kills a server process on purpose: tools/test.sh
# fails a run whose server logs show a process killed by a signal, unless
# the test declared that PID and signal (test/lib/JitprofCrashes.pm).

package JitprofTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofCrashes qw(expect_signal);

our @EXPORT = qw(jitprof_node jitprof_conf status_value build_test_module
  maps_of pkglibdir kill_backend llvm_config llvm_tool llvmjit_libllvm
  background_session seqscan_calls_execscan strict_call2_step gdb_prologue
  corpus_database run_corpus backend_footprint
  footprint_run psql_lines clear_perf_map_path);

# The regression suite's settings, as a string for append_conf.
sub jitprof_conf
{
	my $src = $ENV{JITPROF_SRC} // '.';
	return slurp_file("$src/test/jitprof.conf");
}

sub jitprof_node
{
	my ($name, %opts) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init(%{ $opts{init} // {} });
	$node->append_conf('postgresql.conf',
		($opts{no_defaults} ? '' : jitprof_conf()) . ($opts{conf} // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION jitprof')
	  unless $opts{no_extension};
	return $node;
}

# A background psql session on $node whose timeout (timeout_default)
# applies to each query, as safe_psql's does, rather than to the
# session's whole life: a file that runs a hundred queries in one session
# on a busy machine must not time out on their sum.
sub background_session
{
	my ($node, @args) = @_;
	my $session = $node->background_psql(@args);
	$session->set_query_timer_restart();
	return $session;
}

# Remove whatever is at /tmp/perf-PID.map before a test plants something
# there or asserts that nothing is there.  Call it while PID's backend has
# not compiled anything yet.  Kept maps outlive the cluster that wrote them
# (doc/perf.md, "Limits"), and once pids come round, a backend of this test
# can get the pid of an earlier test's backend, whose map is still there.
sub clear_perf_map_path
{
	my ($pid) = @_;
	my $path = "/tmp/perf-$pid.map";
	return unless -e $path || -l $path;
	if (-d $path && !-l $path)
	{
		rmdir $path or die "rmdir $path: $!";
	}
	else
	{
		unlink $path or die "unlink $path: $!";
	}
	note "removed $path, left by an earlier process with pid $pid";
	return;
}

# Send SIG (KILL, 9...) to server process PID of NODE, declared first so
# that the crash check accepts that PID's death by that signal in NODE's log.
sub kill_backend
{
	my ($node, $sig, $pid) = @_;
	expect_signal($node->logfile, $pid, $sig);
	kill($sig, $pid) == 1 or die "could not send SIG$sig to PID $pid: $!";
	return;
}

# The first lines of a gdb batch script attached to a backend
# (test/lib/gdb_prologue.gdb).
sub gdb_prologue
{
	my $src = $ENV{JITPROF_SRC} // '.';
	return slurp_file("$src/test/lib/gdb_prologue.gdb");
}

# One value of jitprof_status, as seen by the session running $sql first.
sub status_value
{
	my ($node, $name, $sql) = @_;
	$sql = defined $sql ? "\\o /dev/null\n$sql;\n\\o\n" : '';
	return $node->safe_psql('postgres',
		"${sql}SELECT value FROM jitprof_status WHERE name = '$name'");
}

# The library directory of the installation under test.
sub pkglibdir
{
	my $dir = `pg_config --pkglibdir`;
	chomp $dir;
	return $dir;
}

# The output of the llvm-config jitprof was built with (the Makefile's
# installcheck exports JITPROF_LLVM_CONFIG), called with ARGS, chomped.
sub llvm_config
{
	my @args = @_;
	my $llvm_config = $ENV{JITPROF_LLVM_CONFIG}
	  // die 'JITPROF_LLVM_CONFIG is not set: run the tests through make installcheck';
	my ($out, $err) = run_command([ $llvm_config, @args ]);
	die "$llvm_config @args failed: $err" if $out eq '';
	chomp $out;
	return $out;
}

# The path of one of that LLVM's tools (opt, llc...).
sub llvm_tool
{
	my ($name) = @_;
	return llvm_config('--bindir') . "/$name";
}

# The libLLVM that the server's llvmjit.so links (its DT_NEEDED entry, as
# libLLVM-14.so.1 or libLLVM.so.19.1): the Makefile builds jitprof_llvm.so
# against that LLVM.
sub llvmjit_libllvm
{
	my $so = pkglibdir() . '/llvmjit.so';
	my @needed = `readelf -d $so` =~ /\(NEEDED\)\s+Shared library: \[(libLLVM[^\]]*)\]/g;
	die "$so does not link exactly one libLLVM: @needed" unless @needed == 1;
	return $needed[0];
}

# Whether the server calls a SeqScan's qual from ExecScan, an exported
# function that backtraces and perf name.  PostgreSQL 18 inlines ExecScan's
# body (ExecScanExtended, in executor/execScan.h) into nodeSeqscan.c's static
# functions, which a stripped server shows only as an address in its
# executable: read from the installed headers.
sub seqscan_calls_execscan
{
	my $pg_config = $ENV{JITPROF_BUILD_PG_CONFIG} // 'pg_config';
	my $inc = `$pg_config --includedir-server`;
	chomp $inc;
	return !-e "$inc/executor/execScan.h";
}

# The opcode of a strict two-argument function call step (float8mul's):
# PostgreSQL 18 has steps specialised by argument count
# (EEOP_FUNCEXPR_STRICT_2), read from the installed executor/execExpr.h.
sub strict_call2_step
{
	my $pg_config = $ENV{JITPROF_BUILD_PG_CONFIG} // 'pg_config';
	my $inc = `$pg_config --includedir-server`;
	chomp $inc;
	my $h = slurp_file("$inc/executor/execExpr.h");
	return $h =~ /\bEEOP_FUNCEXPR_STRICT_2\b/ ? 'EEOP_FUNCEXPR_STRICT_2' : 'EEOP_FUNCEXPR_STRICT';
}

# /proc/<pid>/maps of a process, as one string.
sub maps_of
{
	my ($pid) = @_;
	return slurp_file("/proc/$pid/maps");
}

# Compile test/modules/<name>.c with pg_config's compiler and flags into
# DIR/<name>.so and return that path, for LOAD or CREATE FUNCTION by
# absolute path.  Extra arguments go to the compiler (-I, libraries).  Dies
# (failing the test) when it does not build.
sub build_test_module
{
	my ($name, $dir, @extra) = @_;
	my $src = $ENV{JITPROF_SRC} // '.';
	my ($stdout, $stderr) =
	  run_command([ "$src/tools/build_test_module.sh", $name, $dir, @extra ]);
	die "could not build test module $name: $stderr" unless -f "$dir/$name.so";
	return "$dir/$name.so";
}

# The correctness corpus's query files, in the order they run.
# psql commands that print this backend's mappings, anonymous memory and
# jitprof counters as LABEL|name|value lines, run with JIT off so that
# measuring links nothing itself (tests 003 and 095).
sub backend_footprint
{
	my ($label) = @_;
	return qq{
\\o
SET jit = off;
SELECT '$label', 'maps', count(*) FROM regexp_split_to_table(rtrim(pg_read_file('/proc/self/maps'), E'\\n'), E'\\n');
SELECT '$label', 'rss_anon_kb', (regexp_match(pg_read_file('/proc/self/status'), 'RssAnon:\\s+(\\d+) kB'))[1];
SELECT '$label', 'anonymous_kb', (regexp_match(pg_read_file('/proc/self/smaps_rollup'), '\\nAnonymous:\\s+(\\d+) kB'))[1];
SELECT '$label', name, value FROM jitprof_status;
SELECT '$label', 'epoch', extract(epoch FROM clock_timestamp());
SET jit = on;
\\o /dev/null
};
}

# backend_footprint()'s lines in OUTPUT, as {label}{name} = value
sub footprint_results
{
	my ($output) = @_;
	my %m;
	for (split /\n/, $output)
	{
		my ($label, $name, $value) = split /\|/, $_, 3;
		$m{$label}{$name} = $value;
	}
	return %m;
}

# Run SCRIPT, which holds backend_footprint() sections, in one session of
# NODE; checks that it ran without an error or a warning, and returns its
# footprint_results().
sub footprint_run
{
	my ($node, $script) = @_;
	my $start = time;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $script);
	note("workload took " . (time - $start) . " s");
	is($ret, 0, 'workload ran');
	is($stderr, '', 'no errors or warnings');
	return footprint_results($stdout);
}

# One psql session on NODE: PREFIX, a SET for each of SETTINGS, then each
# statement of SQL; returns its stdout lines (an array ref) and stderr.
sub psql_lines
{
	my ($node, $prefix, $settings, @sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		$prefix . join('', map { "SET $_;\n" } @$settings) . join('', map { "$_;\n" } @sql),
		on_error_stop => 0);
	return ([ split /\n/, $out ], $err);
}

my @corpus_files =
  map { ($ENV{JITPROF_SRC} // '.') . "/test/corpus/$_.sql" }
  qw(tpch expressions joins);

# Create database "corpus" on $node, with the corpus's tables (loaded
# interpreted) and the extension.
sub corpus_database
{
	my ($node) = @_;
	my $schema = ($ENV{JITPROF_SRC} // '.') . '/test/corpus/schema.sql';
	$node->safe_psql('postgres', 'CREATE DATABASE corpus');
	$node->safe_psql('corpus',
		"SET jit = off;\n\\i $schema\nCREATE EXTENSION jitprof;");
	return;
}

# Run the whole corpus in one session of $node's database "corpus" after
# "SET" of each of @$settings; return its query output, its errors, and that
# session's jitprof_status afterwards as a hash, with the counts of its
# deform functions, of its recent functions, and of those not named from
# the plan (deform_functions, recent_functions, unnamed_functions).
sub run_corpus
{
	my ($node, $settings) = @_;
	my $marker = '==jitprof status==';
	my $script = join('', map { "SET $_;\n" } @$settings)
	  . join('', map { "\\i $_\n" } @corpus_files)
	  . "\\echo $marker\n"
	  . "SELECT name || '=' || value FROM jitprof_status;\n"
	  . "SELECT 'deform_functions=' || count(*) FROM jitprof_functions WHERE role LIKE 'deform%';\n"
	  . "SELECT 'recent_functions=' || count(*) FROM jitprof_functions;\n"
	  . "SELECT 'unnamed_functions=' || count(*) FROM jitprof_functions\n"
	  . "  WHERE llvm_name ~ '^(evalexpr|deform)_' AND (role = 'helper' OR symbol !~ '^q-?\\d+#\\d+_');\n";
	my ($ret, $stdout, $stderr) =
	  $node->psql('corpus', $script, on_error_stop => 0);
	my ($output, $status) = split /^\Q$marker\E\n/m, $stdout, 2;
	my %status = map { split /=/, $_, 2 } split /\n/, $status // '';
	return ($output, $stderr, \%status);
}

1;
