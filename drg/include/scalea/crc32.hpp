// The CRC-32 (IEEE, as zlib's crc32) of the experiment format's payloads, fast where the CPU has
// carry-less multiplication. Shared by the writer in the tool (collect/) and the loader (drg/):
// format.hpp's crc32_update is the portable definition both must agree with, a byte at a time.
#pragma once
#include <cstddef>
#include <cstdint>

#include "scalea/format.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
// glibc's <sys/platform/x86.h> uses C's _Bool, which C++ compilers accept as an extension only
// outside strict ISO mode (clang++ -std=c++17 rejects it).
#if __has_include(<sys/platform/x86.h>) && !defined(__STRICT_ANSI__)
#include <sys/platform/x86.h>
#define SCALEA_HAVE_GLIBC_X86_FEATURES 1
#endif
#define SCALEA_HAVE_PCLMUL_CRC 1
#endif

namespace scalea::format {

#ifdef SCALEA_HAVE_PCLMUL_CRC
namespace crc_detail {
#define SCALEA_PCLMUL __attribute__((target("pclmul,sse4.1")))
SCALEA_PCLMUL inline __m128i load(const char* at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
}
// x (128 bits) times x^(128·k) modulo the polynomial, added to the next 128 bits.
SCALEA_PCLMUL inline __m128i fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}
}  // namespace crc_detail

// CRC-32 of `len` bytes (a multiple of 16, at least 64) by carry-less multiplication: four
// 128-bit lanes fold 64 bytes per step, then one lane, then a Barrett reduction to 32 bits.
// `state` is the bare register (not inverted). The algorithm and constants (powers of x modulo
// the reflected polynomial 0xEDB88320) are those of Intel's "Fast CRC Computation for Generic
// Polynomials Using PCLMULQDQ" as used by Linux (arch/x86/crypto/crc32-pclmul_asm.S).
SCALEA_PCLMUL inline uint32_t crc32_fold_pclmul(uint32_t state, const char* p, size_t len) {
  using crc_detail::fold;
  using crc_detail::load;
  __m128i x1 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(int(state)));
  __m128i x2 = load(p + 16), x3 = load(p + 32), x4 = load(p + 48);
  p += 64;
  len -= 64;
  const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
  for (; len >= 64; p += 64, len -= 64) {
    x1 = fold(x1, k1k2, load(p));
    x2 = fold(x2, k1k2, load(p + 16));
    x3 = fold(x3, k1k2, load(p + 32));
    x4 = fold(x4, k1k2, load(p + 48));
  }
  const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
  x1 = fold(x1, k3k4, x2);
  x1 = fold(x1, k3k4, x3);
  x1 = fold(x1, k3k4, x4);
  for (; len >= 16; p += 16, len -= 16) x1 = fold(x1, k3k4, load(p));
  // 128 -> 64 bits (appending 32 zero bits), then -> 32 bits.
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(k3k4, x1, 0x01));
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 4),
                     _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00));
  const __m128i poly = _mm_set_epi64x(0x1f7011641, 0x1db710641);  // mu, P
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
  return uint32_t(_mm_extract_epi32(_mm_xor_si128(t, x1), 1));
}
#undef SCALEA_PCLMUL

// Whether the CPU multiplies without carry. Asked of the C library where it can say (it read the
// CPU's features once at the process's start): in a virtual machine each CPUID instruction exits
// to the hypervisor, and the compiler's __builtin_cpu_supports runs several at load.
inline bool crc32_pclmul_usable() {
#ifdef SCALEA_HAVE_GLIBC_X86_FEATURES
  return CPU_FEATURE_ACTIVE(PCLMULQDQ) && CPU_FEATURE_ACTIVE(SSE4_1);
#else
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
}
#endif

// Whether crc32_fast multiplies without carry here (asked once per process).
inline bool crc32_fast_available() {
#ifdef SCALEA_HAVE_PCLMUL_CRC
  static const bool pclmul = crc32_pclmul_usable();
  return pclmul;
#else
  return false;
#endif
}

// crc32_update(0, data, size), by carry-less multiplication where the CPU has it (16 bytes a
// step instead of one).
inline uint32_t crc32_fast(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
#ifdef SCALEA_HAVE_PCLMUL_CRC
  if (size >= 64 && crc32_fast_available()) {
    size_t bulk = size & ~size_t(15);
    uint32_t crc = ~crc32_fold_pclmul(~0u, p, bulk);
    return crc32_update(crc, p + bulk, size - bulk);
  }
#endif
  return crc32_update(0, p, size);
}

}  // namespace scalea::format
