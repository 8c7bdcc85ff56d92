# Makefile for jitprof (PGXS)
#
# jitprof is two shared libraries (doc/provider.md):
#  - jitprof.so, the library in shared_preload_libraries and jit_provider.
#    Plain C: it links no LLVM, libstdc++ or libelf, so preloading it keeps
#    them out of the postmaster and the processes it forks.
#  - jitprof_llvm.so, the part that needs them (linker, code arena, gdb
#    sink, LLVM C API calls).  jitprof.so loads it in a backend the first
#    time it is that backend's JIT provider; the two meet only through one
#    exported function (src/core/jitprof_llvm.h).
# Both are built with hidden visibility and export only what PostgreSQL
# looks up (and, for jitprof_llvm.so, its one entry point); test 007 checks
# that with nm -D --defined-only.

MODULE_big = jitprof
# src/ is in layers, one folder each (doc/architecture.md); listed bottom up.
OBJS = \
	src/core/settings.o \
	src/core/file_io.o \
	src/core/plan_copy.o \
	src/store/store.o \
	src/store/store_evict.o \
	src/store/store_rows.o \
	src/store/store_file.o \
	src/advisor/advisor.o \
	src/advisor/advisor_file.o \
	src/advisor/advisor_stats.o \
	src/advisor/advice.o \
	src/names/naming.o \
	src/names/roles.o \
	src/names/steps.o \
	src/link/registry.o \
	src/sinks/range_set.o \
	src/sinks/sink_perf_map.o \
	src/sinks/sink_jitdump.o \
	src/sinks/jitdump_unwind.o \
	src/sampler/sampler_signal.o \
	src/sampler/sampler_profile.o \
	src/sampler/sampler_nodes.o \
	src/sampler/sampler_sites.o \
	src/sampler/sampler_steps.o \
	src/sampler/sampler_tiering.o \
	src/provider/provider.o \
	src/provider/llvm_library.o \
	src/provider/got_patch.o \
	src/provider/tiering.o \
	src/hooks/hooks.o \
	src/provider/tiering_rule.o \
	src/provider/tiering_progress.o \
	src/provider/tiering_plan.o \
	src/views/hotspots.o \
	src/views/hotspot_steps.o \
	src/views/plan_nodes.o \
	src/views/plan_explain.o \
	src/views/plan_folded.o \
	src/views/status.o \
	src/views/jit_payoff.o \
	src/jitprof.o

# src/llvm: jitprof_llvm.so, which includes only core's headers
LLVM_MODULE = jitprof_llvm
LLVM_OBJS = \
	src/llvm/llvm_entry.o \
	src/llvm/linker.o \
	src/llvm/llvm_plugins.o \
	src/llvm/code_arena.o \
	src/llvm/eh_frame.o \
	src/llvm/sink_gdb.o \
	src/llvm/llvm_steps.o \
	src/llvm/sink_gdb_dwarf.o

EXTENSION = jitprof
DATA = jitprof--1.0.sql jitprof--1.0--1.1.sql jitprof--1.1--1.2.sql \
	jitprof--1.2--1.3.sql jitprof--1.3--1.4.sql \
	$(POWA_DATA)
# The PoWA 4 and PoWA 5 module, an extension of its own (doc/monitoring.md), needs no
# library.  Its control file is in DATA because EXTENSION's are looked for
# in the top directory; both install into the extension directory.
POWA_DATA = \
	integrations/powa/jitprof_powa.control \
	integrations/powa/jitprof_powa--1.0.sql \
	integrations/powa/jitprof_powa--1.0--1.1.sql \
	integrations/powa/jitprof_powa--1.1--1.2.sql \
	integrations/powa/jitprof_powa--unpackaged.sql \
	integrations/powa/jitprof_powa--unpackaged--1.0.sql
PGFILEDESC = "jitprof - JITLink-based JIT provider with per-query profiling"

