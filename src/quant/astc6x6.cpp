// ASTC decoding for 6x6 blocks, written from the ASTC specification (Khronos Data Format
// Specification, "ASTC Compressed Texture Image Formats"): block mode, bounded integer sequence
// encoding (trits / quints), colour and weight unquantisation, weight infill, endpoint modes
// and the f16 conversions of the HDR profile. Only channel R is produced.
#include "quant/astc6x6.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/half.h"

namespace afm::quant::astc {
namespace {

// ---- bit access -------------------------------------------------------------------------

// The 128 bits of a block, bit i of the block at bit i of `v`.
struct Bits128 {
  unsigned __int128 v = 0;

  // `count` (<= 32) bits starting at `pos` (< 128); positions at or past 128 read as zero.
  uint32_t get(int pos, int count) const {
    return static_cast<uint32_t>(v >> pos) & ((1u << count) - 1);
  }
};

Bits128 load_bits(const uint8_t* block) {
  uint64_t lo, hi;
  std::memcpy(&lo, block, 8);
  std::memcpy(&hi, block + 8, 8);
  return Bits128{(static_cast<unsigned __int128>(hi) << 64) | lo};
}

uint64_t reverse64(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
  v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
  return __builtin_bswap64(v);
}

// Weights are stored from bit 127 downwards: bit i of the reversed block is bit 127 - i.
Bits128 reversed(const Bits128& b) {
  const uint64_t lo = static_cast<uint64_t>(b.v), hi = static_cast<uint64_t>(b.v >> 64);
  return Bits128{(static_cast<unsigned __int128>(reverse64(lo)) << 64) | reverse64(hi)};
}

// ---- integer sequence encoding ------------------------------------------------------------

// The 21 ranges of the specification, index 0 (2 levels) .. 20 (256 levels).
struct IseRange {
  uint8_t trits, quints, bits;
};
constexpr std::array<IseRange, 21> kRanges{{
    {0, 0, 1}, {1, 0, 0}, {0, 0, 2}, {0, 1, 0}, {1, 0, 1}, {0, 0, 3}, {0, 1, 1},
    {1, 0, 2}, {0, 0, 4}, {0, 1, 2}, {1, 0, 3}, {0, 0, 5}, {0, 1, 3}, {1, 0, 4},
    {0, 0, 6}, {0, 1, 4}, {1, 0, 5}, {0, 0, 7}, {0, 1, 5}, {1, 0, 6}, {0, 0, 8},
}};
constexpr int kQuant6 = 4;  // index of the 6-level range: the fewest colour levels allowed

constexpr int ise_bits_of(int count, int trits, int quints, int bits) {
  return count * bits + (trits ? (8 * count + 4) / 5 : 0) + (quints ? (7 * count + 2) / 3 : 0);
}

int ise_bits(int count, int range) {
  const IseRange& r = kRanges[range];
  return ise_bits_of(count, r.trits, r.quints, r.bits);
}

uint32_t bit(uint32_t v, int i) { return (v >> i) & 1u; }

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

// ---- block mode -----------------------------------------------------------------------------

struct BlockMode {
  bool valid = false;
  bool dual_plane = false;
  uint8_t grid_x = 0, grid_y = 0;  // weight grid columns and rows
  uint8_t range = 0;               // weight range index (0..11)
  uint8_t weight_bits = 0;
  // Colour range index for endpoint-mode class c (2c + 2 values) in the bits the weights
  // leave (one partition, one plane), or -1 when even 2 levels do not fit.
  int8_t color_range[4] = {-1, -1, -1, -1};
};

BlockMode decode_block_mode(uint32_t m) {
  BlockMode out;
  uint32_t base = bit(m, 4);
  uint32_t h = bit(m, 9), d = bit(m, 10);
  const uint32_t a = (m >> 5) & 3;
  uint32_t x, y;
  if ((m & 3) != 0) {
    base |= (m & 3) << 1;
    uint32_t b = (m >> 7) & 3;
    switch ((m >> 2) & 3) {
      case 0: x = b + 4, y = a + 2; break;
      case 1: x = b + 8, y = a + 2; break;
      case 2: x = a + 2, y = b + 8; break;
      default:
        b &= 1;
        if (m & 0x100) {
          x = b + 2, y = a + 2;
        } else {
          x = a + 2, y = b + 6;
        }
        break;
    }
  } else {
    base |= ((m >> 2) & 3) << 1;
    if (((m >> 2) & 3) == 0) return out;  // void extent or reserved
    const uint32_t b = (m >> 9) & 3;
    switch ((m >> 7) & 3) {
      case 0: x = 12, y = a + 2; break;
      case 1: x = a + 2, y = 12; break;
      case 2: x = a + 6, y = b + 6, d = 0, h = 0; break;
      default:
        if (((m >> 5) & 3) >= 2) return out;
        x = ((m >> 5) & 3) == 0 ? 6 : 10;
        y = ((m >> 5) & 3) == 0 ? 10 : 6;
        break;
    }
  }
  const int range = static_cast<int>(base) - 2 + 6 * static_cast<int>(h);
  const int count = static_cast<int>(x * y * (d + 1));
  if (range < 0 || x > kTile || y > kTile || count > 64) return out;
  const int bits = ise_bits(count, range);
  if (bits < 24 || bits > 96) return out;
  out.valid = true;
  out.dual_plane = d != 0;
  out.grid_x = static_cast<uint8_t>(x);
  out.grid_y = static_cast<uint8_t>(y);
  out.range = static_cast<uint8_t>(range);
  out.weight_bits = static_cast<uint8_t>(bits);
  const int color_bits = 111 - bits;
  for (int c = 0; c < 4; ++c) {
    int r = 20;
    while (r >= 0 && ise_bits(2 * c + 2, r) > color_bits) --r;
    out.color_range[c] = static_cast<int8_t>(r);
  }
  return out;
}

const std::array<BlockMode, 2048>& block_modes() {
  static const auto table = [] {
    std::array<BlockMode, 2048> t;
    for (uint32_t m = 0; m < 2048; ++m) t[m] = decode_block_mode(m);
    return t;
  }();
  return table;
}

// ---- weight infill -------------------------------------------------------------------------

// Bilinear infill of a grid_x x grid_y weight grid to the 6x6 texels: texel i takes
// (sum_j grid[index[i][j]] * factor[i][j] + 8) >> 4.
struct Infill {
  std::array<std::array<uint8_t, 4>, kTexels> index{};
  std::array<std::array<uint8_t, 4>, kTexels> factor{};
};

Infill make_infill(int gx, int gy) {
  Infill f;
  const int ds = (1024 + kTile / 2) / (kTile - 1);
  for (int t = 0; t < kTile; ++t) {
    for (int s = 0; s < kTile; ++s) {
      const int cs = ds * s, ct = ds * t;
      const int gs = (cs * (gx - 1) + 32) >> 6, gt = (ct * (gy - 1) + 32) >> 6;
      const int js = gs >> 4, fs = gs & 15, jt = gt >> 4, ft = gt & 15;
      const int v0 = js + jt * gx;
      const int w11 = (fs * ft + 8) >> 4;
      const int w10 = ft - w11, w01 = fs - w11, w00 = 16 - fs - ft + w11;
      const int i = t * kTile + s;
      const int last = gx * gy - 1;
      // A neighbour past the grid's edge always has factor 0; clamp its index.
      const int idx[4] = {v0, std::min(v0 + 1, last), std::min(v0 + gx, last),
                          std::min(v0 + gx + 1, last)};
      const int fac[4] = {w00, w01, w10, w11};
      for (int j = 0; j < 4; ++j) {
        f.index[i][j] = static_cast<uint8_t>(idx[j]);
        f.factor[i][j] = static_cast<uint8_t>(fac[j]);
      }
    }
  }
  return f;
}

const Infill& infill(int gx, int gy) {
  static const auto table = [] {
    std::array<Infill, 49> t;
    for (int y = 2; y <= kTile; ++y) {
      for (int x = 2; x <= kTile; ++x) t[y * 7 + x] = make_infill(x, y);
    }
    return t;
  }();
  return table[gy * 7 + gx];
}

// ---- endpoints (channel R) -----------------------------------------------------------------

struct EndpointsR {
  int32_t e0 = 0, e1 = 0;  // 16-bit: LNS when hdr, UNORM16 otherwise
  bool hdr = false;
};

// Blue contraction's inverse, for channel R: (r + b) / 2.
int uncontract(int r, int b) { return (r + b) >> 1; }

// LDR RGB direct (modes 8 and 12): R of both endpoints.
void ldr_rgb_direct(const uint32_t* v, int& r0, int& r1) {
  const int s0 = static_cast<int>(v[0] + v[2] + v[4]), s1 = static_cast<int>(v[1] + v[3] + v[5]);
  if (s1 >= s0) {
    r0 = static_cast<int>(v[0]), r1 = static_cast<int>(v[1]);
  } else {  // blue contraction, endpoints swapped
    r0 = uncontract(static_cast<int>(v[1]), static_cast<int>(v[5]));
    r1 = uncontract(static_cast<int>(v[0]), static_cast<int>(v[4]));
  }
}

// bit_transfer_signed of the specification: a gets b's top bit, b becomes a signed 6-bit delta.
void transfer(int& a, int& b) {
  a = (a >> 1) | (b & 0x80);
  b = (b >> 1) & 0x3F;
  if (b & 0x20) b -= 0x40;
}

// LDR RGB base + offset (modes 9 and 13).
void ldr_rgb_delta(const uint32_t* v, int& r0, int& r1) {
  int base[3], delta[3];
  for (int c = 0; c < 3; ++c) {
    base[c] = static_cast<int>(v[2 * c]);
    delta[c] = static_cast<int>(v[2 * c + 1]);
    transfer(base[c], delta[c]);
  }
  const int sum = delta[0] + delta[1] + delta[2];
  int a_r = base[0], b_r = base[0] + delta[0];
  if (sum < 0) {  // blue contraction, endpoints swapped
    const int a_b = base[2], b_b = base[2] + delta[2];
    a_r = uncontract(b_r, b_b);
    b_r = uncontract(base[0], a_b);
  }
  r0 = std::clamp(a_r, 0, 255);
  r1 = std::clamp(b_r, 0, 255);
}

// HDR RGB base + scale (mode 7): R of both endpoints, 12-bit.
void hdr_rgb_scale(const uint32_t* v, int& r0, int& r1) {
  const uint32_t v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
  const uint32_t modeval = ((v0 & 0xC0) >> 6) | (bit(v1, 7) << 2) | (bit(v2, 7) << 3);
  uint32_t majcomp, mode;
  if ((modeval & 0xC) != 0xC) {
    majcomp = modeval >> 2, mode = modeval & 3;
  } else if (modeval != 0xF) {
    majcomp = modeval & 3, mode = 4;
  } else {
    majcomp = 0, mode = 5;
  }
  int red = static_cast<int>(v0 & 0x3F), green = static_cast<int>(v1 & 0x1F);
  int blue = static_cast<int>(v2 & 0x1F), scale = static_cast<int>(v3 & 0x1F);
  const int x0 = bit(v1, 6), x1 = bit(v1, 5), x2 = bit(v2, 6), x3 = bit(v2, 5);
  const int x4 = bit(v3, 7), x5 = bit(v3, 6), x6 = bit(v3, 5);
  const uint32_t oh = 1u << mode;
  if (oh & 0x30) green |= x0 << 6;
  if (oh & 0x3A) green |= x1 << 5;
  if (oh & 0x30) blue |= x2 << 6;
  if (oh & 0x3A) blue |= x3 << 5;
  if (oh & 0x3D) scale |= x6 << 5;
  if (oh & 0x2D) scale |= x5 << 6;
  if (oh & 0x04) scale |= x4 << 7;
  if (oh & 0x3B) red |= x4 << 6;
  if (oh & 0x04) red |= x3 << 6;
  if (oh & 0x10) red |= x5 << 7;
  if (oh & 0x0F) red |= x2 << 7;
  if (oh & 0x05) red |= x1 << 8;
  if (oh & 0x0A) red |= x0 << 8;
  if (oh & 0x05) red |= x0 << 9;
  if (oh & 0x02) red |= x6 << 9;
  if (oh & 0x01) red |= x3 << 10;
  if (oh & 0x02) red |= x5 << 10;
  static constexpr int kShift[6] = {1, 1, 2, 3, 4, 5};
  const int sh = kShift[mode];
  red <<= sh, green <<= sh, blue <<= sh, scale <<= sh;
  if (mode != 5) green = red - green, blue = red - blue;
  if (majcomp == 1) std::swap(red, green);
  if (majcomp == 2) std::swap(red, blue);
  r1 = std::max(red, 0);
  r0 = std::max(red - scale, 0);
}

// HDR RGB direct (modes 11, 14, 15): R of both endpoints, 12-bit.
void hdr_rgb_direct(const uint32_t* v, int& r0, int& r1) {
  const uint32_t v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3], v4 = v[4], v5 = v[5];
  const uint32_t modeval = bit(v1, 7) | (bit(v2, 7) << 1) | (bit(v3, 7) << 2);
  const uint32_t majcomp = bit(v4, 7) | (bit(v5, 7) << 1);
  if (majcomp == 3) {  // direct 8-bit values
    r0 = static_cast<int>(v0 << 4);
    r1 = static_cast<int>(v1 << 4);
    return;
  }
  int a = static_cast<int>(v0 | ((v1 & 0x40) << 2));
  int b0 = static_cast<int>(v2 & 0x3F), b1 = static_cast<int>(v3 & 0x3F);
  int c = static_cast<int>(v1 & 0x3F);
  int d0 = static_cast<int>(v4 & 0x7F), d1 = static_cast<int>(v5 & 0x7F);
  static constexpr int kDBits[8] = {7, 6, 7, 6, 5, 6, 5, 6};
  const int dbits = kDBits[modeval];
  const int x0 = bit(v2, 6), x1 = bit(v3, 6), x2 = bit(v4, 6), x3 = bit(v5, 6);
  const int x4 = bit(v4, 5), x5 = bit(v5, 5);
  const uint32_t oh = 1u << modeval;
  if (oh & 0xA4) a |= x0 << 9;
  if (oh & 0x8) a |= x2 << 9;
  if (oh & 0x50) a |= x4 << 9;
  if (oh & 0x50) a |= x5 << 10;
  if (oh & 0xA0) a |= x1 << 10;
  if (oh & 0xC0) a |= x2 << 11;
  if (oh & 0x4) c |= x1 << 6;
  if (oh & 0xE8) c |= x3 << 6;
  if (oh & 0x20) c |= x2 << 7;
  if (oh & 0x5B) b0 |= x0 << 6, b1 |= x1 << 6;
  if (oh & 0x12) b0 |= x2 << 7, b1 |= x3 << 7;
  if (oh & 0xAF) d0 |= x4 << 5, d1 |= x5 << 5;
  if (oh & 0x5) d0 |= x2 << 6, d1 |= x3 << 6;
  // Sign-extend the dbits-bit offsets.
  d0 = static_cast<int>(static_cast<uint32_t>(d0) << (32 - dbits)) >> (32 - dbits);
  d1 = static_cast<int>(static_cast<uint32_t>(d1) << (32 - dbits)) >> (32 - dbits);
  const int sh = static_cast<int>((modeval >> 1) ^ 3);
  auto lsh = [sh](int x) { return static_cast<int>(static_cast<uint32_t>(x) << sh); };
  a = lsh(a), b0 = lsh(b0), b1 = lsh(b1), c = lsh(c), d0 = lsh(d0), d1 = lsh(d1);
  int red1 = a, green1 = a - b0, blue1 = a - b1;
  int red0 = a - c, green0 = a - b0 - c - d0, blue0 = a - b1 - c - d1;
  if (majcomp == 1) red0 = green0, red1 = green1;
  if (majcomp == 2) red0 = blue0, red1 = blue1;
  r0 = std::clamp(red0, 0, 4095);
  r1 = std::clamp(red1, 0, 4095);
}

EndpointsR endpoints_r(int cem, const uint32_t* v) {
  EndpointsR e;
  int r0 = 0, r1 = 0;
  switch (cem) {
    case 0:   // luminance direct
    case 4:   // luminance + alpha direct
      r0 = static_cast<int>(v[0]), r1 = static_cast<int>(v[1]);
      break;
    case 1: {  // luminance base + offset
      r0 = static_cast<int>((v[0] >> 2) | (v[1] & 0xC0));
      r1 = std::min(r0 + static_cast<int>(v[1] & 0x3F), 255);
      break;
    }
    case 5: {  // luminance + alpha base + offset
      int l0 = static_cast<int>(v[0]), l1 = static_cast<int>(v[1]);
      l0 |= (l1 & 0x80) << 1;
      l1 &= 0x7F;
      if (l1 & 0x40) l1 -= 0x80;
      l0 >>= 1, l1 >>= 1;
      r0 = l0, r1 = std::clamp(l1 + l0, 0, 255);
      break;
    }
    case 6:   // RGB base + scale
    case 10:  // RGB base + scale + two alphas
      r1 = static_cast<int>(v[0]);
      r0 = static_cast<int>((v[0] * v[3]) >> 8);
      break;
    case 8:
    case 12:
      ldr_rgb_direct(v, r0, r1);
      break;
    case 9:
    case 13:
      ldr_rgb_delta(v, r0, r1);
      break;
    case 2: {  // HDR luminance, large range
      if (v[1] >= v[0]) {
        r0 = static_cast<int>(v[0] << 4), r1 = static_cast<int>(v[1] << 4);
      } else {
        r0 = static_cast<int>((v[1] << 4) + 8), r1 = static_cast<int>((v[0] << 4) - 8);
      }
      e.hdr = true;
      break;
    }
    case 3: {  // HDR luminance, small range
      if (v[0] & 0x80) {
        r0 = static_cast<int>(((v[1] & 0xE0) << 4) | ((v[0] & 0x7F) << 2));
        r1 = static_cast<int>((v[1] & 0x1F) << 2);
      } else {
        r0 = static_cast<int>(((v[1] & 0xF0) << 4) | ((v[0] & 0x7F) << 1));
        r1 = static_cast<int>((v[1] & 0xF) << 1);
      }
      r1 = std::min(r1 + r0, 0xFFF);
      e.hdr = true;
      break;
    }
    case 7:
      hdr_rgb_scale(v, r0, r1);
      e.hdr = true;
      break;
    default:  // 11, 14, 15
      hdr_rgb_direct(v, r0, r1);
      e.hdr = true;
      break;
  }
  // LDR endpoints widen to UNORM16 (x 257); HDR ones are 12-bit LNS values, shifted to 16.
  e.e0 = e.hdr ? r0 << 4 : r0 * 257;
  e.e1 = e.hdr ? r1 << 4 : r1 * 257;
  return e;
}

// ---- f16 conversions of the HDR profile ----------------------------------------------------

uint16_t lns_to_f16(uint32_t p) {
  const uint32_t mc = p & 0x7FF, ec = p >> 11;
  uint32_t mt;
  if (mc < 512) {
    mt = 3 * mc;
  } else if (mc < 1536) {
    mt = 4 * mc - 512;
  } else {
    mt = 5 * mc - 2048;
  }
  const uint32_t res = (ec << 10) | (mt >> 3);
  return static_cast<uint16_t>(std::min<uint32_t>(res, 0x7BFF));
}

// UNORM16 to f16 by truncation, as the specification's LDR-in-HDR path does.
uint16_t unorm16_to_f16(uint32_t p) {
  if (p == 0xFFFF) return 0x3C00;
  if (p < 4) return static_cast<uint16_t>(p << 8);
  const int lz = __builtin_clz(p) - 16;
  uint32_t m = (p << (lz + 1)) & 0xFFFF;
  m >>= 6;
  return static_cast<uint16_t>(m | (static_cast<uint32_t>(14 - lz) << 10));
}

// ---- one block -----------------------------------------------------------------------------


// Everything of a block but its texels: a constant, or endpoints and raw weight codes.
struct ParsedBlock {
  bool constant = false;
  uint16_t constant_f16 = 0;
  EndpointsR e;
  const BlockMode* mode = nullptr;
  uint8_t codes[64];
};

// Weight codes to 0..64 and colour codes to 0..255, per range, computed once.
struct Unquantized {
  std::array<std::array<uint8_t, 32>, 12> weight{};
  std::array<std::array<uint8_t, 256>, 21> color{};
  Unquantized() {
    for (int r = 0; r < 12; ++r) {
      for (uint32_t v = 0; v < levels(r); ++v) weight[r][v] = static_cast<uint8_t>(unquantize_weight(v, r));
    }
    for (int r = 0; r < 21; ++r) {
      for (uint32_t v = 0; v < levels(r); ++v) color[r][v] = static_cast<uint8_t>(unquantize_color(v, r));
    }
  }
  static uint32_t levels(int range) {
    const IseRange& q = kRanges[range];
    return (q.trits ? 3u : q.quints ? 5u : 1u) << q.bits;
  }
};
const Unquantized& unquantized() {
  static const Unquantized t;
  return t;
}

BlockStatus parse_void_extent(const Bits128& b, ParsedBlock& p) {
  if (b.get(10, 2) != 3) return BlockStatus::kInvalid;
  const uint32_t low_s = b.get(12, 13), high_s = b.get(25, 13);
  const uint32_t low_t = b.get(38, 13), high_t = b.get(51, 13);
  const bool all_ones = low_s == 0x1FFF && high_s == 0x1FFF && low_t == 0x1FFF && high_t == 0x1FFF;
  if ((low_s >= high_s || low_t >= high_t) && !all_ones) return BlockStatus::kInvalid;
  const uint32_t r = b.get(64, 16);
  p.constant = true;
  p.constant_f16 = b.get(9, 1) ? static_cast<uint16_t>(r) : unorm16_to_f16(r);
  return BlockStatus::kOk;
}

BlockStatus parse_block(const uint8_t* block, ParsedBlock& p) {
  const Bits128 b = load_bits(block);
  const uint32_t mode_bits = b.get(0, 11);
  if ((mode_bits & 0x1FF) == 0x1FC) return parse_void_extent(b, p);
  const BlockMode& mode = block_modes()[mode_bits];
  if (!mode.valid) return BlockStatus::kInvalid;
  if (b.get(11, 2) != 0) return BlockStatus::kPartitioned;
  if (mode.dual_plane) return BlockStatus::kDualPlane;

  const int cem = static_cast<int>(b.get(13, 4));
  const int range = mode.color_range[cem >> 2];
  if (range < kQuant6) return BlockStatus::kInvalid;
  const int n_values = 2 * ((cem >> 2) + 1);
  uint8_t raw[8];
  decode_ise(b, 17, n_values, range, raw);
  uint32_t v[8];
  for (int i = 0; i < n_values; ++i) v[i] = unquantized().color[range][raw[i]];
  p.e = endpoints_r(cem, v);
  p.mode = &mode;
  decode_ise(reversed(b), 0, mode.grid_x * mode.grid_y, mode.range, p.codes);
  return BlockStatus::kOk;
}

// One texel's f16 from its weight (0..64).
uint16_t texel_f16(const EndpointsR& e, int w) {
  const uint32_t c = static_cast<uint32_t>((e.e0 * (64 - w) + e.e1 * w + 32) >> 6);
  return e.hdr ? lns_to_f16(c) : unorm16_to_f16(c);
}

// The 36 texels of a parsed block through convert (f16 bits -> T). A full 6x6 weight grid
// (the usual case) needs no infill, so each code maps to one value: a palette per block.
template <class T, class Convert>
void emit_texels(const ParsedBlock& p, T* out, Convert convert) {
  if (p.constant) {
    const T v = convert(p.constant_f16);
    for (int i = 0; i < kTexels; ++i) out[i] = v;
    return;
  }
  const BlockMode& mode = *p.mode;
  const auto& weights = unquantized().weight[mode.range];
  if (mode.grid_x == kTile && mode.grid_y == kTile) {
    T palette[32];
    const uint32_t n = Unquantized::levels(mode.range);
    for (uint32_t l = 0; l < n; ++l) palette[l] = convert(texel_f16(p.e, weights[l]));
    for (int i = 0; i < kTexels; ++i) out[i] = palette[p.codes[i]];
    return;
  }
  uint8_t grid[64];
  for (int i = 0; i < mode.grid_x * mode.grid_y; ++i) grid[i] = weights[p.codes[i]];
  const Infill& fill = infill(mode.grid_x, mode.grid_y);
  for (int i = 0; i < kTexels; ++i) {
    const auto& ix = fill.index[i];
    const auto& f = fill.factor[i];
    const int w = (grid[ix[0]] * f[0] + grid[ix[1]] * f[1] + grid[ix[2]] * f[2] +
                   grid[ix[3]] * f[3] + 8) >> 4;
    out[i] = convert(texel_f16(p.e, w));
  }
}

}  // namespace

