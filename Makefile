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
	src/store.o \
	src/sampler_signal.o \
	src/sampler_profile.o \
	src/sampler_hooks.o \
	src/hotspots.o \
	src/linker.o \
	src/code_arena.o

EXTENSION = jitprof
DATA = jitprof--1.0.sql
PGFILEDESC = "jitprof - JITLink-based JIT provider with per-query profiling"

# The regression tests need jitprof preloaded and selected as jit_provider,
# which an already running server (installcheck) cannot be assumed to have;
# tools/test.sh runs them against a throwaway cluster instead.
REGRESS = status names functions errors hotspots
REGRESS_OPTS = --temp-config=$(srcdir)/test/jitprof.conf
NO_INSTALLCHECK = 1

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
