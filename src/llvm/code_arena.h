//===- code_arena.h - jitprof's JITLink memory manager ----------*- C++ -*-===//
//
// The process-wide JITLinkMemoryManager that gives a code address only to
// functions of the same name (see code_arena.cpp).
//
// Copyright (c) 2026, The jitprof Developers
// Distributed under the PostgreSQL License (the file LICENSE).
//
// IDENTIFICATION
//   src/llvm/code_arena.h
//
//===----------------------------------------------------------------------===//

#ifndef JITPROF_CODE_ARENA_H
#define JITPROF_CODE_ARENA_H

#include "llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h"

#include <string>

namespace jitprof {

llvm::jitlink::JITLinkMemoryManager &codeArena();

// Can the arena take this (unpruned) graph?  If not, Why says why.
bool codeArenaHasRoomFor(llvm::jitlink::LinkGraph &G, std::string &Why);

} // end namespace jitprof

#endif // JITPROF_CODE_ARENA_H
