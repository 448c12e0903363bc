// Bounded integer sequence encoding and value unquantisation of ASTC (astc_ise.h), written
// from the ASTC specification.
#include "quant/astc_ise.h"

#include <algorithm>
#include <cstring>

namespace afm::quant::astc::detail {

// ---- bit access -------------------------------------------------------------------------

Bits128 load_bits(const uint8_t* block) {
  uint64_t lo, hi;
  std::memcpy(&lo, block, 8);
  std::memcpy(&hi, block + 8, 8);
  return Bits128{(static_cast<unsigned __int128>(hi) << 64) | lo};
}

namespace {

uint64_t reverse64(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
  v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
  return __builtin_bswap64(v);
}

}  // namespace

// Weights are stored from bit 127 downwards: bit i of the reversed block is bit 127 - i.
Bits128 reversed(const Bits128& b) {
  const uint64_t lo = static_cast<uint64_t>(b.v), hi = static_cast<uint64_t>(b.v >> 64);
  return Bits128{(static_cast<unsigned __int128>(reverse64(lo)) << 64) | reverse64(hi)};
}

// ---- integer sequence encoding ------------------------------------------------------------

namespace {

// The 21 ranges of the specification, index 0 (2 levels) .. 20 (256 levels).
struct IseRange {
  uint8_t trits, quints, bits;
};
constexpr std::array<IseRange, 21> kRanges{{
    {0, 0, 1}, {1, 0, 0}, {0, 0, 2}, {0, 1, 0}, {1, 0, 1}, {0, 0, 3}, {0, 1, 1},
    {1, 0, 2}, {0, 0, 4}, {0, 1, 2}, {1, 0, 3}, {0, 0, 5}, {0, 1, 3}, {1, 0, 4},
    {0, 0, 6}, {0, 1, 4}, {1, 0, 5}, {0, 0, 7}, {0, 1, 5}, {1, 0, 6}, {0, 0, 8},
}};

constexpr int ise_bits_of(int count, int trits, int quints, int bits) {
  return count * bits + (trits ? (8 * count + 4) / 5 : 0) + (quints ? (7 * count + 2) / 3 : 0);
}

}  // namespace

int ise_bits(int count, int range) {
  const IseRange& r = kRanges[range];
  return ise_bits_of(count, r.trits, r.quints, r.bits);
}


namespace {

// Five trits from the 8 packed bits T (specification, "Integer Sequence Encoding").
std::array<uint8_t, 5> unpack_trits(uint32_t t) {
  uint32_t c, t3, t4;
  if (((t >> 2) & 7) == 7) {
    c = (((t >> 5) & 7) << 2) | (t & 3);
    t4 = 2;
    t3 = 2;
  } else {
    c = t & 0x1F;
    if (((t >> 5) & 3) == 3) {
      t4 = 2;
      t3 = bit(t, 7);
    } else {
      t4 = bit(t, 7);
      t3 = (t >> 5) & 3;
    }
  }
  uint32_t t0, t1, t2;
  if ((c & 3) == 3) {
    t2 = 2;
    t1 = bit(c, 4);
    t0 = (bit(c, 3) << 1) | (bit(c, 2) & ~bit(c, 3) & 1u);
  } else if (((c >> 2) & 3) == 3) {
    t2 = 2;
    t1 = 2;
    t0 = c & 3;
  } else {
    t2 = bit(c, 4);
    t1 = (c >> 2) & 3;
    t0 = (bit(c, 1) << 1) | (bit(c, 0) & ~bit(c, 1) & 1u);
  }
  return {static_cast<uint8_t>(t0), static_cast<uint8_t>(t1), static_cast<uint8_t>(t2),
          static_cast<uint8_t>(t3), static_cast<uint8_t>(t4)};
}

// Three quints from the 7 packed bits Q.
std::array<uint8_t, 3> unpack_quints(uint32_t q) {
  uint32_t q0, q1, q2;
  if (((q >> 1) & 3) == 3 && ((q >> 5) & 3) == 0) {
    q2 = (bit(q, 0) << 2) | ((bit(q, 4) & ~bit(q, 0) & 1u) << 1) | (bit(q, 3) & ~bit(q, 0) & 1u);
    q1 = 4;
    q0 = 4;
  } else {
    uint32_t c;
    if (((q >> 1) & 3) == 3) {
      q2 = 4;
      c = (((q >> 3) & 3) << 3) | ((~(q >> 5) & 3) << 1) | bit(q, 0);
    } else {
      q2 = (q >> 5) & 3;
      c = q & 0x1F;
    }
    if ((c & 7) == 5) {
      q1 = 4;
      q0 = (c >> 3) & 3;
    } else {
      q1 = (c >> 3) & 3;
      q0 = c & 7;
    }
  }
  return {static_cast<uint8_t>(q0), static_cast<uint8_t>(q1), static_cast<uint8_t>(q2)};
}

struct Tables {
  std::array<std::array<uint8_t, 5>, 256> trits;
  std::array<std::array<uint8_t, 3>, 128> quints;
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) trits[i] = unpack_trits(i);
    for (uint32_t i = 0; i < 128; ++i) quints[i] = unpack_quints(i);
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

// The sequence's bits from `pos` on as a 64-bit chunk, with every bit at or past `end` (the
// sequence's end) cleared: a partial last group then reads its absent packed bits as zero, as
// the specification defines.
uint64_t chunk(const Bits128& b, int pos, int end) {
  const uint64_t c = static_cast<uint64_t>(b.v >> pos);
  const int left = end - pos;
  return left >= 64 ? c : c & ((uint64_t{1} << left) - 1);
}

// One group of 5 trit values with M low bits each, the 8 packed bits interleaved after them
// (2, 2, 1, 2, 1): all positions are constants for a given M.
template <int M>
void decode_trit_group(uint64_t c, uint8_t* out, int n) {
  constexpr uint64_t mask = (uint64_t{1} << M) - 1;
  const uint32_t t = static_cast<uint32_t>(((c >> M) & 3) | (((c >> (2 * M + 2)) & 3) << 2) |
                                           (((c >> (3 * M + 4)) & 1) << 4) |
                                           (((c >> (4 * M + 5)) & 3) << 5) |
                                           (((c >> (5 * M + 7)) & 1) << 7));
  const uint32_t low[5] = {static_cast<uint32_t>(c & mask),
                           static_cast<uint32_t>((c >> (M + 2)) & mask),
                           static_cast<uint32_t>((c >> (2 * M + 4)) & mask),
                           static_cast<uint32_t>((c >> (3 * M + 5)) & mask),
                           static_cast<uint32_t>((c >> (4 * M + 7)) & mask)};
  const auto& tr = tables().trits[t];
  if (n == 5) {  // every group but the last: a fixed-length loop the compiler unrolls
    for (int i = 0; i < 5; ++i) out[i] = static_cast<uint8_t>((tr[i] << M) | low[i]);
  } else {
    for (int i = 0; i < n; ++i) out[i] = static_cast<uint8_t>((tr[i] << M) | low[i]);
  }
}

// One group of 3 quint values, packed bits 3, 2, 2.
template <int M>
void decode_quint_group(uint64_t c, uint8_t* out, int n) {
  constexpr uint64_t mask = (uint64_t{1} << M) - 1;
  const uint32_t q = static_cast<uint32_t>(((c >> M) & 7) | (((c >> (2 * M + 3)) & 3) << 3) |
                                           (((c >> (3 * M + 5)) & 3) << 5));
  const uint32_t low[3] = {static_cast<uint32_t>(c & mask),
                           static_cast<uint32_t>((c >> (M + 3)) & mask),
                           static_cast<uint32_t>((c >> (2 * M + 5)) & mask)};
  const auto& qu = tables().quints[q];
  if (n == 3) {
    for (int i = 0; i < 3; ++i) out[i] = static_cast<uint8_t>((qu[i] << M) | low[i]);
  } else {
    for (int i = 0; i < n; ++i) out[i] = static_cast<uint8_t>((qu[i] << M) | low[i]);
  }
}

template <int Trits, int Quints, int M>
void decode_ise_fixed(const Bits128& b, int pos, int count, uint8_t* out) {
  const int end = pos + ise_bits_of(count, Trits, Quints, M);
  if constexpr (Trits) {
    for (int g = 0; g < count; g += 5, pos += 5 * M + 8) {
      decode_trit_group<M>(chunk(b, pos, end), out + g, std::min(5, count - g));
    }
  } else if constexpr (Quints) {
    for (int g = 0; g < count; g += 3, pos += 3 * M + 7) {
      decode_quint_group<M>(chunk(b, pos, end), out + g, std::min(3, count - g));
    }
  } else {
    for (int i = 0; i < count; ++i, pos += M) out[i] = static_cast<uint8_t>(b.get(pos, M));
  }
}

}  // namespace

// Decodes `count` values of `range` starting at bit `pos` of the block (or reversed block).
void decode_ise(const Bits128& b, int pos, int count, int range, uint8_t* out) {
  switch (range) {
    case 0: return decode_ise_fixed<0, 0, 1>(b, pos, count, out);
    case 1: return decode_ise_fixed<1, 0, 0>(b, pos, count, out);
    case 2: return decode_ise_fixed<0, 0, 2>(b, pos, count, out);
    case 3: return decode_ise_fixed<0, 1, 0>(b, pos, count, out);
    case 4: return decode_ise_fixed<1, 0, 1>(b, pos, count, out);
    case 5: return decode_ise_fixed<0, 0, 3>(b, pos, count, out);
    case 6: return decode_ise_fixed<0, 1, 1>(b, pos, count, out);
    case 7: return decode_ise_fixed<1, 0, 2>(b, pos, count, out);
    case 8: return decode_ise_fixed<0, 0, 4>(b, pos, count, out);
    case 9: return decode_ise_fixed<0, 1, 2>(b, pos, count, out);
    case 10: return decode_ise_fixed<1, 0, 3>(b, pos, count, out);
    case 11: return decode_ise_fixed<0, 0, 5>(b, pos, count, out);
    case 12: return decode_ise_fixed<0, 1, 3>(b, pos, count, out);
    case 13: return decode_ise_fixed<1, 0, 4>(b, pos, count, out);
    case 14: return decode_ise_fixed<0, 0, 6>(b, pos, count, out);
    case 15: return decode_ise_fixed<0, 1, 4>(b, pos, count, out);
    case 16: return decode_ise_fixed<1, 0, 5>(b, pos, count, out);
    case 17: return decode_ise_fixed<0, 0, 7>(b, pos, count, out);
    case 18: return decode_ise_fixed<0, 1, 5>(b, pos, count, out);
    case 19: return decode_ise_fixed<1, 0, 6>(b, pos, count, out);
    default: return decode_ise_fixed<0, 0, 8>(b, pos, count, out);
  }
}

// ---- unquantisation ------------------------------------------------------------------------

namespace {

// v's `from` bits repeated to fill `to` bits, most significant first.
uint32_t replicate(uint32_t v, int from, int to) {
  uint32_t out = 0;
  int have = 0;
  while (have < to) {
    out = (out << from) | v;
    have += from;
  }
  return out >> (have - to);
}

// Colour endpoint value of `range` to 0..255.
uint32_t unquantize_color(uint32_t v, int range) {
  const IseRange& r = kRanges[range];
  if (!r.trits && !r.quints) return replicate(v, r.bits, 8);
  const uint32_t low = v & ((1u << r.bits) - 1), digit = v >> r.bits;
  const uint32_t a = (low & 1) ? 0x1FF : 0;
  const uint32_t x = low >> 1;  // the bits above the lowest
  uint32_t b = 0, c = 0;
  if (r.trits) {
    switch (r.bits) {
      case 1: c = 204; break;
      case 2: b = (x << 1) | (x << 2) | (x << 4) | (x << 8), c = 93; break;
      case 3: b = x | (x << 2) | (x << 7), c = 44; break;
      case 4: b = x | (x << 6), c = 22; break;
      case 5: b = (x >> 2) | (x << 5), c = 11; break;
      default: b = (x >> 4) | (x << 4), c = 5; break;
    }
  } else {
    switch (r.bits) {
      case 1: c = 113; break;
      case 2: b = (x << 2) | (x << 3) | (x << 8), c = 54; break;
      case 3: b = (x >> 1) | (x << 1) | (x << 7), c = 26; break;
      case 4: b = (x >> 1) | (x << 6), c = 13; break;
      default: b = (x >> 3) | (x << 5), c = 6; break;
    }
  }
  uint32_t t = digit * c + b;
  t ^= a;
  return ((a & 0x80) | (t >> 2)) & 0xFF;
}

// Weight value of `range` (index <= 11) to 0..64.
uint32_t unquantize_weight(uint32_t v, int range) {
  const IseRange& r = kRanges[range];
  uint32_t t;
  if (!r.trits && !r.quints) {
    t = replicate(v, r.bits, 6);
  } else if (r.bits == 0) {
    static constexpr uint8_t kTrit[3] = {0, 32, 63}, kQuint[5] = {0, 16, 32, 47, 63};
    t = r.trits ? kTrit[v] : kQuint[v];
  } else {
    const uint32_t low = v & ((1u << r.bits) - 1), digit = v >> r.bits;
    const uint32_t a = (low & 1) ? 0x7F : 0, x = low >> 1;
    uint32_t b = 0, c = 0;
    if (r.trits) {
      if (r.bits == 1) c = 50;
      if (r.bits == 2) b = x | (x << 2) | (x << 6), c = 23;
      if (r.bits == 3) b = x | (x << 5), c = 11;
    } else {
      if (r.bits == 1) c = 28;
      if (r.bits == 2) b = (x << 1) | (x << 6), c = 13;
    }
    t = digit * c + b;
    t ^= a;
    t = ((a & 0x20) | (t >> 2)) & 0x3F;
  }
  return t > 32 ? t + 1 : t;
}

}  // namespace

Unquantized::Unquantized() {
  for (int r = 0; r < 12; ++r) {
    for (uint32_t v = 0; v < levels(r); ++v) weight[r][v] = static_cast<uint8_t>(unquantize_weight(v, r));
  }
  for (int r = 0; r < 21; ++r) {
    for (uint32_t v = 0; v < levels(r); ++v) color[r][v] = static_cast<uint8_t>(unquantize_color(v, r));
  }
}

uint32_t Unquantized::levels(int range) {
  const IseRange& q = kRanges[range];
  return (q.trits ? 3u : q.quints ? 5u : 1u) << q.bits;
}

const Unquantized& unquantized() {
  static const Unquantized t;
  return t;
}

}  // namespace afm::quant::astc::detail
