// A small deterministic random generator (xoshiro256**, seeded through splitmix64): the same
// seed gives the same stream on every platform, compiler and thread count, unlike the
// implementation-defined std:: distributions.
#pragma once

#include <cstdint>

namespace afm::sample {

class Rng {
 public:
  explicit Rng(uint64_t seed) { reseed(seed); }
  void reseed(uint64_t seed);
  uint64_t next_u64();
  double next_double();  // uniform in [0, 1), 53 random bits

 private:
  uint64_t s_[4];
};

}  // namespace afm::sample