std::string_view block_status_text(BlockStatus status) {
  switch (status) {
    case BlockStatus::kOk: return "ok";
    case BlockStatus::kInvalid: return "an ASTC error block";
    case BlockStatus::kPartitioned:
      return "a block with 2-4 partitions, which afm's ASTC decoder does not handle";
    case BlockStatus::kDualPlane:
      return "a block with two weight planes, which afm's ASTC decoder does not handle";
  }
  return "unknown";
}

BlockStatus decode_block_f16(const uint8_t block[kBlockBytes], uint16_t out[kTexels]) {
  ParsedBlock p;
  const BlockStatus s = parse_block(block, p);
  if (s == BlockStatus::kOk) emit_texels(p, out, [](uint16_t h) { return h; });
  return s;
}

BlockStatus decode_block(const uint8_t block[kBlockBytes], float out[kTexels]) {
  ParsedBlock p;
  const BlockStatus s = parse_block(block, p);
  if (s == BlockStatus::kOk) emit_texels(p, out, f16_to_f32);
  return s;
}

TileGrid tile_grid(int64_t rows, int64_t cols) {
  TileGrid g;
  g.tile_rows = (rows + kTile - 1) / kTile;
  g.tile_cols = (cols + kTile - 1) / kTile;
  const size_t tiles = static_cast<size_t>(g.tile_rows * g.tile_cols);
  g.offsets_at = tiles * kBlockBytes;
  g.bytes = tiles * kTileBytes;
  return g;
}

