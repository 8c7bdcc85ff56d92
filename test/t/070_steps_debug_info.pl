# jitprof.steps (issue 12, stage 1): every function llvmjit generates gets
# DWARF debug information whose "source" is the expression's step listing.
# Checked on the module llvmjit really emits (jit_dump_bitcode writes it
# after optimization and inlining): it verifies, it names the step file,
# and its line table has the line of the float8 multiplication step; the
# step file lists the steps with their columns and functions, and the deform
# function's attributes.  Off, nothing is listed; with an unusable
# directory, queries run, functions keep their line numbers, the failure is
# counted.
use strict;
use warnings;

use File::Find;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;

# the opcode of float8mul's step on this server
my $call2 = strict_call2_step();

# the tools of the LLVM jitprof was built against
my %tool = map { $_ => llvm_tool($_) } qw(llvm-dis opt llc llvm-dwarfdump);
for my $tool (values %tool)
{
	-x $tool or BAIL_OUT("$tool is required (tools/deps.sh installs it)");
}

my $node = jitprof_node('steps');
my $jd = $node->basedir . '/jd';
mkdir $jd or die "mkdir $jd: $!";
chmod 0700, $jd;
$node->safe_psql('postgres', qq{
ALTER SYSTEM SET jitprof.jitdump_dir = '$jd';
ALTER SYSTEM SET jitprof.perf_jitdump = on;
CREATE TABLE f AS SELECT g::float8 AS a, (g % 10)::float8 AS b, g AS id
  FROM generate_series(1, 20000) g;
});
$node->reload;
my $mul_count = $node->safe_psql('postgres', 'SET jit = off; SELECT count(*) FROM f WHERE a * b > 1000.5');
my $add_count = $node->safe_psql('postgres', 'SET jit = off; SELECT count(*) FROM f WHERE a + b > 10');

is($node->safe_psql('postgres', 'SHOW jitprof.steps'), 'off', 'jitprof.steps is off by default');
$node->safe_psql('postgres', 'ALTER SYSTEM SET jitprof.steps = on');
$node->reload;

my $out = $node->safe_psql('postgres', q{
SET jit_dump_bitcode = on;
SELECT pg_backend_pid();
SELECT count(*) FROM f WHERE a * b > 1000.5;
SELECT name || '=' || value FROM jitprof_status WHERE name LIKE 'steps_%' ORDER BY name;
});
my ($pid, $count, @status) = split /\n/, $out;
my %st = map { split /=/, $_, 2 } @status;
is($count, $mul_count, 'the query gives the interpreter\'s answer');
cmp_ok($st{steps_functions_annotated}, '>=', 2, 'the qual and its deform function were annotated');
is($st{steps_functions_skipped}, '0', 'none was skipped');
is($st{steps_file_failures}, '0', 'the step file was written');
is($st{steps_listings_dropped}, '0', 'with every listing');
cmp_ok($st{steps_file_bytes}, '>', 0, 'and has bytes');

# the step file
my @files;
find(sub { push @files, $File::Find::name if $_ eq "steps-$pid.txt" }, "$jd/.debug/jit");
is(scalar(@files), 1, 'one step file for the backend, under jitdump_dir/.debug/jit');
my $listing = slurp_file($files[0]);
my @lines = split /\n/, $listing;
is(length($listing), $st{steps_file_bytes}, 'steps_file_bytes is the size of the file');
like($listing, qr/^step \d+: EEOP_SCAN_FETCHSOME last_var 2$/m, 'fetch step listed');
like($listing, qr/^step \d+: EEOP_SCAN_VAR a \(attno 1\)$/m, 'column a by name and number');
like($listing, qr/^step \d+: EEOP_SCAN_VAR b \(attno 2\)$/m, 'column b by name and number');
like($listing, qr/^step \d+: \Q$call2\E float8mul$/m, 'the multiplication by function name');
like($listing, qr/^step \d+: EEOP_QUAL -> step \d+$/m, 'the qual with its jump target');
like($listing, qr/^evalexpr_\d+_\d+: \d+ steps$/m, 'evaluation function header');
like($listing, qr/^deform_\d+_\d+: deform 2 attributes\nattribute 1: a double precision\nattribute 2: b double precision$/m,
	'deform function: one line per attribute, with name and type');
