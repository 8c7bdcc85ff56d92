//===- llvm_compat.h - The LLVM C++ API differences jitprof papers over -*- C++ -*-===//
//
// jitprof_llvm.so is built against LLVM 14, 19 and 21 (README, "Platforms";
// the Makefile refuses other majors).  This is its only LLVM compatibility
// header: the C++ files never test LLVM_VERSION_MAJOR, they use the names
// and helpers below, one definition per release.  Where a condition reads
// ">= 19", the change happened somewhere between 14 and 19; only the tested
// releases matter.  The C files use llvm-c only, whose calls did not change.
//
// Copyright (c) 2026, The jitprof Developers
// Distributed under the PostgreSQL License (the file LICENSE).
//
// IDENTIFICATION
//   src/llvm/llvm_compat.h
//
//===----------------------------------------------------------------------===//

#ifndef JITPROF_LLVM_COMPAT_H
#define JITPROF_LLVM_COMPAT_H

#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/JITLink/EHFrameSupport.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/Orc/Shared/AllocationActions.h"
#if LLVM_VERSION_MAJOR >= 21
#include "llvm/ExecutionEngine/Orc/EHFrameRegistrationPlugin.h"
#endif
#if LLVM_VERSION_MAJOR >= 19
#include "llvm/ExecutionEngine/Orc/DebugObjectManagerPlugin.h"
#include "llvm/ExecutionEngine/Orc/Debugging/PerfSupportPlugin.h"
#include "llvm/ExecutionEngine/Orc/EPCDebugObjectRegistrar.h"
#include "llvm/ExecutionEngine/Orc/Shared/MemoryFlags.h"
#else
#include "llvm/ExecutionEngine/JITLink/MemoryFlags.h"
#endif

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace jitprof {

// A segment's or section's protections: jitlink::MemProt moved to orc.
#if LLVM_VERSION_MAJOR >= 19
using MemProt = llvm::orc::MemProt;
#else
using MemProt = llvm::jitlink::MemProt;
#endif

// An ObjectLinkingLayer plugin whose resource notifications have the same
// signature on every release: LLVM 19 passes the JITDylib first, which
// jitprof has no use for.  Plugins implement removingResources() and
// transferringResources() instead of LLVM's two.
class Plugin : public llvm::orc::ObjectLinkingLayer::Plugin {
public:
  virtual llvm::Error removingResources(llvm::orc::ResourceKey K) = 0;
  virtual void transferringResources(llvm::orc::ResourceKey DstKey,
                                     llvm::orc::ResourceKey SrcKey) = 0;

#if LLVM_VERSION_MAJOR >= 19
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib &JD,
                                      llvm::orc::ResourceKey K) final {
    return removingResources(K);
  }
  void notifyTransferringResources(llvm::orc::JITDylib &JD,
                                   llvm::orc::ResourceKey DstKey,
                                   llvm::orc::ResourceKey SrcKey) final {
    transferringResources(DstKey, SrcKey);
  }
#else
  llvm::Error notifyRemovingResources(llvm::orc::ResourceKey K) final {
    return removingResources(K);
  }
  void notifyTransferringResources(llvm::orc::ResourceKey DstKey,
                                   llvm::orc::ResourceKey SrcKey) final {
    transferringResources(DstKey, SrcKey);
  }
#endif
};

// A link graph symbol's name as text.  LLVM 21: names are pooled strings
// (SymbolStringPtr), whose text is *Name.
#if LLVM_VERSION_MAJOR >= 21
inline llvm::StringRef symbolName(const llvm::jitlink::Symbol &Sym) {
  return *Sym.getName();
}
#else
inline llvm::StringRef symbolName(const llvm::jitlink::Symbol &Sym) {
  return Sym.getName();
}
#endif

// The link graph of an object file, for the session's target.  LLVM 21:
// the graph interns its symbol names in the session's string pool.
#if LLVM_VERSION_MAJOR >= 21
inline llvm::Expected<std::unique_ptr<llvm::jitlink::LinkGraph>>
createLinkGraph(llvm::orc::ExecutionSession &ES,
                llvm::MemoryBufferRef Object) {
  return llvm::jitlink::createLinkGraphFromObject(Object,
                                                  ES.getSymbolStringPool());
}
#else
inline llvm::Expected<std::unique_ptr<llvm::jitlink::LinkGraph>>
createLinkGraph(llvm::orc::ExecutionSession &ES,
                llvm::MemoryBufferRef Object) {
  return llvm::jitlink::createLinkGraphFromObject(Object);
}
#endif

