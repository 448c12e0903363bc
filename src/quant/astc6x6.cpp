// ASTC decoding for 6x6 blocks, written from the ASTC specification (Khronos Data Format
// Specification, "ASTC Compressed Texture Image Formats"): the block mode, weight infill and
// the assembly of a block here; the integer sequence encoding and unquantisation in
// astc_ise.cpp; the colour endpoint modes and f16 conversions in astc_endpoints.cpp. Only
// channel R is produced.
#include "quant/astc6x6.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/half.h"
#include "quant/astc_endpoints.h"
#include "quant/astc_ise.h"

namespace afm::quant::astc {
namespace {

using namespace detail;

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

// ---- one block -----------------------------------------------------------------------------


// Everything of a block but its texels: a constant, or endpoints and raw weight codes.
struct ParsedBlock {
  bool constant = false;
  uint16_t constant_f16 = 0;
  EndpointsR e;
  const BlockMode* mode = nullptr;
  uint8_t codes[64];
};

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

// The block's status, and its parts unless `status_only` (a block's status is settled before
// its integer sequences are decoded: they cannot fail).
BlockStatus parse_block(const uint8_t* block, ParsedBlock& p, bool status_only = false) {
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
  if (status_only) return BlockStatus::kOk;
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

bool full_grid_block(const uint8_t block[kBlockBytes], FullGridBlock* out) {
  ParsedBlock p;
  if (parse_block(block, p) != BlockStatus::kOk || p.constant) return false;
  if (p.mode->grid_x != kTile || p.mode->grid_y != kTile) return false;
  out->e0 = p.e.e0, out->e1 = p.e.e1, out->hdr = p.e.hdr;
  const auto& weights = unquantized().weight[p.mode->range];
  for (int i = 0; i < kTexels; ++i) out->weights[i] = weights[p.codes[i]];
  return true;
}

uint16_t texel_value(int32_t e0, int32_t e1, bool hdr, int weight) {
  EndpointsR e;
  e.e0 = e0, e.e1 = e1, e.hdr = hdr;
  return texel_f16(e, weight);
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
  ParsedBlock scratch;
  for (int64_t t = 0; t < tiles; ++t) {
    const BlockStatus s = parse_block(data + t * kBlockBytes, scratch, true);
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

void decode_matrix(const uint8_t* data, int64_t rows, int64_t cols, const std::string& what,
                   float* out) {
  validate_matrix(data, rows, cols, what);
  decode_rows(data, rows, cols, 0, rows, out);
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
