// The tool's own memory, apart from the program's heap.
//
// Everything the tool allocates with new lives in memory it maps itself, never in the blocks
// malloc hands the program: a tool object left at the top of the program's heap keeps glibc from
// trimming it, so a program that allocates and frees large arrays every step (LULESH) stops
// giving its pages back and faulting them in again, and runs faster under the tool than without
// it (docs/performance.md, "The tool and the program's heap"). The injected libraries replace
// operator new and delete with these functions (tool_new.cpp; not under sanitizers, whose
// allocators must see every block); both libraries use the one heap of libscalea-omp.so.
#pragma once

#include <cstddef>

namespace scalea::collect {

// A block of at least `size` bytes aligned to `align` (a power of two), or nullptr when the
// kernel refuses memory. Thread-safe and usable before any constructor of the library has run.
void* heap_alloc(std::size_t size, std::size_t align) noexcept;
// Returns a block of heap_alloc; nullptr is ignored.
void heap_free(void* p) noexcept;

}  // namespace scalea::collect
