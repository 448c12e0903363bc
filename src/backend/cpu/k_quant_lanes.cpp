// Builds the q4_k / q6_k lanes layout (k_quant_lanes.h) from the file's blocks: plain byte
// moves, once per load, so no instruction set of its own.
#include "backend/cpu/k_quant_lanes.h"

#include <cstring>

#include "quant/k_quants.h"

namespace afm::cpu::k_lanes {
namespace {

// The 256 codes of a q4_k block (quant/k_quants.h), value order.
void q4_k_codes(const quant::BlockQ4_K& b, uint8_t (&codes)[256]) {
  for (int i = 0; i < 256; ++i) codes[i] = (b.qs[32 * (i / 64) + i % 32] >> (4 * ((i / 32) % 2))) & 0x0f;
}

// The 256 codes of a q6_k block, 0..63 (the value is d * scale * (code - 32)).
void q6_k_codes(const quant::BlockQ6_K& b, uint8_t (&codes)[256]) {
  for (int i = 0; i < 256; ++i) {
    const int h = i / 128, j = i % 128;
    const int low = (b.ql[64 * h + j % 64] >> (4 * (j / 64))) & 0x0f;
    const int high = (b.qh[32 * h + j % 32] >> (2 * (j / 32))) & 3;
    codes[i] = static_cast<uint8_t>(low | (high << 4));
  }
}

// The value a word's lane byte i holds in sub-block j, word w: the low nibble's, and (high)
// the high nibble's. Both layouts pair the same values.
int nibble_value(int j, int w, int i, bool high) { return 32 * j + (high ? 16 : 0) + 4 * w + i; }

template <class Block>
const Block& block_of(const uint8_t* w, size_t wrb, int64_t row, int64_t sb) {
  return reinterpret_cast<const Block*>(w + row * wrb)[sb];
}

void put_f16(uint8_t* at, uint16_t h) { std::memcpy(at, &h, 2); }

// One group's super-block sb of q4_k (2,304 bytes at out).
void q4_k_super_block(const uint8_t* w, size_t wrb, int64_t sb, uint8_t* out) {
  uint8_t quantity[16][kRows];  // [scale 0-7, min 0-7][row]
  for (int r = 0; r < kRows; ++r) {
    const auto& b = block_of<quant::BlockQ4_K>(w, wrb, r, sb);
    put_f16(out + kQ4KD + 2 * r, b.d);
    put_f16(out + kQ4KDmin + 2 * r, b.dmin);
    uint8_t scale[8], min[8];
    quant::unpack_scales_6bit(b.scales, scale, min);
    for (int j = 0; j < 8; ++j) {
      quantity[j][r] = scale[j];
      quantity[8 + j][r] = min[j];
    }
    uint8_t codes[256];
    q4_k_codes(b, codes);
    for (int j = 0; j < 8; ++j) {
      for (int wd = 0; wd < 4; ++wd) {
        for (int i = 0; i < 4; ++i) {
          const int low = codes[nibble_value(j, wd, i, false)], high = codes[nibble_value(j, wd, i, true)];
          out[kQ4KCodes + 64 * (4 * j + wd) + 4 * r + i] = static_cast<uint8_t>(low | high << 4);
        }
      }
    }
  }
  // U_g byte 16 i + r = quantity 4 g + i of row r.
  auto u = [&](int g, int byte) { return quantity[4 * g + byte / 16][byte % 16]; };
  uint8_t* scales = out + kQ4KScales;
  for (int byte = 0; byte < 64; ++byte) {
    scales[byte] = static_cast<uint8_t>((u(0, byte) & 15) | (u(1, byte) & 15) << 4);
    scales[64 + byte] = static_cast<uint8_t>((u(2, byte) & 15) | (u(3, byte) & 15) << 4);
    scales[128 + byte] = static_cast<uint8_t>(u(0, byte) >> 4 | (u(1, byte) >> 4) << 2 |
                                              (u(2, byte) >> 4) << 4 | (u(3, byte) >> 4) << 6);
  }
}

// One group's super-block sb of q6_k (3,360 bytes at out).
void q6_k_super_block(const uint8_t* w, size_t wrb, int64_t sb, uint8_t* out) {
  std::memset(out, 0, kQ6KGroupBlock);
  for (int r = 0; r < kRows; ++r) {
    const auto& b = block_of<quant::BlockQ6_K>(w, wrb, r, sb);
    put_f16(out + kQ6KD + 2 * r, b.d);
    for (int g = 0; g < 16; ++g) out[kQ6KScales + 16 * g + r] = static_cast<uint8_t>(b.scales[g]);
    uint8_t codes[256];
    q6_k_codes(b, codes);
    for (int j = 0; j < 8; ++j) {
      uint8_t* sub = out + kQ6KSubBlocks + kQ6KSubBlockBytes * j;
      for (int c = 0; c < 8; ++c) {  // c = 2 w + (high nibble)
        const int wd = c / 2;
        const bool high = c % 2 == 1;
        for (int i = 0; i < 4; ++i) {
          const int code = codes[nibble_value(j, wd, i, high)];
          sub[64 * wd + 4 * r + i] |= static_cast<uint8_t>((code & 15) << (high ? 4 : 0));
          sub[kQ6KHighBits + 64 * (c / 4) + 4 * r + i] |= static_cast<uint8_t>((code >> 4) << (2 * (c % 4)));
        }
      }
    }
  }
}

template <size_t kGroupBlock, void (*SuperBlock)(const uint8_t*, size_t, int64_t, uint8_t*)>
void interleave(const void* w, size_t wrb, int64_t n_rows, int64_t k, void* out) {
  const int64_t nsb = k / 256;
  for (int64_t g = 0; g + kRows <= n_rows; g += kRows) {
    const auto* rows = static_cast<const uint8_t*>(w) + g * wrb;
    uint8_t* group = static_cast<uint8_t*>(out) + g * wrb;
    for (int64_t sb = 0; sb < nsb; ++sb) SuperBlock(rows, wrb, sb, group + sb * kGroupBlock);
  }
}

}  // namespace

void interleave_q4_k(const void* w, size_t wrb, int64_t n_rows, int64_t k, void* out) {
  interleave<kQ4KGroupBlock, q4_k_super_block>(w, wrb, n_rows, k, out);
}

void interleave_q6_k(const void* w, size_t wrb, int64_t n_rows, int64_t k, void* out) {
  interleave<kQ6KGroupBlock, q6_k_super_block>(w, wrb, n_rows, k, out);
}

}  // namespace afm::cpu::k_lanes