# "make installcheck" runs the pg_regress suites against a running server
# that has jitprof in shared_preload_libraries and as its jit_provider
# (README, "Building and packaging"), reached as psql reaches it (PGHOST, PGPORT); each
# session forces JIT through PGOPTIONS.  It then runs the TAP tests in
# test/t/, which start clusters of their own.  Run it as the server's OS
# user, not as root, in a tree that user can write.  tools/test.sh runs it
# so, and once exactly as README writes it (its readme_installcheck unit).
REGRESS = status names functions errors hotspots versions plan_nodes \
	jit_advice
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

EXTRA_CLEAN = $(LLVM_MODULE)$(DLSUFFIX) $(LLVM_OBJS) src/names/eeop_names.h

PG_CONFIG ?= pg_config

# jitprof_llvm.so runs inside llvmjit.so's LLVM, so it must be built against
# that very LLVM: the one llvmjit.so links (its NEEDED libLLVM entry, e.g.
# libLLVM-14.so.1 or libLLVM.so.19.1), found as llvm-config of that major,
# unless LLVM_CONFIG names one.  A different major, or one jitprof is not
# tested with, stops the build here with one message (README, "Platforms").
JITPROF_TESTED_LLVM = 14 19 21
LLVMJIT_SO := $(shell $(PG_CONFIG) --pkglibdir)/llvmjit.so
LLVMJIT_LIBLLVM := $(shell readelf -d '$(LLVMJIT_SO)' 2>/dev/null | \
	sed -n 's/.*(NEEDED).*\[\(libLLVM[^]]*\)\]$$/\1/p')
LLVMJIT_LLVM_MAJOR := $(shell echo '$(LLVMJIT_LIBLLVM)' | \
	sed -n 's/^libLLVM-\([0-9][0-9]*\).*/\1/p; s/^libLLVM\.so\.\([0-9][0-9]*\).*/\1/p')
# cleaning needs no LLVM
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out clean distclean maintainer-clean uninstall,$(MAKECMDGOALS)),)
JITPROF_NO_LLVM_CHECK = 1
endif
endif

# (PGXS sets LLVM_CONFIG to the server's configure-time llvm-config, so
# jitprof's own is JITPROF_LLVM_CONFIG: LLVM_CONFIG, given on the command
# line or in the environment, or the one found.)
ifneq ($(filter command% environment%,$(origin LLVM_CONFIG)),)
JITPROF_LLVM_CONFIG := $(LLVM_CONFIG)
else ifneq ($(LLVMJIT_LLVM_MAJOR),)
JITPROF_LLVM_CONFIG := $(firstword $(wildcard /usr/lib/llvm-$(LLVMJIT_LLVM_MAJOR)/bin/llvm-config) \
	$(shell command -v llvm-config-$(LLVMJIT_LLVM_MAJOR)))
