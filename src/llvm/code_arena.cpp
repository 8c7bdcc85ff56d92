//===- code_arena.cpp - JITLink memory with stable, never-recycled addresses -===//
//
// A JITLinkMemoryManager for jitprof: code goes into ranges reserved
// PROT_NONE ("arenas") that are never unmapped, and a freed range is handed
// back only to an object of the same shape (segment layout, blocks, and each
// function's name, offset and size), so an address never changes name while
// a perf map line for it stands.  Freeing also works around LLVM 14's
// InProcessMemoryManager leak.
//
// Contract: process-wide, used from the backend's only thread, but behind a
// mutex because JITLink's interface allows concurrent links;
// jp_core->stable_name is called without the mutex held.  When no arena can
// be reserved it says so, and linker.cpp links with RuntimeDyld.  Steps,
// limits and shapes: doc/linking.md.
//
// Copyright (c) 2026, The jitprof Developers
// Distributed under the PostgreSQL License (the file LICENSE).
//
// IDENTIFICATION
//   src/llvm/code_arena.cpp
//
//===----------------------------------------------------------------------===//

extern "C"
{
#include "llvm/linker.h"
}

#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h"
#include "llvm/ExecutionEngine/Orc/Shared/AllocationActions.h"
#include "llvm/Support/Memory.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SHA1.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "llvm/code_arena.h"
#include "llvm/llvm_compat.h"

using namespace llvm;
using namespace llvm::jitlink;
using jitprof::MemProt;

namespace {

constexpr uint64_t ArenaStep = uint64_t(64) << 20;
constexpr uint64_t MinArena = uint64_t(1) << 20;
constexpr size_t MaxCachedRanges = 16384;

// One reserved range of address space.  Never unmapped.
struct Arena {
  char *Base = nullptr;
  uint64_t Size = 0;
  uint64_t Used = 0;
};

// A block of pages handed to one link graph, with the protections its
// segments need once linked.
struct SegmentProt {
  char *Addr;
  uint64_t Size;
  MemProt Prot;
};

struct FinalizedInfo {
  char *Base;
  uint64_t Size;
  std::string Shape;
  std::vector<orc::shared::WrapperFunctionCall> DeallocActions;
};

class ArenaMemoryManager;

class ArenaInFlightAlloc : public JITLinkMemoryManager::InFlightAlloc {
public:
  ArenaInFlightAlloc(ArenaMemoryManager &MemMgr, LinkGraph &G, char *Base,
                     uint64_t Size, std::string Shape,
                     std::vector<SegmentProt> Segments)
      : MemMgr(MemMgr), G(G), Base(Base), Size(Size), Shape(std::move(Shape)),
        Segments(std::move(Segments)) {}

  void finalize(OnFinalizedFunction OnFinalized) override;
  void abandon(OnAbandonedFunction OnAbandoned) override;

private:
  ArenaMemoryManager &MemMgr;
  LinkGraph &G;
  char *Base;
  uint64_t Size;
  std::string Shape;
  std::vector<SegmentProt> Segments;
};

class ArenaMemoryManager : public JITLinkMemoryManager {
public:
  ArenaMemoryManager() : PageSize(uint64_t(sysconf(_SC_PAGESIZE))) {}

  void allocate(const JITLinkDylib *JD, LinkGraph &G,
                OnAllocatedFunction OnAllocated) override;
  void deallocate(std::vector<FinalizedAlloc> Allocs,
                  OnDeallocatedFunction OnDeallocated) override;

  // Give an object's pages back, keeping the addresses reserved, and keep
  // the range for the next object of the same shape.
  void release(char *Base, uint64_t Size, const std::string &Shape);

  bool hasRoomFor(uint64_t Size, std::string &Why);

  void stats(JitprofArenaStats *S) {
    std::lock_guard<std::mutex> Lock(M);
    *S = Stats;
  }

private:
  Expected<char *> take(uint64_t Size, const std::string &Shape);
  bool ensureRoom(uint64_t Size);

