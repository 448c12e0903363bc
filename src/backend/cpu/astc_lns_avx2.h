// ASTC's HDR mapping of interpolated 16-bit LNS values to f16 bits, sixteen 16-bit lanes at a
// time, for the CPU backend's files compiled with AVX2: the exponent field kept, the mantissa m
// mapped to 3m, 4m - 512 or 5m - 2048 by range (3m + (m - 512)+ + (m - 1536)+ with saturating
// subtractions), the result clamped below infinity, as lns_to_f16 (quant/astc_endpoints.cpp).
#pragma once

#if defined(__AVX2__)
#include <immintrin.h>

namespace afm::cpu {

inline __m256i astc_lns_to_f16(__m256i c) {
  const __m256i mc = _mm256_and_si256(c, _mm256_set1_epi16(0x7FF));
  const __m256i exponent = _mm256_and_si256(_mm256_srli_epi16(c, 1), _mm256_set1_epi16(0x7C00));
  __m256i mt = _mm256_add_epi16(mc, _mm256_add_epi16(mc, mc));
  mt = _mm256_add_epi16(mt, _mm256_subs_epu16(mc, _mm256_set1_epi16(512)));
  mt = _mm256_add_epi16(mt, _mm256_subs_epu16(mc, _mm256_set1_epi16(1536)));
  return _mm256_min_epu16(_mm256_or_si256(exponent, _mm256_srli_epi16(mt, 3)), _mm256_set1_epi16(0x7BFF));
}

}  // namespace afm::cpu

#endif
