// Bit access, the bounded integer sequence encoding (trits, quints, bits) and the
// unquantisation of colour and weight values of ASTC blocks, written from the ASTC
// specification; the pieces astc6x6.cpp assembles into a block decoder.
#pragma once

#include <array>
#include <cstdint>

namespace afm::quant::astc::detail {

// The 128 bits of a block, bit i of the block at bit i of `v`.
struct Bits128 {
  unsigned __int128 v = 0;

  // `count` (<= 32) bits starting at `pos` (< 128); positions at or past 128 read as zero.
  uint32_t get(int pos, int count) const {
    return static_cast<uint32_t>(v >> pos) & ((1u << count) - 1);
  }
};

Bits128 load_bits(const uint8_t* block);
// Weights are stored from bit 127 downwards: bit i of the reversed block is bit 127 - i.
Bits128 reversed(const Bits128& b);

inline uint32_t bit(uint32_t v, int i) { return (v >> i) & 1u; }

// Ranges are the specification's 21, index 0 (2 levels) .. 20 (256 levels); weights use 0..11.
inline constexpr int kQuant6 = 4;  // the 6-level range: the fewest colour levels allowed

// Bits of `count` values of `range`.
int ise_bits(int count, int range);
// Decodes `count` values of `range` starting at bit `pos`; packed trit / quint bits of values
// past the end read as zero, as the specification defines.
void decode_ise(const Bits128& b, int pos, int count, int range, uint8_t* out);

// Weight codes to 0..64 and colour codes to 0..255, per range, computed once.
struct Unquantized {
  std::array<std::array<uint8_t, 32>, 12> weight{};
  std::array<std::array<uint8_t, 256>, 21> color{};
  Unquantized();
  static uint32_t levels(int range);
};
const Unquantized& unquantized();

}  // namespace afm::quant::astc::detail
