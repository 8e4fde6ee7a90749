// FlatMap64: the loader's and the merge's (parent, region) -> node map.
#include <gtest/gtest.h>

#include <map>

#include "scalea/drg/flat_map.hpp"

using scalea::drg::FlatMap64;

TEST(FlatMap, EmplaceKeepsTheFirstValueAndFindsIt) {
  FlatMap64 m;
  EXPECT_EQ(m.find(7), nullptr);
  EXPECT_EQ(m.emplace(7, 1), std::make_pair(1u, true));
  EXPECT_EQ(m.emplace(7, 2), std::make_pair(1u, false));
  ASSERT_NE(m.find(7), nullptr);
  EXPECT_EQ(*m.find(7), 1u);
  EXPECT_EQ(m.find(8), nullptr);
  EXPECT_EQ(m.size(), 1u);
}

TEST(FlatMap, GrowsAndAgreesWithStdMap) {
  FlatMap64 m;
  std::map<uint64_t, uint32_t> ref;
  uint64_t x = 88172645463325252ull;
  for (uint32_t i = 0; i < 20000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint64_t key = (x % 3000) << 32 | (x >> 50);  // (parent, region)-like keys, many repeated
    auto [v, inserted] = m.emplace(key, i);
    auto [it, ref_inserted] = ref.emplace(key, i);
    EXPECT_EQ(inserted, ref_inserted);
    EXPECT_EQ(v, it->second);
  }
  EXPECT_EQ(m.size(), ref.size());
  for (const auto& [k, v] : ref) {
    ASSERT_NE(m.find(k), nullptr);
    EXPECT_EQ(*m.find(k), v);
  }
}

TEST(FlatMap, ClearForgetsEverythingIncludingTheAllOnesKey) {
  FlatMap64 m;
  const uint64_t all_ones = ~uint64_t(0);
  EXPECT_TRUE(m.emplace(all_ones, 5).second);
  EXPECT_FALSE(m.emplace(all_ones, 6).second);
  EXPECT_EQ(*m.find(all_ones), 5u);
  for (uint64_t k = 0; k < 1000; ++k) m.emplace(k, uint32_t(k));
  EXPECT_EQ(m.size(), 1001u);
  m.clear();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.find(all_ones), nullptr);
  for (uint64_t k = 0; k < 1000; ++k) EXPECT_EQ(m.find(k), nullptr);
  EXPECT_TRUE(m.emplace(3, 9).second);
  EXPECT_EQ(*m.find(3), 9u);
}
