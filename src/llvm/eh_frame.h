//===- eh_frame.h - One function's CIE and FDE from a linked .eh_frame -*- C++ -*-===//
//
// The linker's side of JIT_CODE_UNWINDING_INFO (issue 12, eh_frame.cpp):
// collects the CIE and FDE records of a linked object's .eh_frame at their
// final addresses, and rewrites the pair that describes one function into
// the self-contained form of JitprofLinkedFunction.eh_frame.  Plain byte
// parsing, no LLVM; used from the backend's only thread.
//
// Copyright (c) 2026, The jitprof Developers
// Distributed under the PostgreSQL License (the file LICENSE).
//
// IDENTIFICATION
//   src/llvm/eh_frame.h
//
//===----------------------------------------------------------------------===//

#ifndef JITPROF_EH_FRAME_H
#define JITPROF_EH_FRAME_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace jitprof {

class EHFrameIndex {
public:
  // Records starting at Address (a whole .eh_frame section, or one of the
  // blocks JITLink splits it into), after relocation.  A zero length ends
  // the run; records that do not fit are ignored.
  void add(uint64_t Address, const uint8_t *Data, size_t Size);

  // The rewritten CIE + FDE pair of the function at [Start, Start + Size),
  // and the offset of the FDE's pc_begin field in it.  False if no FDE
  // begins at Start, or it cannot be parsed or rewritten.
  bool entryFor(uint64_t Start, uint64_t Size, std::vector<uint8_t> &Out,
                uint32_t &PcField) const;

  bool empty() const { return FDEs.empty(); }

private:
  struct Record {
    uint64_t Address;
    std::vector<uint8_t> Bytes; // the whole record, length field included
  };
  std::map<uint64_t, Record> CIEs;
  std::vector<Record> FDEs;
};

} // end namespace jitprof

#endif // JITPROF_EH_FRAME_H
