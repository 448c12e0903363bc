// A small deterministic random generator: xoshiro256** (Blackman and Vigna), its state filled
// by splitmix64 from a 64-bit seed. Only fixed-width integer arithmetic is used, so a seed
// gives the same stream on every platform, compiler and thread count (the std::
// distributions are implementation-defined and would not).
//
// Thread safety: none; one Rng per sampler.
#pragma once

#include <cstdint>

namespace afm::sample {

class Rng {
 public:
  explicit Rng(uint64_t seed) { reseed(seed); }

  // Restarts the stream: afterwards the outputs equal those of Rng(seed).
  void reseed(uint64_t seed);

  uint64_t next_u64();

  // Uniform in [0, 1): the top 53 bits of next_u64() times 2^-53 (exact in a double).
  double next_double();

 private:
  uint64_t s_[4];
};

}  // namespace afm::sample
