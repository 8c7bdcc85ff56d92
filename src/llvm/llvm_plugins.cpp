//===- llvm_plugins.cpp - LLVM's own perf and debugger plugins, for comparison -===//
//
// jitprof.llvm_plugins (off by default) attaches ORC's own plugins to
// jitprof's JITLink layer, besides jitprof's sinks: PerfSupportPlugin, which
// writes a jitdump file of its own, and DebugObjectManagerPlugin, which
// registers each object with gdb.  It is a developer setting, to measure
// jitprof's sinks against LLVM's on the same workload and LLVM
// (bench/llvm_plugins.sh, doc/perf.md); jitprof's names, step tables and
// deregistration are its own sinks' only.
//
// Both plugins call into the "executor", the process that runs the code,
// through wrapper functions that libLLVM's OrcTargetProcess library
// defines (llvm_orc_registerJITLoaderPerf*, llvm_orc_registerJITLoaderGDB*).
// llvmjit's LLJITs run the code in process (SelfExecutorProcessControl), so
// the functions' addresses are looked up in this process with dlsym.
//
// Nothing here may end the backend: every failure (a function not found,
// the jitdump file not created, an LLVM without the plugins) goes to the
// registry as a WARNING (llvm_plugin_failed), and the code is linked
// without that plugin.
//
// The perf plugin keeps process-wide state in libLLVM (one open jitdump
// file): its start function opens a new file each time it is called, and
// its end function fails unless a start came before.  llvmjit has two LLJIT
// instances, so two plugins would open two files and the second end would
// fail, where the plugin's destructor does not expect it.  So there is one
// plugin per process, made at the first layer and never destroyed, shared
// by both layers through SharedPlugin; jitprof calls the start function
// itself, where it can report a failure, and gives the plugin a start and an
// end that do nothing.
//
// Copyright (c) 2026, The jitprof Developers
// Distributed under the PostgreSQL License (the file LICENSE).
//
// IDENTIFICATION
//   src/llvm/llvm_plugins.cpp
//
//===----------------------------------------------------------------------===//

extern "C"
{
#include "llvm/linker.h"
}

#include "llvm/llvm_plugins.h"
#include "llvm/llvm_compat.h"

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutorProcessControl.h"
#include "llvm/ExecutionEngine/Orc/Shared/WrapperFunctionUtils.h"

#include <dlfcn.h>

using namespace llvm;
using namespace llvm::orc;

namespace {

using WrapperFn = shared::CWrapperFunctionResult (*)(const char *, size_t);

// The executor function Name, in this process.
Expected<ExecutorAddr> executorFunction(const char *Name) {
  void *F = dlsym(RTLD_DEFAULT, Name);
  if (!F)
    return createStringError(inconvertibleErrorCode(),
                             "%s was not found in this process", Name);
  return ExecutorAddr::fromPtr(F);
}

// The perf plugin's start and end: the real start is called once, by
// jitprof (perfPlugin()), and the file stays open until the process exits.
shared::CWrapperFunctionResult doNothing(const char *ArgData, size_t ArgSize) {
  return shared::WrapperFunction<shared::SPSError()>::handle(
             ArgData, ArgSize, []() -> Error { return Error::success(); })
      .release();
}

// Calls the executor function At, of signature Error(), in process.
Error callStart(ExecutorProcessControl &EPC, ExecutorAddr At) {
  Error Result = Error::success();
  if (Error E = EPC.callSPSWrapper<shared::SPSError()>(At, Result)) {
    consumeError(std::move(Result));
    return E;
  }
  return Result;
}

// The process's one perf plugin, made at the first call; null after a
// failure, which was reported then.
ObjectLinkingLayer::Plugin *perfPlugin(ExecutionSession &ES) {
  static bool Tried = false;
  static ObjectLinkingLayer::Plugin *Plugin = nullptr;
  if (Tried)
    return Plugin;
  Tried = true;

  auto Fail = [](Error E) {
    std::string Why = toString(std::move(E));
    jp_core->llvm_plugin_failed(JP_LLVM_PLUGINS_PERF, Why.c_str());
    return nullptr;
  };
  if (Error E = jitprof::orcPluginAvailable("PerfSupportPlugin"))
    return Fail(std::move(E));
  auto Start = executorFunction("llvm_orc_registerJITLoaderPerfStart");
  if (!Start)
    return Fail(Start.takeError());
  auto Impl = executorFunction("llvm_orc_registerJITLoaderPerfImpl");
  if (!Impl)
    return Fail(Impl.takeError());
  ExecutorProcessControl &EPC = ES.getExecutorProcessControl();
  ExecutorAddr None = ExecutorAddr::fromPtr(&doNothing);
  // Debug information records only when there is DWARF to read them from
  // (jitprof.steps), as jitprof's own jitdump writes them; unwinding
  // records always, as jitprof.jitdump_unwinding does by default.
  auto P = jitprof::createPerfSupportPlugin(EPC, None, None, *Impl,
                                            *jp_core->steps, true);
  if (!P)
    return Fail(P.takeError());
  if (Error E = callStart(EPC, *Start))
    return Fail(std::move(E));
  Plugin = P->release();
  return Plugin;
}

// One layer's handle on the process's perf plugin.  The plugin works in
// link-graph passes only; its records go out in an allocation action.
class SharedPlugin : public jitprof::Plugin {
public:
  explicit SharedPlugin(ObjectLinkingLayer::Plugin &P) : P(P) {}

  void modifyPassConfig(MaterializationResponsibility &MR,
                        jitlink::LinkGraph &G,
                        jitlink::PassConfiguration &Config) override {
    P.modifyPassConfig(MR, G, Config);
  }
  Error notifyFailed(MaterializationResponsibility &MR) override {
    return Error::success();
  }
  Error removingResources(ResourceKey K) override { return Error::success(); }
  void transferringResources(ResourceKey DstKey, ResourceKey SrcKey) override {
  }

private:
  ObjectLinkingLayer::Plugin &P;
};

} // end anonymous namespace

void jitprof::addLLVMPlugins(ObjectLinkingLayer &Layer, ExecutionSession &ES,
                             InputObjectFn InputOf) {
  int Wanted = *jp_core->llvm_plugins;

  if (Wanted & JP_LLVM_PLUGINS_PERF)
    if (ObjectLinkingLayer::Plugin *P = perfPlugin(ES))
      Layer.addPlugin(std::make_unique<SharedPlugin>(*P));

  if (Wanted & JP_LLVM_PLUGINS_DEBUGGER) {
    Error Missing = jitprof::orcPluginAvailable("DebugObjectManagerPlugin");
    auto Register =
        Missing ? Expected<ExecutorAddr>(std::move(Missing))
                : executorFunction("llvm_orc_registerJITLoaderGDBWrapper");
    auto P = Register
                 ? jitprof::createDebuggerPlugin(ES, *Register,
                                                 std::move(InputOf))
                 : Expected<std::unique_ptr<ObjectLinkingLayer::Plugin>>(
                       Register.takeError());
    if (P)
      Layer.addPlugin(std::move(*P));
    else {
      std::string Why = toString(P.takeError());
      jp_core->llvm_plugin_failed(JP_LLVM_PLUGINS_DEBUGGER, Why.c_str());
    }
  }
}