// LLVM's plugin that registers a linked object's .eh_frame with this
// process's unwinder.  LLVM 21 has no registrar object: the plugin adds
// allocation actions that call the registration functions it looks up in
// the session's bootstrap symbols, and that look-up can fail.
#if LLVM_VERSION_MAJOR >= 21
inline llvm::Expected<std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>>
createEHFramePlugin(llvm::orc::ExecutionSession &ES) {
  auto P = llvm::orc::EHFrameRegistrationPlugin::Create(ES);
  if (!P)
    return P.takeError();
  return std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>(
      std::move(*P));
}
#else
inline llvm::Expected<std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>>
createEHFramePlugin(llvm::orc::ExecutionSession &ES) {
  return std::make_unique<llvm::orc::EHFrameRegistrationPlugin>(
      ES, std::make_unique<llvm::jitlink::InProcessEHFrameRegistrar>());
}
#endif

// A graph's finalize actions, run when its memory is finalized; on success
// the deallocation actions to run when it is freed.  LLVM 21 reports both
// through callbacks, so that actions could one day run elsewhere; in process
// its functions call back before they return.  These adapters keep the
// synchronous form, and say so with an error should a callback ever come
// late (its result then goes to a heap cell, never to a dead stack frame).
#if LLVM_VERSION_MAJOR >= 21
inline llvm::Expected<std::vector<llvm::orc::shared::WrapperFunctionCall>>
runFinalizeActions(llvm::orc::shared::AllocActions &AAs) {
  using Result =
      llvm::Expected<std::vector<llvm::orc::shared::WrapperFunctionCall>>;
  auto Cell = std::make_shared<std::optional<Result>>();
  llvm::orc::shared::runFinalizeActions(
      AAs, [Cell](Result R) { Cell->emplace(std::move(R)); });
  if (!Cell->has_value())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "finalize actions did not complete");
  return std::move(**Cell);
}

inline llvm::Error runDeallocActions(
    llvm::ArrayRef<llvm::orc::shared::WrapperFunctionCall> DAs) {
  auto Cell = std::make_shared<std::optional<llvm::Error>>();
  llvm::orc::shared::runDeallocActions(
      DAs, [Cell](llvm::Error E) { Cell->emplace(std::move(E)); });
  if (!Cell->has_value())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "deallocation actions did not complete");
  return std::move(**Cell);
}
#else
inline llvm::Expected<std::vector<llvm::orc::shared::WrapperFunctionCall>>
runFinalizeActions(llvm::orc::shared::AllocActions &AAs) {
  return llvm::orc::shared::runFinalizeActions(AAs);
}

inline llvm::Error runDeallocActions(
    llvm::ArrayRef<llvm::orc::shared::WrapperFunctionCall> DAs) {
  return llvm::orc::shared::runDeallocActions(DAs);
}
#endif

// LLVM's own ORC plugins for perf and debuggers (jitprof.llvm_plugins, a
// comparison aid: llvm_plugins.cpp).  ORC's PerfSupportPlugin and
// DebugObjectManagerPlugin as LLVM 19 and later ship them; earlier releases
// have no perf plugin, and LLVM 14's debugger plugin has another interface,
// so there these report an error and the code is linked without them.
//
// The perf plugin calls its start and end functions from its constructor
// and destructor (through the executor, in process here: llvmjit's LLJITs
// use SelfExecutorProcessControl), and writes each object's records with an
// allocation action that calls Impl.
using InputObjectFn =
    std::function<llvm::MemoryBufferRef(llvm::orc::MaterializationResponsibility &)>;

#if LLVM_VERSION_MAJOR >= 19
// Whether this LLVM has the plugin Which: success, or why not.
inline llvm::Error orcPluginAvailable(const char *Which) {
  return llvm::Error::success();
}

