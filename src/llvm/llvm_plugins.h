//===- llvm_plugins.h - LLVM's own perf and debugger plugins -----*- C++ -*-===//
//
// jitprof.llvm_plugins: attach ORC's PerfSupportPlugin and
// DebugObjectManagerPlugin to a JITLink layer, as a comparison aid
// (llvm_plugins.cpp).  C++ only; included by linker.cpp.
//
// Copyright (c) 2026, The jitprof Developers
// Distributed under the PostgreSQL License (the file LICENSE).
//
// IDENTIFICATION
//   src/llvm/llvm_plugins.h
//
//===----------------------------------------------------------------------===//

#ifndef JITPROF_LLVM_PLUGINS_H
#define JITPROF_LLVM_PLUGINS_H

#include "llvm/llvm_compat.h"

namespace jitprof {

// Adds the plugins jitprof.llvm_plugins names to Layer, of session ES;
// InputOf gives the object file being linked under a responsibility.  A
// plugin that cannot be made is reported (a WARNING) and left out.
void addLLVMPlugins(llvm::orc::ObjectLinkingLayer &Layer,
                    llvm::orc::ExecutionSession &ES, InputObjectFn InputOf);

} // end namespace jitprof

#endif // JITPROF_LLVM_PLUGINS_H
