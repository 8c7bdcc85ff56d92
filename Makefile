# Makefile for jitprof (PGXS)
#
# jitprof.so is both a preloadable library and a JIT provider
# (jit_provider = 'jitprof'); it wraps PostgreSQL's llvmjit.so.

MODULE_big = jitprof
OBJS = \
	src/jitprof.o \
	src/provider.o \
	src/naming.o \
	src/registry.o \
	src/status.o \
	src/sink_perf_map.o \
	src/sink_jitdump.o \
	src/sink_gdb.o \
	src/sink_io.o \
	src/range_set.o \
	src/store.o \
	src/sampler_signal.o \
	src/sampler_profile.o \
	src/sampler_hooks.o \
	src/sampler_nodes.o \
	src/hotspots.o \
	src/plan_nodes.o \
	src/linker.o \
	src/code_arena.o

EXTENSION = jitprof
DATA = jitprof--1.0.sql jitprof--1.1.sql jitprof--1.0--1.1.sql
PGFILEDESC = "jitprof - JITLink-based JIT provider with per-query profiling"

# "make installcheck" runs the pg_regress suites against a running server
# that has jitprof in shared_preload_libraries and as its jit_provider (the
# settings of test/jitprof.conf); each session forces JIT through PGOPTIONS.
# It then runs the TAP tests in test/t/, which start clusters of their own
# (run it as the server's OS user, not as root).  tools/test.sh does both
# against a throwaway cluster.
REGRESS = status names functions errors hotspots versions plan_nodes
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl
PROVE_FLAGS = -I $(srcdir)/test/lib

PG_CONFIG ?= pg_config
LLVM_CONFIG ?= llvm-config-14

LLVM_INCLUDEDIR := $(shell $(LLVM_CONFIG) --includedir)
LLVM_LIBDIR := $(shell $(LLVM_CONFIG) --libdir)

PG_CPPFLAGS = -I$(LLVM_INCLUDEDIR)
PG_CXXFLAGS = -std=c++14 -Wall -Wextra -Wno-unused-parameter -fno-exceptions
SHLIB_LINK = -L$(LLVM_LIBDIR) -Wl,-rpath,$(LLVM_LIBDIR) -lLLVM-14 -lstdc++ -lelf

# Bitcode for inlining is of no use for a JIT provider's own sources.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

installcheck: export PGOPTIONS += -c jit=on -c jit_above_cost=0 \
	-c jit_inline_above_cost=0 -c jit_optimize_above_cost=0 \
	-c max_parallel_workers_per_gather=0

# The TAP tests configure their own clusters: keep the sessions' forced JIT
# out of them.
PROVE := env -u PGOPTIONS $(PROVE)
