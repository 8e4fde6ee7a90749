// The tool's heap (collect/core/tool_heap.hpp): blocks are aligned as asked, do not overlap,
// are reused once returned, large blocks are mappings of their own, and threads can allocate
// and return blocks at once.
#include "core/tool_heap.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

using scalea::collect::heap_alloc;
using scalea::collect::heap_free;

namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

TEST(ToolHeap, AlignedBlocksThatDoNotOverlap) {
  std::vector<std::pair<char*, std::size_t>> blocks;
  for (std::size_t size : {1, 15, 16, 17, 100, 4096, 65519, 65536, 70000, 1 << 20})
    for (std::size_t align : {0, 8, 16, 64, 4096}) {
      auto* p = static_cast<char*>(heap_alloc(size, align));
      ASSERT_NE(p, nullptr) << size << " bytes";
      EXPECT_EQ(address(p) % std::max<std::size_t>(align, 16), 0u) << size << " bytes aligned to " << align;
      std::memset(p, 0xab, size);  // the whole block is writable
      blocks.emplace_back(p, size);
    }
  std::sort(blocks.begin(), blocks.end());
  for (std::size_t i = 1; i < blocks.size(); ++i)
    EXPECT_LE(address(blocks[i - 1].first) + blocks[i - 1].second, address(blocks[i].first));
  for (auto& b : blocks) heap_free(b.first);
}

TEST(ToolHeap, ReturnedBlocksAreReused) {
  void* a = heap_alloc(200, 0);
  heap_free(a);
  void* b = heap_alloc(200, 0);  // the same class: the block just returned
  EXPECT_EQ(a, b);
  heap_free(b);
  heap_free(nullptr);
}

TEST(ToolHeap, ThreadsAllocateAndReturnAtOnce) {
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &bad] {
      std::vector<unsigned char*> mine;
      for (int i = 0; i < 20000; ++i) {
        std::size_t size = 16 + std::size_t((i * 37 + t) % 3000);
        auto* p = static_cast<unsigned char*>(heap_alloc(size, 0));
        std::memset(p, t + 1, size);
        mine.push_back(p);
        if (i % 3 == 2) {  // return some while others are taken
          unsigned char* q = mine[mine.size() / 2];
          mine.erase(mine.begin() + long(mine.size() / 2));
          heap_free(q);
        }
      }
      for (unsigned char* p : mine) {
        if (p[0] != t + 1) ++bad[size_t(t)];  // another thread wrote into this block
        heap_free(p);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
}