void validate_matrix(const uint8_t* data, int64_t rows, int64_t cols, const std::string& what) {
  const TileGrid g = tile_grid(rows, cols);
  const int64_t tiles = g.tile_rows * g.tile_cols;
  uint16_t scratch[kTexels];
  for (int64_t t = 0; t < tiles; ++t) {
    const BlockStatus s = decode_block_f16(data + t * kBlockBytes, scratch);
    uint16_t offset;
    std::memcpy(&offset, data + g.offsets_at + t * 2, 2);
    const bool finite = (offset & 0x7C00) != 0x7C00;
    if (s != BlockStatus::kOk || !finite) {
      throw_error(ErrorCode::kFormat,
                  what + ": tile (" + std::to_string(t / g.tile_cols) + ", " +
                      std::to_string(t % g.tile_cols) + ") is " +
                      (s != BlockStatus::kOk ? std::string(block_status_text(s))
                                             : std::string("offset by a non-finite number")));
    }
  }
}

void decode_rows(const uint8_t* data, int64_t rows, int64_t cols, int64_t row_begin,
                 int64_t row_end, float* out) {
  const TileGrid g = tile_grid(rows, cols);
  float tile[kTexels];
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    for (int64_t tc = 0; tc < g.tile_cols; ++tc) {
      const int64_t t = tr * g.tile_cols + tc;
      AFM_CHECK(decode_block(data + t * kBlockBytes, tile) == BlockStatus::kOk);
      uint16_t offset_bits;
      std::memcpy(&offset_bits, data + g.offsets_at + t * 2, 2);
      const float offset = f16_to_f32(offset_bits);
      for (int y = 0; y < kTile; ++y) {
        const int64_t r = tr * kTile + y;
        if (r < row_begin || r >= row_end) continue;
        for (int x = 0; x < kTile && tc * kTile + x < cols; ++x) {
          out[(r - row_begin) * cols + tc * kTile + x] = tile[y * kTile + x] + offset;
        }
      }
    }
  }
}

}  // namespace afm::quant::astc
