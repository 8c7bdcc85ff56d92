# JIT_CODE_UNWINDING_INFO (issue 12): the jitdump sink writes, before each
# function's JIT_CODE_LOAD, a record with the .eh_frame + .eh_frame_hdr
# perf inject --jit puts into the function's jitted-*.so, so that real
# "perf record --call-graph dwarf" + "perf inject --jit" + "perf script"
# unwind from the JIT qual of a scan into ExecScan.  Checked: the records'
# structure (sizes, alignment, order), that the FDE each record has for its
# own function covers it exactly (parsed here, and by readelf in the
# jitted-*.so), and, as the control, that the same run with
# jitprof.jitdump_unwinding = off does not get from the qual to ExecScan.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JitprofTest;
use JitprofPerf;

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $node = jitprof_node('unwinding');
$node->safe_psql('postgres', q{
CREATE TABLE f AS SELECT g::float8 AS a, (g % 10)::float8 AS b
  FROM generate_series(1, 2000000) g;
VACUUM ANALYZE f;
});
my $query = 'SELECT count(*) FROM f WHERE a * b * b * a * a * b > 1000.5';
my $qid = query_id($node, $query);
my $qual = "q$qid#1_SeqScan_qual";

sub uleb
{
	my ($buf, $p) = @_;
	my ($v, $shift) = (0, 0);
	while (1)
	{
		my $b = ord(substr($$buf, $$p++, 1));
		$v |= ($b & 0x7f) << $shift;
		$shift += 7;
		return $v unless $b & 0x80;
	}
}

# Check one unwinding record as perf places it (code at 0, .eh_frame at
# ALIGN_8(code size), .eh_frame_hdr after it): returns an error string, or
# '' and the pc range of the FDE that begins at the code's start.
sub check_unwinding
{
	my ($u, $load) = @_;
	my $d = $u->{data};
	my $eh_size = $u->{unwinding_size} - $u->{hdr_size};
	my $eh_at = ($load->{code_size} + 7) & ~7;
	my $hdr_at = $eh_at + $eh_size;
	return 'record size not a multiple of 8' if $u->{size} % 8;
	return 'sizes inconsistent' if $u->{unwinding_size} > length($d)
	  || length($d) - $u->{unwinding_size} >= 8 || $eh_size <= 0;
	return 'mapped size' if $u->{mapped_size} != $u->{unwinding_size};
	my $hdr = substr($d, $eh_size, $u->{hdr_size});
	my ($ver, $ptr_enc, $cnt_enc, $tab_enc, $eh_ptr, $count) = unpack('C4 l L', $hdr);
	return 'hdr encodings' unless $ver == 1 && $ptr_enc == 0x1b && $cnt_enc == 0x03 && $tab_enc == 0x3b;
	# .eh_frame starts with a dummy CIE that pads it up to the place
	# shared by the object's records; eh_frame_ptr points past it
	my ($dummy_len, $dummy_id) = unpack('L L', $d);
	return 'dummy CIE' unless $dummy_id == 0 && $dummy_len % 8 == 4 && $dummy_len >= 12;
	return 'hdr eh_frame_ptr' unless $hdr_at + 4 + $eh_ptr == $eh_at + 4 + $dummy_len;
	return 'hdr size' unless $u->{hdr_size} == 12 + 8 * $count;
	my ($own_range, $prev);
	for my $k (0 .. $count - 1)
	{
		my ($loc, $fde) = unpack('l l', substr($hdr, 12 + 8 * $k, 8));
		return 'table not sorted' if defined $prev && $loc <= $prev;
		$prev = $loc;
		my $fp = $hdr_at + $fde - $eh_at;    # the FDE's offset in .eh_frame
		return 'FDE outside .eh_frame' if $fp < 0 || $fp + 16 > $eh_size;
		my ($len, $cie_ptr, $pc, $range) = unpack('L l l L', substr($d, $fp, 16));
		return 'FDE length' if $len % 4 || $fp + 4 + $len > $eh_size;
		my $cp = $fp + 4 - $cie_ptr;
		return 'CIE pointer' if $cp < 0;
		my ($clen, $cid, $cver) = unpack('L L C', substr($d, $cp, 9));
		my ($aug) = substr($d, $cp + 9) =~ /^([^\0]*)\0/;
		return "CIE $cid $cver $aug" unless $cid == 0 && $cver == 1 && $aug =~ /^zRS?$/;
		my $p = $cp + 9 + length($aug) + 1;
		uleb(\$d, \$p);
		uleb(\$d, \$p);
		$p++;                                 # code, data alignment, RA
		uleb(\$d, \$p);
		return 'CIE pointer encoding' unless ord(substr($d, $p, 1)) == 0x1b;
		my $start = $eh_at + $fp + 8 + $pc;   # pcrel: from the field
		return 'table entry and FDE disagree' unless $start == $hdr_at + $loc;
		$own_range = $range if $start == 0;
	}
	return 'no FDE for the function itself' unless defined $own_range;
	return ('', $own_range);
}

