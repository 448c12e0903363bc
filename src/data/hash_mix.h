// Stateless 64-bit mixing (the splitmix64 finalizer) for reproducible per-item choices.
//
// Contract: pure integer arithmetic, so results are identical on every platform and for any
// thread count. The train/validation split of `afm data shards` and the per-document seeds of
// `afm data synth` are defined by these functions: changing them changes every dataset that
// was made from a given seed (docs/data.md).
#pragma once

#include <cstdint>

namespace afm::data {

constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A hash of the pair (seed, index).
constexpr uint64_t mix64(uint64_t seed, uint64_t index) { return mix64(mix64(seed) ^ index); }

// Uniform in [0, 1): the top 53 bits of h times 2^-53 (exact in a double).
constexpr double unit_interval(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

}  // namespace afm::data
