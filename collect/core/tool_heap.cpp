// The tool's heap (tool_heap.hpp): blocks of 16 bytes to 64 KiB in power-of-two size classes,
// carved from 1 MiB chunks the heap maps and never unmaps (the tool's structures live until the
// process ends), kept on a free list per class when returned; larger blocks are mappings of their
// own, unmapped when returned. One lock: the tool allocates when it meets a new region or grows
// a table, not per event.
#include "tool_heap.hpp"

#include <pthread.h>
#include <sys/mman.h>

#include <cstdint>

namespace scalea::collect {
namespace {

constexpr std::size_t kHeader = 16;  // before every block: what heap_free needs
constexpr unsigned kMinShift = 4;    // the smallest class: 16 bytes
constexpr unsigned kClasses = 13;    // 16 B .. 64 KiB
constexpr std::size_t kChunk = std::size_t(1) << 20;
constexpr std::uint32_t kMapped = ~std::uint32_t(0);

struct Header {
  std::uint32_t size_class;  // kMapped: a mapping of its own, `length` bytes
  std::uint32_t offset;      // from the start of the block to the pointer handed out
  std::uint64_t length;
};
static_assert(sizeof(Header) == kHeader);

struct FreeBlock {
  FreeBlock* next;
};

// Zero-initialised and statically initialised: usable before any constructor runs.
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
FreeBlock* g_free[kClasses];
char* g_bump = nullptr;
char* g_bump_end = nullptr;
bool g_fork_handlers = false;

// A thread holding the lock when another forks would leave the child's heap locked forever.
void before_fork() { pthread_mutex_lock(&g_lock); }
void after_fork_parent() { pthread_mutex_unlock(&g_lock); }
void after_fork_child() { pthread_mutex_init(&g_lock, nullptr); }

void* map(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

unsigned class_of(std::size_t bytes) {
  unsigned c = 0;
  while ((std::size_t(1) << (c + kMinShift)) < bytes) ++c;
  return c;
}

// A block of class c, or nullptr. Called with the lock held.
char* take_block(unsigned c) {
  if (FreeBlock* b = g_free[c]) {
    g_free[c] = b->next;
    return reinterpret_cast<char*>(b);
  }
  std::size_t size = std::size_t(1) << (c + kMinShift);
  if (std::size_t(g_bump_end - g_bump) < size) {
    // The rest of the chunk (less than this block) is left unused.
    auto* chunk = static_cast<char*>(map(kChunk));
    if (!chunk) return nullptr;
    g_bump = chunk;
    g_bump_end = chunk + kChunk;
  }
  char* b = g_bump;
  g_bump += size;
  return b;
}

void* hand_out(char* block, std::size_t align, std::uint32_t size_class, std::uint64_t length) {
  auto start = reinterpret_cast<std::uintptr_t>(block) + kHeader;
  auto user = (start + align - 1) & ~(std::uintptr_t(align) - 1);
  auto* h = reinterpret_cast<Header*>(user - kHeader);
  h->size_class = size_class;
  h->offset = std::uint32_t(user - reinterpret_cast<std::uintptr_t>(block));
  h->length = length;
  return reinterpret_cast<void*>(user);
}

}  // namespace

void* heap_alloc(std::size_t size, std::size_t align) noexcept {
  if (align < kHeader) align = kHeader;
  if (size > (std::size_t(1) << 62)) return nullptr;
  std::size_t need = size + kHeader + (align - kHeader);
  if (need > (std::size_t(1) << (kClasses - 1 + kMinShift))) {
    std::size_t length = (need + 4095) & ~std::size_t(4095);
    auto* block = static_cast<char*>(map(length));
    return block ? hand_out(block, align, kMapped, length) : nullptr;
  }
  unsigned c = class_of(need);
  pthread_mutex_lock(&g_lock);
  if (!g_fork_handlers) {
    g_fork_handlers = true;
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  }
  char* block = take_block(c);
  pthread_mutex_unlock(&g_lock);
  return block ? hand_out(block, align, c, 0) : nullptr;
}

void heap_free(void* p) noexcept {
  if (!p) return;
  const auto* h = reinterpret_cast<const Header*>(static_cast<char*>(p) - kHeader);
  char* block = static_cast<char*>(p) - h->offset;
  if (h->size_class == kMapped) {
    munmap(block, h->length);
    return;
  }
  unsigned c = h->size_class;
  pthread_mutex_lock(&g_lock);
  auto* b = reinterpret_cast<FreeBlock*>(block);
  b->next = g_free[c];
  g_free[c] = b;
  pthread_mutex_unlock(&g_lock);
}

}  // namespace scalea::collect
