//===- linker.cpp - Link llvmjit's code with JITLink, report what is linked -===//
//
// The replacements of llvmjit.so's object-layer and listener calls (bound
// to them through its GOT, got_patch.c; libLLVM's originals are kept in the
// Original* pointers), and the object layer they make: JITLink into the
// code arena with jitprof's plugin, RuntimeDyld for an object JITLink cannot
// take, or RuntimeDyld throughout with jitprof.linker = rtdyld.  Either way
// each emitted object becomes the same registry records (functions, step
// tables, unwinding information), and the registry hears of its removal.
//
// Contract: nothing here throws across the C boundary: LLVM errors travel
// as llvm::Error back into LLJIT, which llvmjit turns into an ERROR.
// Nothing is exported.  The layer, the fallback and unwinding:
// doc/linking.md; what is rebound and why: doc/provider.md.
//
// Copyright (c) 2026, The jitprof Developers
// Distributed under the PostgreSQL License (the file LICENSE).
//
// IDENTIFICATION
//   src/llvm/linker.cpp
//
//===----------------------------------------------------------------------===//

extern "C"
{
#include "llvm/linker.h"
}

#include "llvm/code_arena.h"
#include "llvm/eh_frame.h"
#include "llvm/llvm_compat.h"
#include "llvm/llvm_plugins.h"

#include "llvm-c/Error.h"
#include "llvm-c/OrcEE.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/JITLink/EHFrameSupport.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/RuntimeDyld.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Object/SymbolSize.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"

#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

using namespace llvm;
using namespace llvm::orc;

