//===- eh_frame.cpp - One function's CIE and FDE from a linked .eh_frame -===//
//
// For the jitdump sink's unwinding records: find the FDE whose pc_begin is
// a function's start in the linked object's .eh_frame, and rewrite it and
// its CIE into a pair that can be moved (augmentation "zR", pc-relative
// pointers, no personality or LSDA, padded to 8 bytes, pc_begin left 0 for
// the sink to fill in).
//
// Contract: anything not understood (a 64-bit record, an unknown version,
// augmentation, pointer encoding or CFA instruction, DW_CFA_set_loc, a pair
// larger than JP_MAX_UNWIND_BYTES) means no entry for the function, never a
// wrong one.  Records are in the host's byte order, the JIT's target.  Why
// and how perf reads them: doc/perf.md.
//
// Copyright (c) 2026, The jitprof Developers
// Distributed under the PostgreSQL License (the file LICENSE).
//
// IDENTIFICATION
//   src/llvm/eh_frame.cpp
//
//===----------------------------------------------------------------------===//

#include "llvm/eh_frame.h"

extern "C"
{
#include "core/jitprof_llvm.h"
}

#include <cstring>
#include <string>

namespace jitprof {

namespace {

constexpr uint8_t PeOmit = 0xff;
constexpr uint8_t PeIndirect = 0x80;
constexpr uint8_t PePcrel = 0x10;
constexpr uint8_t PePcrelSdata4 = 0x1b;
constexpr uint8_t CfaNop = 0x00;

// Bounds-checked reading of one record.
struct Reader {
  const uint8_t *P;
  const uint8_t *End;
  bool Ok = true;

  Reader(const uint8_t *P, const uint8_t *End) : P(P), End(End) {}

