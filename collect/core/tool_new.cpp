// operator new and delete of an injected library, on the tool's heap (tool_heap.hpp says why).
// Linked into libscalea-omp.so and libscalea-mpi.so, and kept local to each (a version script,
// --exclude-libs): the program's own new and delete stay the C++ library's.
#include <new>

#include "tool_heap.hpp"

namespace {

using scalea::collect::heap_alloc;
using scalea::collect::heap_free;

void* allocate(std::size_t size, std::size_t align) {
  if (void* p = heap_alloc(size, align)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t n) { return allocate(n, 0); }
void* operator new[](std::size_t n) { return allocate(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate(n, std::size_t(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate(n, std::size_t(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return heap_alloc(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return heap_alloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return heap_alloc(n, std::size_t(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return heap_alloc(n, std::size_t(a));
}

void operator delete(void* p) noexcept { heap_free(p); }
void operator delete[](void* p) noexcept { heap_free(p); }
void operator delete(void* p, std::size_t) noexcept { heap_free(p); }
void operator delete[](void* p, std::size_t) noexcept { heap_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { heap_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { heap_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { heap_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { heap_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { heap_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { heap_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { heap_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { heap_free(p); }