namespace {

JitprofLinkerKind LinkerInUse = JP_LINKER_NONE;

// The C API's object layer handle wraps a plain ObjectLayer pointer, and the
// execution session handle an ExecutionSession pointer.
ExecutionSession &unwrapSession(LLVMOrcExecutionSessionRef ES) {
  return *reinterpret_cast<ExecutionSession *>(ES);
}

LLVMOrcObjectLayerRef wrapLayer(ObjectLayer *L) {
  return reinterpret_cast<LLVMOrcObjectLayerRef>(L);
}

using CreateRTDyldLayerFn =
    LLVMOrcObjectLayerRef (*)(LLVMOrcExecutionSessionRef);
using RegisterListenerFn = void (*)(LLVMOrcObjectLayerRef,
                                    LLVMJITEventListenerRef);
using SetReporterFn = void (*)(LLVMOrcExecutionSessionRef,
                               LLVMOrcErrorReporterFunction, void *);

// libLLVM's functions that llvmjit.so's calls were bound to, as jitprof.so
// found them in llvmjit.so (see jp_linker_interposers).
void *OriginalCreateLayer = nullptr;
void *OriginalRegisterListener = nullptr;
void *OriginalSetReporter = nullptr;
void *OriginalCreatePerfListener = nullptr;
void *OriginalCreateGDBListener = nullptr;

CreateRTDyldLayerFn originalCreateLayer() {
  return reinterpret_cast<CreateRTDyldLayerFn>(OriginalCreateLayer);
}

RegisterListenerFn originalRegisterListener() {
  return reinterpret_cast<RegisterListenerFn>(OriginalRegisterListener);
}

// A function collected from a link graph, waiting for the object's emission.
struct PendingFunction {
  std::string Name;
  uint64_t Address;
  uint64_t Size;
  // unwinding information (issue 12), see JitprofLinkedFunction
  std::vector<uint8_t> EHFrame;
  uint32_t PcField = 0;
  uint64_t RoomAfter = 0;
};

// Give each function its rewritten CIE + FDE from the object's .eh_frame
// (eh_frame.cpp), and the function that ends last in the object's code the
// free bytes after it up to the end of its page, if no other code of the
// object lies after it (CodeEnd: the end of the object's code there).
// Nothing is given when the index is empty.
void addUnwindInfo(std::vector<PendingFunction> &Fns,
                   const jitprof::EHFrameIndex &EH, uint64_t CodeEnd,
                   bool OthersAfterLast) {
  if (EH.empty() || Fns.empty())
    return;
  PendingFunction *Last = nullptr;
  for (auto &F : Fns) {
    if (!EH.entryFor(F.Address, F.Size, F.EHFrame, F.PcField))
      F.EHFrame.clear();
    if (!Last || F.Address > Last->Address)
      Last = &F;
  }
  uint64_t Page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t End = Last->Address + Last->Size;
  if (!OthersAfterLast && CodeEnd >= End && Page > 0)
    Last->RoomAfter = alignTo(CodeEnd, Page) - End;
}

// Per function name, its step table (see JitprofStepRange).
using StepTables = StringMap<std::vector<JitprofStepRange>>;

// The step tables of an object with debug information from jitprof.steps
// (llvm_steps.c): its DWARF line table, whose column is the step number
// plus one, cut per function symbol.  The addresses of a relocatable
// object's rows and symbols are section offsets (DWARFContext applies the
// .debug_line relocations); those of RuntimeDyld's debug object are final
// addresses.  Either way a row belongs to the function whose range holds
// it, in the same section.  LLVM 14's JITLink drops non-allocated sections
// such as .debug_line from its link graph, so this reads the object itself.
// Errors only leave tables out.
int32_t stepOfColumn(uint32_t Column) {
  if (Column == 0)
    return JP_STEP_NONE;
  if (Column <= JP_COLUMN_DEFORM)
    return int32_t(Column) - 1;
  return JP_STEP_ATTRIBUTE(int32_t(Column - JP_COLUMN_DEFORM - 1));
}

StepTables stepTables(const object::ObjectFile &Obj) {
  StepTables Tables;
  bool HasLines = false;
  for (const auto &S : Obj.sections()) {
    auto Name = S.getName();
    if (Name && (*Name == ".debug_line" || *Name == ".debug_line.dwo"))
      HasLines = true;
    else if (!Name)
      consumeError(Name.takeError());
  }
  if (!HasLines)
    return Tables;

  auto Ignore = [](Error E) { consumeError(std::move(E)); };
  std::unique_ptr<DWARFContext> Ctx = DWARFContext::create(
      Obj, DWARFContext::ProcessDebugRelocations::Process, nullptr, "",
      Ignore, Ignore);
  struct LineRow {
    uint64_t Section;
    uint64_t Address;
    uint32_t Line;
    int32_t Step;
  };
  std::vector<LineRow> Rows;
  for (const auto &CU : Ctx->compile_units()) {
    const DWARFDebugLine::LineTable *LT =
        Ctx->getLineTableForUnit(CU.get());
    if (!LT)
      continue;
    for (const auto &R : LT->Rows)
      if (!R.EndSequence)
        Rows.push_back({R.Address.SectionIndex, R.Address.Address, R.Line,
                        stepOfColumn(R.Column)});
  }
  if (Rows.empty())
    return Tables;
  std::stable_sort(Rows.begin(), Rows.end(),
                   [](const LineRow &A, const LineRow &B) {
                     return A.Address < B.Address;
                   });

  for (const auto &P : object::computeSymbolSizes(Obj)) {
    const object::SymbolRef &Sym = P.first;
    auto Type = Sym.getType();
    auto Name = Sym.getName();
    auto Addr = Sym.getAddress();
    auto Sec = Sym.getSection();
    if (!Type || !Name || !Addr || !Sec) {
      consumeError(Type.takeError());
      consumeError(Name.takeError());
      consumeError(Addr.takeError());
      consumeError(Sec.takeError());
      continue;
    }
    if (*Type != object::SymbolRef::ST_Function || Name->empty() ||
        *Sec == Obj.section_end())
      continue;
    uint64_t SecIndex = (*Sec)->getIndex();
    uint64_t Start = *Addr, End = *Addr + P.second;
    std::vector<JitprofStepRange> T;
    auto I = std::lower_bound(Rows.begin(), Rows.end(), Start,
                              [](const LineRow &R, uint64_t A) {
                                return R.Address < A;
                              });
    for (; I != Rows.end() && I->Address < End; ++I) {
      if (I->Section != object::SectionedAddress::UndefSection &&
          I->Section != SecIndex)
        continue;
      if (!T.empty() && T.back().step == I->Step && T.back().line == I->Line)
        continue;
      if (T.size() >= JP_MAX_STEP_RANGES)
        break;
      uint32_t Off = uint32_t(I->Address - Start);
      if (!T.empty() && T.back().offset == Off)
        T.back() = {Off, I->Line, I->Step};
      else
        T.push_back({Off, I->Line, I->Step});
    }
    if (!T.empty())
      Tables[*Name] = std::move(T);
  }
  return Tables;
}

StepTables stepTables(const MemoryBuffer &O) {
  auto Obj = object::ObjectFile::createObjectFile(O.getMemBufferRef());
  if (!Obj) {
    consumeError(Obj.takeError());
    return StepTables();
  }
  return stepTables(**Obj);
}

void reportObject(uint64_t Key, const std::vector<PendingFunction> &Fns,
                  const StepTables *Tables = nullptr) {
  std::vector<JitprofLinkedFunction> C;
  C.reserve(Fns.size());
  for (const auto &F : Fns) {
    JitprofLinkedFunction L = {F.Name.c_str(), F.Address, F.Size, nullptr, 0,
                               nullptr, 0, 0, F.RoomAfter};
    if (!F.EHFrame.empty()) {
      L.eh_frame = F.EHFrame.data();
      L.eh_frame_size = uint32_t(F.EHFrame.size());
      L.eh_frame_pc_field = F.PcField;
    }
    if (Tables) {
      auto I = Tables->find(F.Name);
      if (I != Tables->end()) {
        L.steps = I->second.data();
        L.nsteps = int(I->second.size());
      }
    }
    C.push_back(L);
  }
  jp_core->object_linked(Key, C.data(), static_cast<int>(C.size()));
}

// Step tables read from objects on their way to JITLink, until the
// object's emission (JitprofPlugin) or failure.
std::mutex StepTablesLock;
DenseMap<MaterializationResponsibility *, StepTables> PendingStepTables;

void keepStepTables(MaterializationResponsibility *MR, const MemoryBuffer &O) {
  if (!*jp_core->steps)
    return;
  StepTables T = stepTables(O);
  if (T.empty())
    return;
  std::lock_guard<std::mutex> Lock(StepTablesLock);
  PendingStepTables[MR] = std::move(T);
}

StepTables takeStepTables(MaterializationResponsibility *MR) {
  std::lock_guard<std::mutex> Lock(StepTablesLock);
  auto I = PendingStepTables.find(MR);
  if (I == PendingStepTables.end())
    return StepTables();
  StepTables T = std::move(I->second);
  PendingStepTables.erase(I);
  return T;
}

class JitprofPlugin : public jitprof::Plugin {
public:
  void modifyPassConfig(MaterializationResponsibility &MR,
                        jitlink::LinkGraph &G,
                        jitlink::PassConfiguration &Config) override {
    // llvmjit's deform_* functions have internal linkage; when nothing
    // references them by relocation JITLink prunes their symbols before the
    // late passes run.  They are real code, so keep every named function.
    Config.PrePrunePasses.push_back([](jitlink::LinkGraph &Graph) -> Error {
      for (auto *Sym : Graph.defined_symbols())
        if (Sym->hasName() && Sym->isCallable())
          Sym->setLive(true);
      return Error::success();
    });

    bool Unwind = jp_core->unwind_wanted();
    Config.PostFixupPasses.push_back(
        [this, &MR, Unwind](jitlink::LinkGraph &Graph) -> Error {
          collect(MR, Graph, Unwind);
          return Error::success();
        });
  }