endif
ifndef JITPROF_NO_LLVM_CHECK
ifeq ($(JITPROF_LLVM_CONFIG),)
ifeq ($(wildcard $(LLVMJIT_SO)),)
$(error jitprof: the server has no $(LLVMJIT_SO), which jitprof wraps: install the server's JIT support (postgresql-NN-jit on Debian testing), or set LLVM_CONFIG)
else ifeq ($(LLVMJIT_LLVM_MAJOR),)
$(error jitprof: cannot tell which libLLVM $(LLVMJIT_SO) links (readelf -d shows none): set LLVM_CONFIG to that LLVM's llvm-config)
else
$(error jitprof: $(LLVMJIT_SO) links $(LLVMJIT_LIBLLVM), but no llvm-config of LLVM $(LLVMJIT_LLVM_MAJOR) is installed: install llvm-$(LLVMJIT_LLVM_MAJOR)-dev, or set LLVM_CONFIG)
endif
endif
LLVM_VERSION := $(shell $(JITPROF_LLVM_CONFIG) --version 2>/dev/null | sed -n '1{/^[0-9][0-9]*\.[0-9]/p;}')
LLVM_MAJOR := $(firstword $(subst ., ,$(LLVM_VERSION)))
ifeq ($(LLVM_VERSION),)
$(error jitprof: "$(JITPROF_LLVM_CONFIG) --version" prints no LLVM version: set LLVM_CONFIG to an llvm-config)
endif
ifeq ($(filter $(LLVM_MAJOR),$(JITPROF_TESTED_LLVM)),)
$(error jitprof: $(JITPROF_LLVM_CONFIG) is LLVM $(LLVM_VERSION), and jitprof is tested with LLVM $(JITPROF_TESTED_LLVM) only)
endif
ifneq ($(LLVMJIT_LLVM_MAJOR),)
ifneq ($(LLVMJIT_LLVM_MAJOR),$(LLVM_MAJOR))
$(error jitprof: $(JITPROF_LLVM_CONFIG) is LLVM $(LLVM_VERSION), but $(LLVMJIT_SO) links $(LLVMJIT_LIBLLVM): set LLVM_CONFIG to LLVM $(LLVMJIT_LLVM_MAJOR)'s llvm-config)
endif
endif
endif

LLVM_INCLUDEDIR := $(shell $(JITPROF_LLVM_CONFIG) --includedir)
LLVM_LIBDIR := $(shell $(JITPROF_LLVM_CONFIG) --libdir)

# LLVM's own C++ flags (-std, -fno-exceptions, its -D macros), less what
# PGXS decides: optimisation, debug info, warnings, and the include path
# given to every file below.
LLVM_CXXFLAGS_USED := $(filter-out -O% -g% -W% -I%,$(shell $(JITPROF_LLVM_CONFIG) --cxxflags))

# PostgreSQL 15 leaves PGDLLEXPORT empty on ELF platforms; with hidden
# visibility it must mark what PostgreSQL looks up by name (PG_MODULE_MAGIC,
# PG_FUNCTION_INFO_V1, _PG_init, _PG_jit_provider_init).
# The C files need LLVM's include path for jit/llvmjit.h (llvm-c types); only
# jitprof_llvm.so links LLVM.  jitprof's own headers are included as
# "layer/header.h" from src/, which comes first.  LLVM's headers are system
# headers (-isystem): LLVM 19's and 21's trip warnings of newer compilers
# (21's -Wredundant-move in Orc/Core.h under gcc 16).
PG_CPPFLAGS = -I$(srcdir)/src -isystem $(LLVM_INCLUDEDIR) '-DPGDLLEXPORT=__attribute__((visibility("default")))'
PG_CFLAGS = -fvisibility=hidden
# -fno-rtti: jitprof's C++ needs no RTTI (the compiler refuses dynamic_cast
# and typeid under it), so it links against an LLVM built with or without.
PG_CXXFLAGS = $(LLVM_CXXFLAGS_USED) -fno-rtti -fvisibility=hidden \
	-fvisibility-inlines-hidden -Wall -Wextra -Wno-unused-parameter
# jitprof_llvm.so finds its libLLVM through a RUNPATH to llvm-config's
# library directory, so that an LLVM outside the loader's default path works
# too.  LLVM_RPATH= (empty) links without one: the Debian packages do, as
# Debian's libLLVM is in the default path (where llvmjit.so finds it, and
# where dpkg-shlibdeps knows which package holds it).
LLVM_RPATH ?= $(LLVM_LIBDIR)
jitprof_comma := ,
LLVM_SHLIB_LINK = -L$(LLVM_LIBDIR) $(if $(LLVM_RPATH),-Wl$(jitprof_comma)-rpath$(jitprof_comma)$(LLVM_RPATH)) \
	$(shell $(JITPROF_LLVM_CONFIG) --libs) -lelf

# Bitcode for inlining is of no use for a JIT provider's own sources.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# MERGE ... WHEN NOT MATCHED BY SOURCE and JSON_TABLE are PostgreSQL 17's:
# their roles have a suite of their own, so that 15's names.out stays whole.
ifneq ($(filter-out 15 16,$(MAJORVERSION)),)
REGRESS += names_pg17
endif

installcheck: export PGOPTIONS += -c jit=on -c jit_above_cost=0 \
	-c jit_inline_above_cost=0 -c jit_optimize_above_cost=0 \
	-c max_parallel_workers_per_gather=0 -c jitprof.tiering=off
# sql/status.sql checks that jitprof_status reports the LLVM it was built
# against; the TAP tests call that LLVM's llvm-config and tools.
installcheck: export JITPROF_LLVM_VERSION := $(LLVM_VERSION)
installcheck: export JITPROF_LLVM_CONFIG := $(JITPROF_LLVM_CONFIG)

# The TAP tests configure their own clusters: keep the sessions' forced JIT
# out of them.
#
# test/lib holds the tests' modules.  PGXS's Makefile.global sets
# "PROVE_FLAGS =" after this file is read (15, 17 and 18 alike), so the -I
# is added here, after the include, and with override so that a
# PROVE_FLAGS given on the command line (--timer, -j2, -v) adds to it
# rather than dropping it.  prove runs in $(srcdir) (PGXS cds there), hence
# the relative path.  prove's own -I reaches the test scripts but not prove
# itself: prove runs under "perl -I test/lib" too, so that PROVE_FLAGS may
# name test/lib's harness (--harness JitprofHarness, doc/testing.md).
override PROVE_FLAGS += -I test/lib
PROVE := env -u PGOPTIONS $(PERL) -I test/lib $(PROVE)

# jitprof_llvm.so: linked by the C++ compiler, which adds libstdc++.
all: $(LLVM_MODULE)$(DLSUFFIX)

# The version script keeps libstdc++'s template instantiations unexported.
$(LLVM_MODULE)$(DLSUFFIX): $(LLVM_OBJS) $(srcdir)/src/llvm/jitprof_llvm.map
	$(CXX) $(CXXFLAGS) -shared -o $@ $(LLVM_OBJS) $(LDFLAGS) $(LDFLAGS_SL) \
		-Wl,--version-script=$(srcdir)/src/llvm/jitprof_llvm.map $(LLVM_SHLIB_LINK)

$(OBJS) $(LLVM_OBJS): $(wildcard $(srcdir)/src/*/*.h)

# Every include points down the layers (doc/architecture.md): checked before
# anything is compiled (order-only, so it rebuilds nothing), and, once the
# objects are built, against the symbols each object uses from another.
.PHONY: check-layers check-layer-symbols
$(OBJS) $(LLVM_OBJS): | check-layers
check-layers:
	$(PERL) $(srcdir)/tools/check_layers.pl $(srcdir)/src
all: check-layer-symbols
check-layer-symbols: $(OBJS) $(LLVM_OBJS)
	$(PERL) $(srcdir)/tools/check_layers.pl --symbols $(srcdir)/src $(OBJS) -- $(LLVM_OBJS)

# The names of the expression step opcodes, from the server's own headers
# (src/names/steps.c checks the count against EEOP_LAST).
src/names/steps.o: src/names/eeop_names.h
src/names/eeop_names.h: $(srcdir)/tools/eeop_names.sh $(includedir_server)/executor/execExpr.h
	$(SHELL) $(srcdir)/tools/eeop_names.sh $(includedir_server)/executor/execExpr.h > $@.tmp && mv $@.tmp $@

install: install-llvm-module
uninstall: uninstall-llvm-module
.PHONY: install-llvm-module uninstall-llvm-module

install-llvm-module: $(LLVM_MODULE)$(DLSUFFIX) installdirs
	$(INSTALL_SHLIB) $(LLVM_MODULE)$(DLSUFFIX) '$(DESTDIR)$(pkglibdir)/$(LLVM_MODULE)$(DLSUFFIX)'

uninstall-llvm-module:
	rm -f '$(DESTDIR)$(pkglibdir)/$(LLVM_MODULE)$(DLSUFFIX)'
