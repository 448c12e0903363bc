// Colour endpoint modes of ASTC, channel R only, and the HDR profile's f16 conversions
// (astc_endpoints.h), written from the ASTC specification.
#include "quant/astc_endpoints.h"

#include <algorithm>
#include <utility>

#include "quant/astc_ise.h"  // bit()

namespace afm::quant::astc::detail {
namespace {

// ---- endpoints (channel R) -----------------------------------------------------------------


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

}  // namespace

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

namespace {

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

}  // namespace

// UNORM16 to f16 by truncation, as the specification's LDR-in-HDR path does.
uint16_t unorm16_to_f16(uint32_t p) {
  if (p == 0xFFFF) return 0x3C00;
  if (p < 4) return static_cast<uint16_t>(p << 8);
  const int lz = __builtin_clz(p) - 16;
  uint32_t m = (p << (lz + 1)) & 0xFFFF;
  m >>= 6;
  return static_cast<uint16_t>(m | (static_cast<uint32_t>(14 - lz) << 10));
}

// One texel's f16 from its weight (0..64).
uint16_t texel_f16(const EndpointsR& e, int w) {
  const uint32_t c = static_cast<uint32_t>((e.e0 * (64 - w) + e.e1 * w + 32) >> 6);
  return e.hdr ? lns_to_f16(c) : unorm16_to_f16(c);
}

}  // namespace afm::quant::astc::detail