  Error notifyEmitted(MaterializationResponsibility &MR) override {
    std::vector<PendingFunction> Fns;
    {
      std::lock_guard<std::mutex> Lock(M);
      auto I = Pending.find(&MR);
      if (I == Pending.end())
        return Error::success();
      Fns = std::move(I->second);
      Pending.erase(I);
    }
    StepTables Tables = takeStepTables(&MR);
    return MR.withResourceKeyDo(
        [&](ResourceKey K) { reportObject(uint64_t(K), Fns, &Tables); });
  }

  Error notifyFailed(MaterializationResponsibility &MR) override {
    {
      std::lock_guard<std::mutex> Lock(M);
      Pending.erase(&MR);
    }
    (void) takeStepTables(&MR);
    jp_core->link_failed();
    return Error::success();
  }

  Error removingResources(ResourceKey K) override {
    jp_core->object_freed(uint64_t(K));
    return Error::success();
  }

  // llvmjit never merges resource trackers, so this does not happen; if it
  // did, the code would be reported freed early rather than never.
  void transferringResources(ResourceKey DstKey,
                             ResourceKey SrcKey) override {
    jp_core->object_freed(uint64_t(SrcKey));
  }

private:
  void collect(MaterializationResponsibility &MR, jitlink::LinkGraph &G,
               bool Unwind) {
    std::vector<PendingFunction> Fns;
    const jitlink::Block *LastBlock = nullptr;
    uint64_t LastAddress = 0;
    for (auto *Sym : G.defined_symbols()) {
      if (!Sym->hasName() || !Sym->isCallable())
        continue;
      uint64_t Size = Sym->getSize();
      if (Size == 0)
        Size = Sym->getBlock().getSize() - Sym->getOffset();
      PendingFunction F;
      F.Name = jitprof::symbolName(*Sym).str();
      F.Address = Sym->getAddress().getValue();
      F.Size = Size;
      if (!LastBlock || F.Address > LastAddress) {
        LastBlock = &Sym->getBlock();
        LastAddress = F.Address;
      }
      Fns.push_back(std::move(F));
    }
    if (Unwind && LastBlock)
      unwindInfo(G, Fns, *LastBlock);
    std::lock_guard<std::mutex> Lock(M);
    auto &Dst = Pending[&MR];
    for (auto &F : Fns)
      Dst.push_back(std::move(F));
  }