# One run: a backend with the jitdump sink (and jitprof.jitdump_unwinding
# as given) runs the query while perf records with DWARF call graphs.
sub run_case
{
	my ($name, $unwinding) = @_;
	my $jd = "$tmp/jd_$name";
	mkdir $jd or die;
	my $s = background_session($node, 'postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_safe("SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$jd'; "
		  . "SET jitprof.perf_map = off; SET jitprof.jitdump_unwinding = $unwinding");
	$s->query_safe($query);    # warm up: caches, and the first compilation
	my $perf = perf_record_start($pid, "$tmp/$name.data", '-k', '1',
		'--call-graph', 'dwarf');
	$s->query_safe($query) for 1 .. 2;
	my $status = $s->query_safe(
		"SELECT string_agg(name || '=' || value, ',') FROM jitprof_status WHERE name LIKE 'jitdump_%'");
	$s->quit;
	ok(wait_for_pid_exit($pid), "$name: backend exited");
	perf_record_finish($perf);
	my %st = map { split /=/, $_, 2 } split /,/, $status;
	my ($dump) = glob("$jd/.debug/jit/jitprof-*/jit-$pid.dump");
	my ($ok) = perf_run('inject', '--jit', '-i', "$tmp/$name.data", '-o', "$tmp/$name.jit.data");
	ok($ok, "$name: perf inject --jit ran");
	# --no-inline: the checks need function names only, and looking up
	# inline frames runs addr2line over libLLVM for minutes
	my $script;
	($ok, $script) = perf_run('script', '-i', "$tmp/$name.jit.data", '-F', 'ip,sym,dso',
		'--no-inline');
	ok($ok, "$name: perf script ran");

	# samples whose first frame is the qual, and how many reach ExecScan
	my ($in_qual, $reach) = (0, 0);
	my $example;
	for my $sample (split /\n\s*\n/, $script)
	{
		my @frames = grep { /\S/ } split /\n/, $sample;
		next unless @frames && $frames[0] =~ /\Q$qual\E/;
		$in_qual++;
		if (grep { /\sExecScan\s/ } @frames[ 1 .. $#frames ])
		{
			$reach++;
			$example //= $sample;
		}
	}
	my $report;
	($ok, $report) = perf_run('report', '-i', "$tmp/$name.jit.data", '--stdio',
		'--no-children', '-G', '--no-inline', '--sort', 'dso,sym', '--symbols', $qual);
	ok($ok, "$name: perf report --no-children -G ran");
	return {
		report => $report,
		pid => $pid,
		dump => $dump,
		status => \%st,
		in_qual => $in_qual,
		reach => $reach,
		example => $example,
		script => $script,
		jd => $jd,
	};
}

my $on = run_case('on', 'on');
diag "with unwinding: $on->{reach} of $on->{in_qual} qual samples reach ExecScan";
note "example:\n$on->{example}" if $on->{example};
cmp_ok($on->{in_qual}, '>=', 50, 'perf sampled the JIT qual');
cmp_ok($on->{reach}, '>=', 0.8 * $on->{in_qual},
	'at least 80% of the qual samples unwind into ExecScan');
cmp_ok($on->{status}{jitdump_unwinding_records}, '>', 0, 'jitdump_unwinding_records counted');
# -G (caller order) prints each chain from _start down to the sampled
# function: ExecScan right above the qual
note "perf report --no-children -G:\n$on->{report}";
like($on->{report}, qr/ExecScan\s*\n[\s|]*\Q$qual\E\s*\n/,
	'perf report -G: the qual\'s callers include ExecScan');
is($on->{status}{jitdump_unwinding_missing}, '0', 'every function had an FDE');

# the records
my (undef, $records) = jitdump_parse($on->{dump});
my ($nunw, $nunw_query, $bad, $qual_range, $qual_size) = (0, 0, 0, undef, undef);
for my $i (0 .. $#$records)
{
	my $r = $records->[$i];
	next unless $r->{id} == 4;
	$nunw++;
	my $load = $records->[ $i + 1 ];
	if (!$load || $load->{id} != 0)
	{
		$bad++;
		diag "unwinding record at $r->{pos} not followed by its code load";
		next;
	}
	my ($err, $range) = check_unwinding($r, $load);
	if ($err ne '' || $range != $load->{code_size})
	{
		$bad++;
		diag "$load->{name}: " . ($err || "FDE range $range, code size $load->{code_size}");
	}
	($qual_range, $qual_size) = ($range, $load->{code_size}) if $load->{name} eq $qual;
	$nunw_query++ if $load->{name} =~ /^q\Q$qid\E#/;
}
cmp_ok($nunw, '>=', 2, 'JIT_CODE_UNWINDING_INFO records written');
# (the status query's own JIT code is linked after it read the counters)
cmp_ok($on->{status}{jitdump_unwinding_records}, '>=', $nunw_query, 'counted: at least the query\'s');
cmp_ok($on->{status}{jitdump_unwinding_records}, '<=', $nunw, 'counted: at most all in the file');
is($bad, 0, 'each precedes its code load, is 8-byte aligned, has consistent sizes, an .eh_frame_hdr '
	  . 'whose table matches its FDEs, and an FDE that covers its function exactly');
ok(defined $qual_range && $qual_range == $qual_size, "the qual's FDE covers its code");

# perf's jitted-*.so of the qual: readelf finds the FDE at its code
my $qual_so;
for my $so (glob("$on->{jd}/.debug/jit/jitprof-*/jitted-$on->{pid}-*.so"))
{
	my $syms = `readelf -sW '$so' 2>&1`;
	$qual_so = $so if $syms =~ /\Q$qual\E/;
}
ok(defined $qual_so, 'perf inject wrote the qual\'s jitted-*.so');
my $sections = `readelf -SW '$qual_so' 2>&1`;
like($sections, qr/\.eh_frame_hdr\s+PROGBITS/, 'with an .eh_frame_hdr section');
my $frames = `readelf --debug-dump=frames '$qual_so' 2>&1`;
my $end = sprintf('%016x', 0x80 + $qual_size);
like($frames, qr/FDE cie=\w+ pc=0000000000000080\.\.$end/,
	'readelf --debug-dump=frames: an FDE for exactly the qual (0x80 up to its end)');
unlike($frames, qr/[Ww]arning|[Ee]rror/, 'and no complaints');

# the control: no records, and perf no longer gets from the qual to ExecScan
my $off = run_case('off', 'off');
diag "without unwinding: $off->{reach} of $off->{in_qual} qual samples reach ExecScan";
cmp_ok($off->{in_qual}, '>=', 50, 'control: perf sampled the JIT qual');
is(scalar(grep { $_->{id} == 4 } @{ (jitdump_parse($off->{dump}))[1] }), 0,
	'control: no unwinding records with jitprof.jitdump_unwinding = off');
cmp_ok($off->{reach}, '<', 0.2 * $off->{in_qual},
	'control: without them, qual samples do not unwind into ExecScan');
note "control, perf report --no-children -G:\n$off->{report}";
unlike($off->{report}, qr/ExecScan\s*\n[\s|]*\Q$qual\E\s*\n/,
	'control: nor in perf report -G');
diag "jitdump file: $on->{status}{jitdump_bytes} bytes with unwinding records, "
  . "$off->{status}{jitdump_bytes} without";

# RuntimeDyld links too: the linker reads its .eh_frame from memory; the
# query's answer does not change
{
	my $jd = "$tmp/jd_rtdyld";
	mkdir $jd or die;
	my $expected = $node->safe_psql('postgres', "SET jit = off; $query");
	my $out = $node->safe_psql('postgres',
		"SET jitprof.linker = rtdyld; SET jitprof.perf_jitdump = on; SET jitprof.jitdump_dir = '$jd';\n"
		  . "$query;\nSET jit = off;\n"
		  . "SELECT string_agg(name || '=' || value, ',') FROM jitprof_status "
		  . "WHERE name IN ('linker', 'jitdump_unwinding_records', 'jitdump_unwinding_no_room', 'jitdump_unwinding_missing')");
	my ($answer, $status) = split /\n/, $out;
	my %st = map { split /=/, $_, 2 } split /,/, $status;
	note "rtdyld: $status";
	is($answer, $expected, 'rtdyld: same answer as without JIT');
	is($st{linker}, 'rtdyld', 'rtdyld: linked by RuntimeDyld');
	is($st{jitdump_unwinding_missing}, '0', 'rtdyld: every function had an FDE');
	cmp_ok($st{jitdump_unwinding_records} + $st{jitdump_unwinding_no_room}, '>', 0,
		'rtdyld: unwinding data collected (written, or no room after the code)');
	my ($dump) = glob("$jd/.debug/jit/jitprof-*/jit-*.dump");
	my (undef, $recs) = jitdump_parse($dump);
	my $bad = 0;
	for my $i (0 .. $#$recs)
	{
		next unless $recs->[$i]{id} == 4;
		my ($err, $range) = check_unwinding($recs->[$i], $recs->[ $i + 1 ]);
		$bad++ if $err ne '' || $range != $recs->[ $i + 1 ]{code_size};
	}
	is($bad, 0, 'rtdyld: the records it wrote are well formed');
}

$node->stop;
done_testing();
