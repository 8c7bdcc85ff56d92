//===- code_arena.h - jitprof's JITLink memory manager ----------*- C++ -*-===//
//
// The process-wide JITLinkMemoryManager that never reuses a code address
// (see code_arena.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef JITPROF_CODE_ARENA_H
#define JITPROF_CODE_ARENA_H

#include "llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h"

namespace jitprof {

llvm::jitlink::JITLinkMemoryManager &codeArena();

} // end namespace jitprof

#endif // JITPROF_CODE_ARENA_H