  // The .eh_frame blocks after fixups (JITLink splits the section into one
  // block per record); the code arena gives each segment whole pages, so
  // the bytes after the object's last code block up to its page's end are
  // free.
  void unwindInfo(jitlink::LinkGraph &G, std::vector<PendingFunction> &Fns,
                  const jitlink::Block &LastBlock) {
    jitprof::EHFrameIndex EH;
    if (auto *Sec = G.findSectionByName(".eh_frame"))
      for (auto *B : Sec->blocks())
        if (!B->isZeroFill()) {
          auto C = B->getContent();
          EH.add(B->getAddress().getValue(),
                 reinterpret_cast<const uint8_t *>(C.data()), C.size());
        }
    uint64_t LastStart = LastBlock.getAddress().getValue();
    bool OthersAfter = false;
    for (auto &Sec : G.sections()) {
      if ((Sec.getMemProt() & jitprof::MemProt::Exec) == jitprof::MemProt::None)
        continue;
      for (auto *B : Sec.blocks())
        if (B != &LastBlock && B->getAddress().getValue() >= LastStart)
          OthersAfter = true;
    }
    addUnwindInfo(Fns, EH, LastStart + LastBlock.getSize(), OthersAfter);
  }

  std::mutex M;
  DenseMap<MaterializationResponsibility *, std::vector<PendingFunction>>
      Pending;
};

// Feeds the registry from RuntimeDyld, so that every sink works under both
// linkers.
class RTDyldRegistryListener : public JITEventListener {
public:
  void notifyObjectLoaded(ObjectKey K, const object::ObjectFile &Obj,
                          const RuntimeDyld::LoadedObjectInfo &L) override {
    object::OwningBinary<object::ObjectFile> Debug = L.getObjectForDebug(Obj);
    const object::ObjectFile *DebugObj = Debug.getBinary();
    if (!DebugObj)
      return;

    std::vector<PendingFunction> Fns;
    for (const auto &P : object::computeSymbolSizes(*DebugObj)) {
      const object::SymbolRef &Sym = P.first;
      auto Type = Sym.getType();
      auto Name = Sym.getName();
      auto Addr = Sym.getAddress();
      if (!Type || !Name || !Addr) {
        consumeError(Type.takeError());
        consumeError(Name.takeError());
        consumeError(Addr.takeError());
        continue;
      }
      if (*Type != object::SymbolRef::ST_Function || Name->empty())
        continue;
      PendingFunction F;
      F.Name = Name->str();
      F.Address = *Addr;
      F.Size = P.second;
      Fns.push_back(std::move(F));
    }
    if (jp_core->unwind_wanted())
      unwindInfo(Obj, L, *DebugObj, Fns);
    if (*jp_core->steps) {
      StepTables Tables = stepTables(*DebugObj);
      reportObject(K, Fns, &Tables);
    } else
      reportObject(K, Fns);
  }

