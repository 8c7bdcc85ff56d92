//===- code_arena.cpp - JITLink memory that never reuses an address -------===//
//
// A JITLinkMemoryManager for jitprof.  PostgreSQL frees a query's JIT code
// when the query ends, so a plain allocator hands the same addresses out
// again and again; a profiler that maps addresses to names (perf map files,
// jitdump) then cannot tell which of a dozen functions was live at a sample.
// This manager instead bump-allocates every linked object from a large
// reserved range (an "arena") and, when the object is freed, gives its pages
// back to the kernel while keeping the addresses reserved.  An address is
// therefore not reused before the arena is exhausted (4 GiB of address space,
// hundreds of thousands of objects); then a fresh arena is reserved and the
// old one is unmapped once its last object is freed.
//
// Freeing also fixes LLVM 14's InProcessMemoryManager leak: it unmaps an
// allocation only if the graph carried a deallocation action, which
// llvmjit's graphs never do.
//
// The manager is process-wide and used from the backend's only thread, but
// it takes a mutex anyway because JITLink's interface allows concurrent
// links.
//
//===----------------------------------------------------------------------===//

extern "C"
{
#include "linker.h"
}

#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h"
#include "llvm/ExecutionEngine/Orc/Shared/AllocationActions.h"
#include "llvm/Support/Memory.h"
#include "llvm/Support/MathExtras.h"

#include <mutex>
#include <vector>

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "code_arena.h"

using namespace llvm;
using namespace llvm::jitlink;

namespace {

constexpr uint64_t ArenaSize = uint64_t(4) << 30;

// One reserved range of address space.
struct Arena {
  char *Base = nullptr;
  uint64_t Used = 0;
  uint64_t LiveAllocs = 0;
};

// A block of pages handed to one link graph, with the protections its
// segments need once linked.
struct SegmentProt {
  char *Addr;
  uint64_t Size;
  MemProt Prot;
};

struct FinalizedInfo {
  Arena *Owner;
  char *Base;
  uint64_t Size;
  std::vector<orc::shared::WrapperFunctionCall> DeallocActions;
};

class ArenaMemoryManager;

class ArenaInFlightAlloc : public JITLinkMemoryManager::InFlightAlloc {
public:
  ArenaInFlightAlloc(ArenaMemoryManager &MemMgr, LinkGraph &G, Arena *Owner,
                     char *Base, uint64_t Size,
                     std::vector<SegmentProt> Segments)
      : MemMgr(MemMgr), G(G), Owner(Owner), Base(Base), Size(Size),
        Segments(std::move(Segments)) {}

  void finalize(OnFinalizedFunction OnFinalized) override;
  void abandon(OnAbandonedFunction OnAbandoned) override;

private:
  ArenaMemoryManager &MemMgr;
  LinkGraph &G;
  Arena *Owner;
  char *Base;
  uint64_t Size;
  std::vector<SegmentProt> Segments;
};

class ArenaMemoryManager : public JITLinkMemoryManager {
public:
  ArenaMemoryManager() : PageSize(uint64_t(sysconf(_SC_PAGESIZE))) {}

  void allocate(const JITLinkDylib *JD, LinkGraph &G,
                OnAllocatedFunction OnAllocated) override;
  void deallocate(std::vector<FinalizedAlloc> Allocs,
                  OnDeallocatedFunction OnDeallocated) override;

  // Give an object's pages back, keeping the addresses reserved.
  void release(Arena *Owner, char *Base, uint64_t Size);

  void stats(JitprofArenaStats *S) {
    std::lock_guard<std::mutex> Lock(M);
    *S = Stats;
  }

  uint64_t pageSize() const { return PageSize; }

private:
  Expected<std::pair<Arena *, char *>> reserve(uint64_t Size);
  void dropArenaIfDone(Arena *A);

