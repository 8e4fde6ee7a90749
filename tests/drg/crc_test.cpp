// The loader's payload CRC (zlib or carry-less multiplication) and the writers' (crc32_fast)
// equal format.hpp's definition for every length and alignment.
#include <gtest/gtest.h>

#include <vector>

#include "scalea/crc32.hpp"
#include "scalea/drg/experiment.hpp"
#include "scalea/format.hpp"

namespace {
// `crc` against format.hpp's crc32_update over pseudo-random bytes, for every length up to 300
// and then every 97th, at offsets 0, 3, 6, ... 15 (both carry-less paths need 64 bytes and
// handle the tail a byte at a time).
template <class Crc>
void expect_the_formats_crc(Crc crc) {
  std::vector<char> bytes(5000);
  uint64_t x = 88172645463325252ull;
  for (char& c : bytes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = char(x);
  }
  for (size_t offset = 0; offset < 16; offset += 3)
    for (size_t len = 0; len + offset <= bytes.size(); len += len < 300 ? 1 : 97)
      ASSERT_EQ(crc(bytes.data() + offset, len),
                scalea::format::crc32_update(0, bytes.data() + offset, len))
          << "offset " << offset << " length " << len;
}
}  // namespace

TEST(PayloadCrc, EqualsTheFormatsCrcForEveryLengthAndAlignment) {
  expect_the_formats_crc(
      [](const char* p, size_t n) { return scalea::drg::payload_crc32(p, n); });
}

TEST(PayloadCrc, TheWritersCrcEqualsTheFormatsForEveryLengthAndAlignment) {
  expect_the_formats_crc(
      [](const char* p, size_t n) { return scalea::format::crc32_fast(p, n); });
  EXPECT_EQ(scalea::format::crc32_fast("123456789", 9), 0xCBF43926u);
}

TEST(PayloadCrc, KnownValue) {
  const char text[] = "123456789";  // the CRC-32 check value
  EXPECT_EQ(scalea::drg::payload_crc32(text, 9), 0xCBF43926u);
  std::vector<char> zeros(4096, 0);
  EXPECT_EQ(scalea::drg::payload_crc32(zeros.data(), zeros.size()),
            scalea::format::crc32_update(0, zeros.data(), zeros.size()));
}