  void notifyFreeingObject(ObjectKey K) override {
    jp_core->object_freed(K);
  }

private:
  // RuntimeDyld has applied the relocations of the loaded .eh_frame in
  // place; the debug object's sections carry their load addresses.  The
  // free bytes after the last function are those up to the end of the page
  // of its section, which RuntimeDyld's memory manager may give to a later
  // object's code: perf then stops unwinding through this one.
  void unwindInfo(const object::ObjectFile &Obj,
                  const RuntimeDyld::LoadedObjectInfo &L,
                  const object::ObjectFile &DebugObj,
                  std::vector<PendingFunction> &Fns) {
    jitprof::EHFrameIndex EH;
    for (const auto &S : Obj.sections()) {
      auto Name = S.getName();
      if (!Name) {
        consumeError(Name.takeError());
        continue;
      }
      uint64_t Addr = L.getSectionLoadAddress(S);
      if (*Name != ".eh_frame" || Addr == 0 || S.getSize() == 0)
        continue;
      EH.add(Addr, reinterpret_cast<const uint8_t *>(uintptr_t(Addr)),
             S.getSize());
    }
    if (Fns.empty())
      return;
    const PendingFunction *Last = &Fns[0];
    for (const auto &F : Fns)
      if (F.Address > Last->Address)
        Last = &F;
    uint64_t CodeEnd = 0;
    bool OthersAfter = false;
    for (const auto &S : DebugObj.sections()) {
      if (!S.isText() || S.getSize() == 0)
        continue;
      uint64_t Start = S.getAddress(), End = Start + S.getSize();
      if (Start <= Last->Address && Last->Address < End)
        CodeEnd = End;
      else if (Start > Last->Address)
        OthersAfter = true;
    }
    addUnwindInfo(Fns, EH, CodeEnd, OthersAfter);
  }
};

// The object layer jitprof gives llvmjit: JITLink for every object it can
// take, RuntimeDyld for the others, so that a query never fails where stock
// PostgreSQL would have succeeded.  An object goes to RuntimeDyld when
// JITLink cannot build its link graph (LLVM 14's ELF/aarch64 JITLink knows
// only some of the relocations llvmjit's code uses), when the code arena
// cannot get address space for it, or when jitprof.debug_fail_link says so.
// Both inner layers belong to the same ExecutionSession and register with it
// as resource managers, so freeing a query's code reaches whichever layer
// linked it; both report to the registry.
//
// The graph built for the check is the one JITLink links.  Its blocks point
// into the object's buffer until the arena copies them to their final
// place, so the buffer is kept (ObjectBuffers) until JITLink reports the
// object emitted or failed.
class ObjectBuffers : public jitprof::Plugin {
public:
  void keep(MaterializationResponsibility *MR, std::unique_ptr<MemoryBuffer> O) {
    std::lock_guard<std::mutex> Lock(M);
    Kept[MR] = std::move(O);
  }

  // The object kept for MR, or an empty buffer.
  MemoryBufferRef find(MaterializationResponsibility *MR) {
    std::lock_guard<std::mutex> Lock(M);
    auto I = Kept.find(MR);
    if (I == Kept.end())
      return MemoryBufferRef();
    return I->second->getMemBufferRef();
  }

  void modifyPassConfig(MaterializationResponsibility &MR,
                        jitlink::LinkGraph &G,
                        jitlink::PassConfiguration &Config) override {}

  Error notifyEmitted(MaterializationResponsibility &MR) override {
    drop(&MR);
    return Error::success();
  }

  Error notifyFailed(MaterializationResponsibility &MR) override {
    drop(&MR);
    return Error::success();
  }

  Error removingResources(ResourceKey K) override {
    return Error::success();
  }

  void transferringResources(ResourceKey DstKey, ResourceKey SrcKey) override {}

private:
  void drop(MaterializationResponsibility *MR) {
    std::lock_guard<std::mutex> Lock(M);
    Kept.erase(MR);
  }

  std::mutex M;
  DenseMap<MaterializationResponsibility *, std::unique_ptr<MemoryBuffer>>
      Kept;
};

class JitprofObjectLayer : public RTTIExtends<JitprofObjectLayer, ObjectLayer> {
public:
  static char ID;

  JitprofObjectLayer(ExecutionSession &ES,
                     std::unique_ptr<ObjectLinkingLayer> JITLinkLayer,
                     ObjectBuffers &Buffers,
                     std::unique_ptr<ObjectLayer> RTDyldLayer)
      : RTTIExtends(ES), JITLinkLayer(std::move(JITLinkLayer)),
        Buffers(Buffers), RTDyldLayer(std::move(RTDyldLayer)) {}

