//===- llvm_compat.h - The LLVM C++ API differences jitprof papers over -*- C++ -*-===//
//
// jitprof_llvm.so is built against LLVM 14, 19 and 21 (README, "Platforms";
// the Makefile refuses other majors).  This is its only LLVM compatibility
// header: the C++ files never test LLVM_VERSION_MAJOR, they use the names
// and helpers below, one definition per release.  Where a condition reads
// ">= 19", the change happened somewhere between 14 and 19; only the tested
// releases matter.  The C files use llvm-c only, whose calls did not change.
//
//===----------------------------------------------------------------------===//

#ifndef JITPROF_LLVM_COMPAT_H
#define JITPROF_LLVM_COMPAT_H

#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/JITLink/EHFrameSupport.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#if LLVM_VERSION_MAJOR >= 19
#include "llvm/ExecutionEngine/Orc/Shared/MemoryFlags.h"
#else
#include "llvm/ExecutionEngine/JITLink/MemoryFlags.h"
#endif

#include <memory>

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

// A link graph symbol's name as text.
inline llvm::StringRef symbolName(const llvm::jitlink::Symbol &Sym) {
  return Sym.getName();
}

// The link graph of an object file, for the session's target.
inline llvm::Expected<std::unique_ptr<llvm::jitlink::LinkGraph>>
createLinkGraph(llvm::orc::ExecutionSession &ES,
                llvm::MemoryBufferRef Object) {
  return llvm::jitlink::createLinkGraphFromObject(Object);
}

// LLVM's plugin that registers a linked object's .eh_frame with this
// process's unwinder.
inline std::unique_ptr<llvm::orc::ObjectLinkingLayer::Plugin>
createEHFramePlugin(llvm::orc::ExecutionSession &ES) {
  return std::make_unique<llvm::orc::EHFrameRegistrationPlugin>(
      ES, std::make_unique<llvm::jitlink::InProcessEHFrameRegistrar>());
}

} // end namespace jitprof

#endif // JITPROF_LLVM_COMPAT_H
