// The loader's payload CRC (zlib or carry-less multiplication) and the writers' (crc32_fast)
// equal format.hpp's definition for every length and alignment.
#include <gtest/gtest.h>

#include <vector>

#include "scalea/crc32.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/format.hpp"

TEST(PayloadCrc, EqualsTheFormatsCrcForEveryLengthAndAlignment) {
  std::vector<char> bytes(5000);
  uint64_t x = 88172645463325252ull;
  for (char& c : bytes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = char(x);
  }
  for (size_t offset = 0; offset < 16; offset += 3)
    for (size_t len = 0; len + offset <= bytes.size(); len += len < 300 ? 1 : 97)
      ASSERT_EQ(scalea::drg::payload_crc32(bytes.data() + offset, len),
                scalea::format::crc32_update(0, bytes.data() + offset, len))
          << "offset " << offset << " length " << len;
}

TEST(PayloadCrc, TheWritersCrcEqualsTheFormatsForEveryLengthAndAlignment) {
  std::vector<char> bytes(5000);
  uint64_t x = 2463534242ull;
  for (char& c : bytes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = char(x);
  }
  for (size_t offset = 0; offset < 16; offset += 5)
    for (size_t len = 0; len + offset <= bytes.size(); len += len < 300 ? 1 : 89)
      ASSERT_EQ(scalea::format::crc32_fast(bytes.data() + offset, len),
                scalea::format::crc32_update(0, bytes.data() + offset, len))
          << "offset " << offset << " length " << len;
  EXPECT_EQ(scalea::format::crc32_fast("123456789", 9), 0xCBF43926u);
}

TEST(PayloadCrc, KnownValue) {
  const char text[] = "123456789";  // the CRC-32 check value
  EXPECT_EQ(scalea::drg::payload_crc32(text, 9), 0xCBF43926u);
  std::vector<char> zeros(4096, 0);
  EXPECT_EQ(scalea::drg::payload_crc32(zeros.data(), zeros.size()),
            scalea::format::crc32_update(0, zeros.data(), zeros.size()));
}