  void emit(std::unique_ptr<MaterializationResponsibility> R,
            std::unique_ptr<MemoryBuffer> O) override {
    if (!RTDyldLayer) {
      keepStepTables(R.get(), *O);
      return JITLinkLayer->emit(std::move(R), std::move(O));
    }

    std::string Why;
    auto G = graphFor(*O, Why);
    if (!G) {
      jp_core->linker_fallback(Why.c_str());
      RTDyldLayer->emit(std::move(R), std::move(O));
      return;
    }
    keepStepTables(R.get(), *O);
    Buffers.keep(R.get(), std::move(O));
    JITLinkLayer->emit(std::move(R), std::move(G));
  }

private:
  // The object's link graph if JITLink can take it; else null, and Why.
  std::unique_ptr<jitlink::LinkGraph> graphFor(MemoryBuffer &O,
                                               std::string &Why) {
    if (*jp_core->debug_fail_link) {
      Why = "link failure injected by jitprof.debug_fail_link in object " +
            O.getBufferIdentifier().str();
      jp_core->link_failed();
      return nullptr;
    }
    auto G = jitprof::createLinkGraph(getExecutionSession(),
                                      O.getMemBufferRef());
    if (!G) {
      Why = "JITLink cannot link object " + O.getBufferIdentifier().str() +
            ": " + toString(G.takeError());
      jp_core->link_failed();
      return nullptr;
    }
    if (!jitprof::codeArenaHasRoomFor(**G, Why))
      return nullptr;
    return std::move(*G);
  }