  std::mutex M;
  uint64_t PageSize;
  uint64_t Step = ArenaStep;
  bool GaveUp = false;     // the kernel refused even the smallest arena
  std::string GaveUpWhy;
  Arena *Current = nullptr;
  std::vector<Arena *> Arenas;
  std::unordered_map<std::string, std::vector<char *>> FreeRanges;
  JitprofArenaStats Stats = {};
};

Error arenaError(const std::string &What) {
  return make_error<StringError>("jitprof code arena: " + What,
                                 inconvertibleErrorCode());
}

Error errnoError(const char *What) {
  return arenaError(std::string(What) + ": " + strerror(errno));
}

int toMmapProt(MemProt P) {
  int Prot = PROT_NONE;
  if ((P & MemProt::Read) != MemProt::None)
    Prot |= PROT_READ;
  if ((P & MemProt::Write) != MemProt::None)
    Prot |= PROT_WRITE;
  if ((P & MemProt::Exec) != MemProt::None)
    Prot |= PROT_EXEC;
  return Prot;
}

// Make sure the current arena has Size bytes left, reserving a new one if
// needed: ArenaStep, or smaller steps when the kernel refuses.  The previous
// arena stays reserved.  Called with M held.
bool ArenaMemoryManager::ensureRoom(uint64_t Size) {
  if (Current && Current->Used + Size <= Current->Size)
    return true;
  if (GaveUp)
    return false;

  bool RefusedStep = false;
  std::string LimitWhy;

  uint64_t MaxReserved = uint64_t(*jp_core->code_arena_max_size) * 1024;
  for (uint64_t Try = Step; Try >= MinArena; Try /= 4) {
    uint64_t Want = std::max(Try, alignTo(Size, PageSize));
    if (Stats.reserved_bytes + Want > MaxReserved) {
      LimitWhy = "the code arena reached jitprof.code_arena_max_size (" +
                 std::to_string(*jp_core->code_arena_max_size) + " kB)";
      if (Want > Try)
        break;
      continue;
    }
    void *Base = mmap(nullptr, Want, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (Base == MAP_FAILED) {
      int Err = errno;
      RefusedStep = true;
      Stats.reserve_failures++;
      GaveUpWhy = std::string("could not reserve ") +
                  std::to_string(Want >> 10) + " kB of address space: " +
                  strerror(Err);
      if (Want > Try)
        break;
      continue;
    }
    if (Try < Step && RefusedStep) {
      // Keep the smaller step from now on rather than failing every time.
      Step = Try;
    }
    if (Want < ArenaStep)
      Stats.arenas_smaller++;
    Current = new Arena();
    Current->Base = static_cast<char *>(Base);
    Current->Size = Want;
    Arenas.push_back(Current);
    Stats.arenas_created++;
    Stats.reserved_bytes += Want;
    return true;
  }

  // Only the kernel's refusal is final; the limit is a setting.
  if (RefusedStep && LimitWhy.empty())
    GaveUp = true;
  else if (!LimitWhy.empty())
    GaveUpWhy = LimitWhy;
  return false;
}

bool ArenaMemoryManager::hasRoomFor(uint64_t Size, std::string &Why) {
  std::lock_guard<std::mutex> Lock(M);
  if (ensureRoom(alignTo(Size, PageSize)))
    return true;
  Why = GaveUpWhy;
  return false;
}

// A range for an object of Size bytes and shape Shape: a freed range of
// the same shape if there is one, else fresh addresses.
Expected<char *> ArenaMemoryManager::take(uint64_t Size,
                                          const std::string &Shape) {
  std::lock_guard<std::mutex> Lock(M);
  char *Addr = nullptr;

  auto I = Shape.empty() ? FreeRanges.end() : FreeRanges.find(Shape);
  if (I != FreeRanges.end()) {
    Addr = I->second.back();
    I->second.pop_back();
    if (I->second.empty())
      FreeRanges.erase(I);
    Stats.shapes_cached--;
    Stats.objects_reused++;
  } else {
    if (!ensureRoom(Size))
      return arenaError(GaveUpWhy);
    Addr = Current->Base + Current->Used;
    Current->Used += Size;
  }

  if (mprotect(Addr, Size, PROT_READ | PROT_WRITE) != 0) {
    Error Err = errnoError("could not commit code pages");
    // the range is still PROT_NONE: keep it for its shape
    if (!Shape.empty() && Stats.shapes_cached < MaxCachedRanges) {
      FreeRanges[Shape].push_back(Addr);
      Stats.shapes_cached++;
    }
    return Err;
  }
  Stats.committed_bytes += Size;
  Stats.allocations_live++;
  Stats.allocations_total++;
  return Addr;
}

void ArenaMemoryManager::release(char *Base, uint64_t Size,
                                 const std::string &Shape) {
  // Replacing the pages with a fresh inaccessible mapping frees them and
  // lets the kernel merge the range back into the reservation, so the
  // number of mappings stays bounded.
  void *R = mmap(Base, Size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
                 0);
  if (R == MAP_FAILED) {
    madvise(Base, Size, MADV_DONTNEED);
    mprotect(Base, Size, PROT_NONE);
  }
  std::lock_guard<std::mutex> Lock(M);
  Stats.committed_bytes -= Size;
  Stats.allocations_live--;
  if (!Shape.empty() && Stats.shapes_cached < MaxCachedRanges) {
    FreeRanges[Shape].push_back(Base);
    Stats.shapes_cached++;
  }
}

void appendU64(std::string &K, uint64_t V) {
  K.append(reinterpret_cast<const char *>(&V), sizeof(V));
}

void appendStr(std::string &K, StringRef S) {
  appendU64(K, S.size());
  K.append(S.data(), S.size());
}

// The shape of a graph about to be laid out: what decides where each of its
// functions lands relative to the start of its range, and under which name.
// BasicLayout places blocks by section ordinal, address and size, so equal
// block lists give equal layouts.  Empty when a function has no name the
// registry knows: such an object is not worth a cache entry.
std::string shapeOf(LinkGraph &G, uint64_t Total) {
  using BlockKey = std::tuple<unsigned, uint64_t, uint64_t, uint64_t,
                              uint64_t, bool>;
  std::vector<BlockKey> Blocks;
  std::vector<std::string> Functions;
  DenseMap<const Section *, unsigned> Ordinal;
  unsigned N = 0;
  std::string K;

  appendU64(K, Total);
  for (auto &Sec : G.sections()) {
    Ordinal[&Sec] = N++;
    appendStr(K, Sec.getName());
    appendU64(K, uint64_t(Sec.getMemProt()));
    for (auto *B : Sec.blocks())
      Blocks.emplace_back(Ordinal[&Sec], B->getAddress().getValue(),
                          B->getSize(), B->getAlignment(),
                          B->getAlignmentOffset(), B->isZeroFill());
  }
  std::sort(Blocks.begin(), Blocks.end());
  for (auto &B : Blocks) {
    appendU64(K, std::get<0>(B));
    appendU64(K, std::get<1>(B));
    appendU64(K, std::get<2>(B));
    appendU64(K, std::get<3>(B));
    appendU64(K, std::get<4>(B));
    appendU64(K, std::get<5>(B));
  }

  for (auto *Sym : G.defined_symbols()) {
    if (!Sym->hasName() || !Sym->isCallable())
      continue;
    char Name[256];
    std::string F;
    std::string LLVMName = jitprof::symbolName(*Sym).str();
    if (jp_core->stable_name(LLVMName.c_str(), Name, sizeof(Name)))
      appendStr(F, Name);
    else if (LLVMName.find("evalexpr_") == 0 || LLVMName.find("deform_") == 0)
      return std::string(); // llvmjit's per-execution name: no stable shape
    else
      appendStr(F, "llvm:" + LLVMName); // a helper: named after itself
    appendU64(F, Ordinal[&Sym->getBlock().getSection()]);
    appendU64(F, Sym->getBlock().getAddress().getValue());
    appendU64(F, Sym->getOffset());
    appendU64(F, Sym->getSize());
    Functions.push_back(std::move(F));
  }
  std::sort(Functions.begin(), Functions.end());
  for (auto &F : Functions)
    K += F;
  // Kept as a SHA-1 of all that: 20 bytes per cached range instead of a
  // kilobyte or so.
  auto Digest = SHA1::hash(ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(K.data()), K.size()));
  return std::string(reinterpret_cast<const char *>(Digest.data()),
                     Digest.size());
}

void ArenaMemoryManager::allocate(const JITLinkDylib *JD, LinkGraph &G,
                                  OnAllocatedFunction OnAllocated) {
  BasicLayout BL(G);

  auto SegSizes = BL.getContiguousPageBasedLayoutSizes(PageSize);
  if (!SegSizes)
    return OnAllocated(SegSizes.takeError());

  // Everything, finalize-lifetime segments included, lives until the
  // object is freed: they are small and it keeps one range per object.
  uint64_t Total = alignTo(SegSizes->total(), PageSize);
  if (Total == 0)
    Total = PageSize;

  std::string Shape = shapeOf(G, Total);
  auto Taken = take(Total, Shape);
  if (!Taken)
    return OnAllocated(Taken.takeError());
  char *Base = *Taken;

  std::vector<SegmentProt> Segments;
  char *Next = Base;
  for (auto &KV : BL.segments()) {
    auto &AG = KV.first;
    auto &Seg = KV.second;
    uint64_t SegSize = alignTo(Seg.ContentSize + Seg.ZeroFillSize, PageSize);

    Seg.WorkingMem = Next;
    Seg.Addr = orc::ExecutorAddr::fromPtr(Next);
    Segments.push_back({Next, SegSize, AG.getMemProt()});
    Next += SegSize;
  }

  if (auto Err = BL.apply()) {
    release(Base, Total, Shape);
    return OnAllocated(std::move(Err));
  }

  OnAllocated(std::make_unique<ArenaInFlightAlloc>(
      *this, G, Base, Total, std::move(Shape), std::move(Segments)));
}

void ArenaMemoryManager::deallocate(std::vector<FinalizedAlloc> Allocs,
                                    OnDeallocatedFunction OnDeallocated) {
  Error Err = Error::success();
  for (auto &FA : Allocs) {
    auto *Info = FA.release().toPtr<FinalizedInfo *>();
    Err = joinErrors(std::move(Err),
                     jitprof::runDeallocActions(Info->DeallocActions));
    release(Info->Base, Info->Size, Info->Shape);
    delete Info;
  }
  OnDeallocated(std::move(Err));
}

void ArenaInFlightAlloc::finalize(OnFinalizedFunction OnFinalized) {
  for (auto &S : Segments) {
    if (S.Size == 0)
      continue;
    if (mprotect(S.Addr, S.Size, toMmapProt(S.Prot)) != 0) {
      Error Err = errnoError("could not protect code pages");
      MemMgr.release(Base, Size, Shape);
      return OnFinalized(std::move(Err));
    }
    if ((S.Prot & MemProt::Exec) != MemProt::None)
      sys::Memory::InvalidateInstructionCache(S.Addr, S.Size);
  }

  auto DeallocActions = jitprof::runFinalizeActions(G.allocActions());
  if (!DeallocActions) {
    MemMgr.release(Base, Size, Shape);
    return OnFinalized(DeallocActions.takeError());
  }

  auto *Info =
      new FinalizedInfo{Base, Size, std::move(Shape), std::move(*DeallocActions)};
  OnFinalized(JITLinkMemoryManager::FinalizedAlloc(
      orc::ExecutorAddr::fromPtr(Info)));
}

void ArenaInFlightAlloc::abandon(OnAbandonedFunction OnAbandoned) {
  MemMgr.release(Base, Size, Shape);
  OnAbandoned(Error::success());
}

// Never destroyed: JIT code may still be freed while the process exits.
ArenaMemoryManager *TheArena = nullptr;

ArenaMemoryManager &arena() {
  if (!TheArena)
    TheArena = new ArenaMemoryManager();
  return *TheArena;
}

} // end anonymous namespace

JITLinkMemoryManager &jitprof::codeArena() { return arena(); }

bool jitprof::codeArenaHasRoomFor(LinkGraph &G, std::string &Why) {
  // Before pruning and before JITLink adds its GOT and stubs: twice the
  // blocks plus a page per section is a generous bound.
  uint64_t Size = 0;
  for (auto &Sec : G.sections()) {
    Size += 4096;
    for (auto *B : Sec.blocks())
      Size += 2 * (B->getSize() + B->getAlignment());
  }
  return arena().hasRoomFor(Size, Why);
}

extern "C" void jp_arena_stats(JitprofArenaStats *stats) {
  if (TheArena)
    TheArena->stats(stats);
  else
    memset(stats, 0, sizeof(*stats));
}