my ($mul_line) = grep { $lines[ $_ - 1 ] =~ /\Q$call2\E float8mul$/ } 1 .. @lines;
ok(defined $mul_line, "multiplication step is on line " . ($mul_line // '?'));

# the module llvmjit emitted (after optimization and inlining)
my $datadir = $node->data_dir;
opendir(my $dh, $datadir) or die;
my @bc = sort grep { /^$pid\.\d+\.optimized\.bc$/ } readdir $dh;
closedir $dh;
cmp_ok(scalar(@bc), '>=', 1, 'jit_dump_bitcode wrote the optimized module');
my $qual_bc;
for my $bc (@bc)
{
	my $ir = `$tool{'llvm-dis'} -o - $datadir/$bc`;
	if ($ir =~ /float8mul|fmul double/)
	{
		$qual_bc = "$datadir/$bc";
		like($ir, qr/!DICompileUnit\(language: DW_LANG_C, file: ![0-9]+, producer: "jitprof"/, 'compile unit by jitprof');
		like($ir, qr/!DIFile\(filename: "steps-$pid\.txt", directory: "\Q$jd\E\/\.debug\/jit\/jitprof-steps-/,
			'its file is the step file');
		like($ir, qr/!DISubprogram\(name: "evalexpr_\d+_\d+"/, 'a subprogram per function');
		like($ir, qr/!"Debug Info Version", i32 3\}/, 'Debug Info Version module flag');
		like($ir, qr/!"Dwarf Version", i32 4\}/, 'Dwarf Version module flag');
		like($ir, qr/fmul double .*, !dbg !\d+/, 'the inlined multiplication has a location');
		last;
	}
}
ok(defined $qual_bc, 'found the module of the qual');
SKIP:
{
	skip 'no module', 3 unless defined $qual_bc;
	my ($rc, $o, $e) = run_command([ $tool{opt}, '-passes=verify', '-disable-output', $qual_bc ]);
	is($rc ? 1 : 0, 0, 'the emitted module verifies') or diag($e);
	my $obj = $node->basedir . '/qual.o';
	system($tool{llc}, '-O2', '-filetype=obj', '-o', $obj, $qual_bc) == 0 or die 'llc';
	my $dwarf = `$tool{'llvm-dwarfdump'} --debug-line $obj`;
	like($dwarf, qr/name: "steps-$pid\.txt"/, 'the object\'s line table names the step file');
	ok(scalar(grep { /^0x[0-9a-f]+\s+$mul_line\s/ } split /\n/, $dwarf),
		"the line table maps machine code to the multiplication step's line $mul_line");
}

# off: nothing listed, nothing annotated
$out = $node->safe_psql('postgres', q{
SET jitprof.steps = off;
SELECT count(*) FROM f WHERE a + b > 10;
SELECT value FROM jitprof_status WHERE name = 'steps_functions_annotated';
SELECT value FROM jitprof_status WHERE name = 'steps_file_bytes';
});
is($out, "$add_count\n0\n0", 'jitprof.steps = off: no debug information, no listing');

# a .debug directory others may write to: no file, counted; the query still runs
# and the functions still get their lines
my $bad = $node->basedir . '/bad';
mkdir $bad;
mkdir "$bad/.debug";
chmod 0777, "$bad/.debug";
$out = $node->safe_psql('postgres', qq{
SET jitprof.jitdump_dir = '$bad';
SET jitprof.perf_jitdump = off;
SET jitprof.gdb = on;
SELECT count(*) FROM f WHERE a * b > 1000.5;
SELECT value FROM jitprof_status WHERE name = 'steps_file_failures';
SELECT value::int > 0 FROM jitprof_status WHERE name = 'steps_functions_annotated';
SELECT value::int > 0 FROM jitprof_status WHERE name = 'steps_listings_dropped';
});
is($out, "$mul_count\n1\nt\nt", 'unusable directory: query answers, failure and dropped listing counted');
ok(!-e "$bad/.debug/jit", 'nothing created below the unsafe directory');

ok(!grep(/terminated by signal|WARNING/, slurp_file($node->logfile)), 'no crash, no warning');
$node->stop;
done_testing();