  std::unique_ptr<ObjectLinkingLayer> JITLinkLayer;
  ObjectBuffers &Buffers;
  std::unique_ptr<ObjectLayer> RTDyldLayer;
};

char JitprofObjectLayer::ID = 0;

// RuntimeDyld's layer as libLLVM makes it, reporting to the registry; null
// when the original functions cannot be found.
ObjectLayer *createRTDyldLayer(LLVMOrcExecutionSessionRef ES) {
  static RTDyldRegistryListener Listener;
  CreateRTDyldLayerFn Create = originalCreateLayer();
  RegisterListenerFn Register = originalRegisterListener();

  if (!Create || !Register)
    return nullptr;
  LLVMOrcObjectLayerRef Layer = Create(ES);
  Register(Layer, wrap(static_cast<JITEventListener *>(&Listener)));
  return reinterpret_cast<ObjectLayer *>(Layer);
}

// The layer for one of llvmjit's LLJIT instances, as jitprof.linker says.
ObjectLayer *createJitprofLayer(LLVMOrcExecutionSessionRef ES) {
  ObjectLayer *RTDyld = createRTDyldLayer(ES);

  if (*jp_core->linker == JP_LINKER_RTDYLD && RTDyld) {
    LinkerInUse = JP_LINKER_RTDYLD;
    return RTDyld;
  }
  // Without the originals, JITLink is the only linker there is.

  ExecutionSession &Session = unwrapSession(ES);
  // .eh_frame goes to libgcc's unwinder, as RuntimeDyld does it, so that
  // backtraces (backtrace_functions, a debugger) get through JIT frames.
  // Without that plugin JITLink code could not be unwound: RuntimeDyld
  // links everything instead.
  auto EHFrames = jitprof::createEHFramePlugin(Session);
  if (!EHFrames) {
    std::string Why = "JITLink cannot register unwinding information: " +
                      toString(EHFrames.takeError());
    if (RTDyld) {
      jp_core->linker_fallback(Why.c_str());
      LinkerInUse = JP_LINKER_RTDYLD;
      return RTDyld;
    }
  }
  auto JITLink =
      std::make_unique<ObjectLinkingLayer>(Session, jitprof::codeArena());
  auto Buffers = std::make_unique<ObjectBuffers>();
  ObjectBuffers &BuffersRef = *Buffers;
  JITLink->addPlugin(std::move(Buffers));
  JITLink->addPlugin(std::make_unique<JitprofPlugin>());
  if (EHFrames)
    JITLink->addPlugin(std::move(*EHFrames));
  // LLVM's own perf and debugger plugins, for comparison (llvm_plugins.cpp)
  if (*jp_core->llvm_plugins != JP_LLVM_PLUGINS_OFF)
    jitprof::addLLVMPlugins(*JITLink, Session,
                            [&BuffersRef](MaterializationResponsibility &MR) {
                              return BuffersRef.find(&MR);
                            });
  LinkerInUse = JP_LINKER_JITLINK;
  return new JitprofObjectLayer(Session, std::move(JITLink), BuffersRef,
                                std::unique_ptr<ObjectLayer>(RTDyld));
}


// Replaces LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager for
// llvmjit.so (see the file header).  Called twice per backend, once per
// LLJIT instance.
LLVMOrcObjectLayerRef
replacementCreateLayer(LLVMOrcExecutionSessionRef ES) {
  return wrapLayer(createJitprofLayer(ES));
}

// llvmjit attaches LLVM's GDB and perf listeners here when
// jit_debugging_support or jit_profiling_support is on.  They cannot work
// with a JITLink layer, and under RuntimeDyld they would duplicate jitprof's
// own sinks, which those two settings turn on instead; so they are dropped.
// (llvmjit never gets them in the first place: see below.)
void replacementRegisterListener(LLVMOrcObjectLayerRef RTDyldObjLinkingLayer,
                                 LLVMJITEventListenerRef Listener) {}

// LLVM's perf listener creates its jit-<pid>.dump file and marker when it is
// constructed, and its GDB listener is never used with jitprof: llvmjit gets
// no listener, and the NULL it gets instead goes to the function above.
LLVMJITEventListenerRef replacementCreateListener(void) { return nullptr; }

// llvmjit installs its error reporter on each LLJIT's execution session
// here.  JITLink reports why a link failed only to that reporter; the failed
// lookup that then ends the query carries just "Failed to materialize".  So
// jitprof's reporter first records the message for the registry, which adds
// it to the query's ERROR, then passes it on to llvmjit's reporter.
struct ReporterChain {
  LLVMOrcErrorReporterFunction Report;
  void *Ctx;
};

void recordAndReport(void *Ctx, LLVMErrorRef Err) {
  auto *Chain = static_cast<ReporterChain *>(Ctx);
  char *Msg = LLVMGetErrorMessage(Err);
  // after llvmjit's WARNING, so that only the ERROR gets the context
  Chain->Report(Chain->Ctx, LLVMCreateStringError(Msg));
  jp_core->link_error(Msg);
  LLVMDisposeErrorMessage(Msg);
}

// Replaces LLVMOrcExecutionSessionSetErrorReporter for llvmjit.so.
void replacementSetReporter(LLVMOrcExecutionSessionRef ES,
                            LLVMOrcErrorReporterFunction ReportError,
                            void *Ctx) {
  auto Set = reinterpret_cast<SetReporterFn>(OriginalSetReporter);
  if (!Set)
    return;
  if (!ReportError)
    return Set(ES, ReportError, Ctx);
  // One per execution session, alive as long as the process.
  auto *Chain = new ReporterChain{ReportError, Ctx};
  Set(ES, recordAndReport, Chain);
}

} // end anonymous namespace

extern "C" {

JitprofLinkerKind jp_linker_in_use(void) { return LinkerInUse; }

const char *jp_llvm_version(void) { return LLVM_VERSION_STRING; }

// What jitprof.so rebinds in llvmjit.so.  Only the object layer is
// required: the other functions are called by llvmjit.so only if it was
// built to call them, and then they are replaced too.
const JitprofInterposer jp_linker_interposers[] = {
    {"LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager",
     reinterpret_cast<void *>(replacementCreateLayer), &OriginalCreateLayer,
     true},
    {"LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener",
     reinterpret_cast<void *>(replacementRegisterListener),
     &OriginalRegisterListener, false},
    {"LLVMOrcExecutionSessionSetErrorReporter",
     reinterpret_cast<void *>(replacementSetReporter), &OriginalSetReporter,
     false},
    {"LLVMCreatePerfJITEventListener",
     reinterpret_cast<void *>(replacementCreateListener),
     &OriginalCreatePerfListener, false},
    {"LLVMCreateGDBRegistrationListener",
     reinterpret_cast<void *>(replacementCreateListener),
     &OriginalCreateGDBListener, false},
};

const int jp_linker_ninterposers =
    sizeof(jp_linker_interposers) / sizeof(jp_linker_interposers[0]);

} // extern "C"