inline llvm::Expected<std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>>
createPerfSupportPlugin(llvm::orc::ExecutorProcessControl &EPC,
                        llvm::orc::ExecutorAddr Start,
                        llvm::orc::ExecutorAddr End,
                        llvm::orc::ExecutorAddr Impl, bool DebugInfo,
                        bool UnwindInfo) {
  return std::make_unique<llvm::orc::PerfSupportPlugin>(
      EPC, Start, End, Impl, DebugInfo, UnwindInfo);
}

// The debugger plugin copies each object from the buffer ObjectLinkingLayer
// hands it when linking starts; jitprof hands JITLink a link graph it has
// built already (linker.cpp), whose buffer then arrives empty, so this
// adapter supplies it (InputOf) and forwards everything else.
class DebuggerPluginAdapter : public llvm::orc::ObjectLinkingLayer::Plugin {
public:
  DebuggerPluginAdapter(
      std::unique_ptr<llvm::orc::DebugObjectManagerPlugin> P,
      InputObjectFn InputOf)
      : P(std::move(P)), InputOf(std::move(InputOf)) {}

  void notifyMaterializing(llvm::orc::MaterializationResponsibility &MR,
                           llvm::jitlink::LinkGraph &G,
                           llvm::jitlink::JITLinkContext &Ctx,
                           llvm::MemoryBufferRef InputObject) override {
    if (InputObject.getBufferSize() == 0)
      InputObject = InputOf(MR);
    if (InputObject.getBufferSize() != 0)
      P->notifyMaterializing(MR, G, Ctx, InputObject);
  }
  void modifyPassConfig(llvm::orc::MaterializationResponsibility &MR,
                        llvm::jitlink::LinkGraph &G,
                        llvm::jitlink::PassConfiguration &Config) override {
    P->modifyPassConfig(MR, G, Config);
  }
  llvm::Error
  notifyEmitted(llvm::orc::MaterializationResponsibility &MR) override {
    return P->notifyEmitted(MR);
  }
  llvm::Error
  notifyFailed(llvm::orc::MaterializationResponsibility &MR) override {
    return P->notifyFailed(MR);
  }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib &JD,
                                      llvm::orc::ResourceKey K) override {
    return P->notifyRemovingResources(JD, K);
  }
  void notifyTransferringResources(llvm::orc::JITDylib &JD,
                                   llvm::orc::ResourceKey DstKey,
                                   llvm::orc::ResourceKey SrcKey) override {
    P->notifyTransferringResources(JD, DstKey, SrcKey);
  }

private:
  std::unique_ptr<llvm::orc::DebugObjectManagerPlugin> P;
  InputObjectFn InputOf;
};

// Registers every object, with or without DWARF (llvmjit's have none unless
// jitprof.steps is on), through Register, the executor's
// llvm_orc_registerJITLoaderGDBWrapper.
inline llvm::Expected<std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>>
createDebuggerPlugin(llvm::orc::ExecutionSession &ES,
                     llvm::orc::ExecutorAddr Register,
                     InputObjectFn InputOf) {
  auto P = std::make_unique<llvm::orc::DebugObjectManagerPlugin>(
      ES, std::make_unique<llvm::orc::EPCDebugObjectRegistrar>(ES, Register),
      /* RequireDebugSections */ false, /* AutoRegisterCode */ true);
  return std::make_unique<DebuggerPluginAdapter>(std::move(P),
                                                 std::move(InputOf));
}
#else
inline llvm::Error orcPluginAvailable(const char *Which) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "LLVM %s has no %s usable here: it needs "
                                 "LLVM 19 or later",
                                 static_cast<const char *>(LLVM_VERSION_STRING),
                                 Which);
}

inline llvm::Expected<std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>>
createPerfSupportPlugin(llvm::orc::ExecutorProcessControl &EPC,
                        llvm::orc::ExecutorAddr Start,
                        llvm::orc::ExecutorAddr End,
                        llvm::orc::ExecutorAddr Impl, bool DebugInfo,
                        bool UnwindInfo) {
  return orcPluginAvailable("PerfSupportPlugin");
}

inline llvm::Expected<std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>>
createDebuggerPlugin(llvm::orc::ExecutionSession &ES,
                     llvm::orc::ExecutorAddr Register,
                     InputObjectFn InputOf) {
  return orcPluginAvailable("DebugObjectManagerPlugin");
}
#endif

} // end namespace jitprof

#endif // JITPROF_LLVM_COMPAT_H
