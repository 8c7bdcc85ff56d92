//===- llvm_plugins.cpp - LLVM's own perf and debugger plugins, for comparison -===//
//
// jitprof.llvm_plugins, a developer setting: attach ORC's own
// PerfSupportPlugin and DebugObjectManagerPlugin to jitprof's JITLink layer,
// beside jitprof's sinks, to measure one against the other.  Their executor
// functions are looked up in this process with dlsym (llvmjit's LLJITs run
// code in process).
//
// Contract: nothing here may end the backend: every failure goes to the
// registry as a WARNING (llvm_plugin_failed) and the code is linked without
// that plugin.  The perf plugin is one per process, never destroyed, shared
// by both layers (SharedPlugin), and jitprof calls its start function
// itself.  Why: doc/perf.md, "LLVM's own plugins".
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