  std::mutex M;
  uint64_t PageSize;
  Arena *Current = nullptr;
  JitprofArenaStats Stats = {};
};

Error errnoError(const char *What) {
  return make_error<StringError>(std::string("jitprof code arena: ") + What +
                                     ": " + strerror(errno),
                                 inconvertibleErrorCode());
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

Expected<std::pair<Arena *, char *>> ArenaMemoryManager::reserve(uint64_t Size) {
  std::lock_guard<std::mutex> Lock(M);

  if (Size > ArenaSize)
    return make_error<StringError>("jitprof code arena: object too large",
                                   inconvertibleErrorCode());

  if (!Current || Current->Used + Size > ArenaSize) {
    void *Base = mmap(nullptr, ArenaSize, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (Base == MAP_FAILED)
      return errnoError("could not reserve address space");
    Arena *Old = Current;
    Current = new Arena();
    Current->Base = static_cast<char *>(Base);
    Stats.arenas_created++;
    Stats.reserved_bytes += ArenaSize;
    if (Old)
      dropArenaIfDone(Old);
  }

  char *Addr = Current->Base + Current->Used;
  if (mprotect(Addr, Size, PROT_READ | PROT_WRITE) != 0)
    return errnoError("could not commit code pages");
  Current->Used += Size;
  Current->LiveAllocs++;
  Stats.committed_bytes += Size;
  Stats.allocations_live++;
  Stats.allocations_total++;
  return std::make_pair(Current, Addr);
}

// Unmap a full arena once nothing in it is live.  Called with M held.
void ArenaMemoryManager::dropArenaIfDone(Arena *A) {
  if (A == Current || A->LiveAllocs != 0)
    return;
  munmap(A->Base, ArenaSize);
  Stats.reserved_bytes -= ArenaSize;
  delete A;
}

void ArenaMemoryManager::release(Arena *Owner, char *Base, uint64_t Size) {
  // Replacing the pages with a fresh inaccessible mapping frees them and
  // lets the kernel merge the range back into the reservation, so the
  // number of mappings stays bounded.
  void *R = mmap(Base, Size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
                 0);
  std::lock_guard<std::mutex> Lock(M);
  if (R == MAP_FAILED)
    madvise(Base, Size, MADV_DONTNEED);
  Owner->LiveAllocs--;
  Stats.committed_bytes -= Size;
  Stats.allocations_live--;
  dropArenaIfDone(Owner);
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

  auto Reserved = reserve(Total);
  if (!Reserved)
    return OnAllocated(Reserved.takeError());
  Arena *Owner = Reserved->first;
  char *Base = Reserved->second;

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
    release(Owner, Base, Total);
    return OnAllocated(std::move(Err));
  }

  OnAllocated(std::make_unique<ArenaInFlightAlloc>(
      *this, G, Owner, Base, Total, std::move(Segments)));
}

void ArenaMemoryManager::deallocate(std::vector<FinalizedAlloc> Allocs,
                                    OnDeallocatedFunction OnDeallocated) {
  Error Err = Error::success();
  for (auto &FA : Allocs) {
    auto *Info = FA.release().toPtr<FinalizedInfo *>();
    Err = joinErrors(std::move(Err),
                     orc::shared::runDeallocActions(Info->DeallocActions));
    release(Info->Owner, Info->Base, Info->Size);
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
      MemMgr.release(Owner, Base, Size);
      return OnFinalized(std::move(Err));
    }
    if ((S.Prot & MemProt::Exec) != MemProt::None)
      sys::Memory::InvalidateInstructionCache(S.Addr, S.Size);
  }

  auto DeallocActions = orc::shared::runFinalizeActions(G.allocActions());
  if (!DeallocActions) {
    MemMgr.release(Owner, Base, Size);
    return OnFinalized(DeallocActions.takeError());
  }

  auto *Info = new FinalizedInfo{Owner, Base, Size, std::move(*DeallocActions)};
  OnFinalized(JITLinkMemoryManager::FinalizedAlloc(
      orc::ExecutorAddr::fromPtr(Info)));
}

void ArenaInFlightAlloc::abandon(OnAbandonedFunction OnAbandoned) {
  MemMgr.release(Owner, Base, Size);
  OnAbandoned(Error::success());
}

// Never destroyed: JIT code may still be freed while the process exits.
ArenaMemoryManager *TheArena = nullptr;

} // end anonymous namespace

JITLinkMemoryManager &jitprof::codeArena() {
  if (!TheArena)
    TheArena = new ArenaMemoryManager();
  return *TheArena;
}

extern "C" void jp_arena_stats(JitprofArenaStats *stats) {
  if (TheArena)
    TheArena->stats(stats);
  else
    memset(stats, 0, sizeof(*stats));
}