  bool need(size_t N) {
    if (!Ok || size_t(End - P) < N)
      Ok = false;
    return Ok;
  }
  uint8_t u8() { return need(1) ? *P++ : 0; }
  template <typename T> T fixed() {
    T V = 0;
    if (need(sizeof(T))) {
      std::memcpy(&V, P, sizeof(T));
      P += sizeof(T);
    }
    return V;
  }
  uint64_t uleb() {
    uint64_t V = 0;
    for (unsigned Shift = 0;; Shift += 7) {
      uint8_t B = u8();
      if (!Ok || Shift > 63) {
        Ok = false;
        return 0;
      }
      V |= uint64_t(B & 0x7f) << Shift;
      if ((B & 0x80) == 0)
        return V;
    }
  }
  int64_t sleb() {
    int64_t V = 0;
    unsigned Shift = 0;
    uint8_t B;
    do {
      B = u8();
      if (!Ok || Shift > 63) {
        Ok = false;
        return 0;
      }
      V |= int64_t(B & 0x7f) << Shift;
      Shift += 7;
    } while (B & 0x80);
    if (Shift < 64 && (B & 0x40))
      V |= -(int64_t(1) << Shift);
    return V;
  }
  void skip(uint64_t N) {
    if (need(N))
      P += N;
  }
};

// A pointer in encoding Enc, read at address FieldAddr.
bool readEncoded(Reader &R, uint8_t Enc, uint64_t FieldAddr, uint64_t &V) {
  if (Enc == PeOmit || (Enc & PeIndirect))
    return false;
  switch (Enc & 0x0f) {
  case 0x00: V = R.fixed<uint64_t>(); break; // absptr: 64-bit targets only
  case 0x01: V = R.uleb(); break;
  case 0x02: V = R.fixed<uint16_t>(); break;
  case 0x03: V = R.fixed<uint32_t>(); break;
  case 0x04: V = R.fixed<uint64_t>(); break;
  case 0x09: V = uint64_t(R.sleb()); break;
  case 0x0a: V = uint64_t(int64_t(R.fixed<int16_t>())); break;
  case 0x0b: V = uint64_t(int64_t(R.fixed<int32_t>())); break;
  case 0x0c: V = uint64_t(R.fixed<int64_t>()); break;
  default: return false;
  }
  switch (Enc & 0x70) {
  case 0x00: break;
  case PePcrel: V += FieldAddr; break;
  default: return false;
  }
  return R.Ok;
}

// Do these call frame instructions contain only what can be moved?
bool movableInstructions(const uint8_t *P, const uint8_t *End) {
  Reader R(P, End);
  while (R.Ok && R.P < R.End) {
    uint8_t Op = R.u8();
    switch (Op & 0xc0) {
    case 0x40: continue;            // DW_CFA_advance_loc
    case 0x80: R.uleb(); continue;  // DW_CFA_offset
    case 0xc0: continue;            // DW_CFA_restore
    }
    switch (Op) {
    case 0x00: case 0x0a: case 0x0b: case 0x2d: break; // nop, remember/restore state, window_save
    case 0x02: R.skip(1); break;    // advance_loc1
    case 0x03: R.skip(2); break;    // advance_loc2
    case 0x04: R.skip(4); break;    // advance_loc4
    case 0x06: case 0x07: case 0x08: case 0x0d: case 0x2e:
      R.uleb(); break;              // one ULEB operand
    case 0x0e: R.uleb(); break;     // def_cfa_offset
    case 0x05: case 0x09: case 0x0c: case 0x14: case 0x2f:
      R.uleb(); R.uleb(); break;    // two ULEB operands
    case 0x11: case 0x12: case 0x15:
      R.uleb(); R.sleb(); break;    // ULEB, SLEB
    case 0x13: R.sleb(); break;     // def_cfa_offset_sf
    case 0x0f: R.skip(R.uleb()); break;            // def_cfa_expression
    case 0x10: case 0x16: R.uleb(); R.skip(R.uleb()); break; // expression
    default: return false;          // set_loc (0x01) and unknown opcodes
    }
  }
  return R.Ok;
}

struct CIEInfo {
  uint64_t CodeAlign = 0;
  int64_t DataAlign = 0;
  uint64_t ReturnRegister = 0;
  uint8_t FdeEncoding = 0; // absptr unless 'R' says otherwise
  bool HasAugmentationData = false;
  bool SignalFrame = false;
  const uint8_t *Instructions = nullptr;
  const uint8_t *End = nullptr;
};

bool parseCIE(const std::vector<uint8_t> &Rec, uint64_t Address, CIEInfo &C) {
  Reader R(Rec.data(), Rec.data() + Rec.size());
  R.fixed<uint32_t>(); // length
  if (R.fixed<uint32_t>() != 0)
    return false;
  uint8_t Version = R.u8();
  if (Version != 1 && Version != 3)
    return false;
  std::string Aug;
  for (uint8_t Ch; R.Ok && (Ch = R.u8()) != 0;)
    Aug += char(Ch);
  C.CodeAlign = R.uleb();
  C.DataAlign = R.sleb();
  C.ReturnRegister = Version == 1 ? R.u8() : R.uleb();
  if (!Aug.empty()) {
    if (Aug[0] != 'z')
      return false;
    C.HasAugmentationData = true;
    uint64_t Len = R.uleb();
    if (!R.need(Len))
      return false;
    const uint8_t *AugEnd = R.P + Len;
    for (size_t I = 1; I < Aug.size() && R.Ok; I++) {
      switch (Aug[I]) {
      case 'R': C.FdeEncoding = R.u8(); break;
      case 'L': R.u8(); break;
      case 'S': C.SignalFrame = true; break;
      case 'P': {
        uint8_t Enc = R.u8();
        uint64_t Ignored;
        uint64_t At = Address + uint64_t(R.P - Rec.data());
        if (!readEncoded(R, Enc, At, Ignored))
          return false;
        break;
      }
      default: return false;
      }
    }
    if (!R.Ok || R.P > AugEnd)
      return false;
    R.P = AugEnd;
  }
  C.Instructions = R.P;
  C.End = Rec.data() + Rec.size();
  return R.Ok && movableInstructions(C.Instructions, C.End);
}

void put32(std::vector<uint8_t> &Out, size_t At, uint32_t V) {
  std::memcpy(Out.data() + At, &V, sizeof(V));
}

void putUleb(std::vector<uint8_t> &Out, uint64_t V) {
  do {
    uint8_t B = V & 0x7f;
    V >>= 7;
    Out.push_back(V ? (B | 0x80) : B);
  } while (V);
}

void putSleb(std::vector<uint8_t> &Out, int64_t V) {
  for (;;) {
    uint8_t B = V & 0x7f;
    V >>= 7;
    bool Done = (V == 0 && !(B & 0x40)) || (V == -1 && (B & 0x40));
    Out.push_back(Done ? B : (B | 0x80));
    if (Done)
      return;
  }
}

void padRecord(std::vector<uint8_t> &Out, size_t Start) {
  while ((Out.size() - Start) % 8 != 0)
    Out.push_back(CfaNop);
  put32(Out, Start, uint32_t(Out.size() - Start - 4));
}

} // end anonymous namespace

void EHFrameIndex::add(uint64_t Address, const uint8_t *Data, size_t Size) {
  size_t Pos = 0;
  while (Size - Pos >= 8) {
    uint32_t Len, Id;
    std::memcpy(&Len, Data + Pos, 4);
    if (Len == 0 || Len == 0xffffffffu || Len > Size - Pos - 4)
      return; // terminator, 64-bit record, or truncated
    std::memcpy(&Id, Data + Pos + 4, 4);
    Record R{Address + Pos,
             std::vector<uint8_t>(Data + Pos, Data + Pos + 4 + Len)};
    if (Id == 0)
      CIEs[R.Address] = std::move(R);
    else
      FDEs.push_back(std::move(R));
    Pos += 4 + size_t(Len);
  }
}

bool EHFrameIndex::entryFor(uint64_t Start, uint64_t Size,
                            std::vector<uint8_t> &Out,
                            uint32_t &PcField) const {
  for (const auto &F : FDEs) {
    Reader R(F.Bytes.data(), F.Bytes.data() + F.Bytes.size());
    R.fixed<uint32_t>();
    uint64_t CiePointerAt = F.Address + 4;
    uint32_t CiePointer = R.fixed<uint32_t>();
    auto CI = CIEs.find(CiePointerAt - CiePointer);
    if (!R.Ok || CI == CIEs.end())
      continue;
    CIEInfo C;
    if (!parseCIE(CI->second.Bytes, CI->second.Address, C))
      continue;
    uint64_t PcBegin, PcRange;
    if (!readEncoded(R, C.FdeEncoding, F.Address + uint64_t(R.P - F.Bytes.data()),
                     PcBegin) ||
        PcBegin != Start)
      continue;
    if (!readEncoded(R, C.FdeEncoding & 0x0f, 0, PcRange) || PcRange == 0 ||
        PcRange > Size || PcRange > 0x7fffffff)
      return false;
    if (C.HasAugmentationData)
      R.skip(R.uleb());
    if (!R.Ok || C.ReturnRegister > 255)
      return false;
    const uint8_t *Instructions = R.P;
    const uint8_t *End = F.Bytes.data() + F.Bytes.size();
    if (!movableInstructions(Instructions, End))
      return false;

    Out.clear();
    // the CIE
    Out.resize(8, 0); // length, filled in by padRecord; CIE id 0
    Out.push_back(1); // version
    Out.push_back('z');
    Out.push_back('R');
    if (C.SignalFrame)
      Out.push_back('S');
    Out.push_back(0);
    putUleb(Out, C.CodeAlign);
    putSleb(Out, C.DataAlign);
    Out.push_back(uint8_t(C.ReturnRegister));
    putUleb(Out, 1); // augmentation data: the 'R' encoding
    Out.push_back(PePcrelSdata4);
    Out.insert(Out.end(), C.Instructions, C.End);
    padRecord(Out, 0);
    // the FDE
    size_t FdeStart = Out.size();
    Out.resize(FdeStart + 16, 0);
    put32(Out, FdeStart + 4, uint32_t(FdeStart + 4)); // back to the CIE at 0
    PcField = uint32_t(FdeStart + 8);
    put32(Out, FdeStart + 12, uint32_t(PcRange));
    putUleb(Out, 0); // no augmentation data
    Out.insert(Out.end(), Instructions, End);
    padRecord(Out, FdeStart);
    return Out.size() <= JP_MAX_UNWIND_BYTES;
  }
  return false;
}

} // end namespace jitprof
