#include "backend/cpu/gemm_astc.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "backend/cpu/gemm_astc_lanes.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "base/half.h"
#include "quant/astc6x6.h"
#include "quant/astc_lanes.h"

namespace afm::cpu {
namespace {

namespace astc = quant::astc;
constexpr int kTile = astc::kTile;
constexpr int kLanes = astc::kLanes;

// ---- the portable kernel set ---------------------------------------------------------------

void scalar_tile_product(const float* tile, float offset, const float* x, const float* sums,
                         int64_t n_tok, float* acc) {
  for (int y = 0; y < kTile; ++y) {
    float* a = acc + y * n_tok;
    for (int64_t t = 0; t < n_tok; ++t) a[t] += offset * sums[t];
    for (int i = 0; i < kTile; ++i) {
      const float w = tile[y * kTile + i];
      const float* xi = x + i * n_tok;
      for (int64_t t = 0; t < n_tok; ++t) a[t] += w * xi[t];
    }
  }
}

void scalar_decode(const astc::LaneBlock& block, float lanes[kLanes]) {
  uint16_t palette[8];
  astc::lane_palette_f16(block, palette);
  float p[8];
  for (int k = 0; k < 8; ++k) p[k] = f16_to_f32(palette[k]);
  // The digits exactly as the SIMD code unpacks them: padding lanes read the endpoint bytes as
  // digits (any of the 8 palette entries), which their zero inputs cancel.
  uint8_t bytes[16];
  std::memcpy(bytes, &block, 16);
  for (int lane = 0; lane < kLanes; ++lane) {
    const int v = lane / 8, i = lane % 8, d = v / 2, byte = bytes[2 * i + v % 2];
    const int digit = d == 0 ? byte % 6 : d == 1 ? (byte / 6) % 6 : byte / 36;
    lanes[lane] = p[digit];
  }
}

// The input of lane L among a tile column's 16 xpat floats.
inline float xpat_lane(const float* xpat, int lane) { return xpat[(lane / 8) % 2 * 8 + lane % 8]; }

// The texel of each lane (astc::lane_texel), -1 at padding.
const std::array<int8_t, kLanes>& lane_texels() {
  static const auto table = [] {
    std::array<int8_t, kLanes> t{};
    for (int lane = 0; lane < kLanes; ++lane) t[lane] = static_cast<int8_t>(astc::lane_texel(lane));
    return t;
  }();
  return table;
}

// out[y] += the lanes of row y.
void add_rows(const float lanes[kLanes], float out[kTile]) {
  const auto& texel = lane_texels();
  for (int l = 0; l < kLanes; ++l) {
    if (texel[l] >= 0) out[texel[l] / kTile] += lanes[l];
  }
}

void scalar_row(const astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
                int64_t tile_cols, const float* xpat, float out[kTile]) {
  float lanes[kLanes], acc[kLanes] = {}, offset_sum = 0;
  for (int64_t tc = 0; tc < tile_cols; ++tc) {
    scalar_decode(blocks[tc], lanes);
    const float* xp = xpat + tc * kXpatFloats;
    for (int l = 0; l < kLanes; ++l) acc[l] += lanes[l] * xpat_lane(xp, l);
    offset_sum += f16_to_f32(offsets[tc]) * sums[tc];
  }
  std::fill(out, out + kTile, offset_sum);
  add_rows(acc, out);
}

void scalar_exception(const astc::LaneException& e, const float* xpat, float out[kTile]) {
  float products[kLanes];
  for (int l = 0; l < kLanes; ++l) products[l] = f16_to_f32(e.lanes[l]) * xpat_lane(xpat, l);
  add_rows(products, out);
}

const AstcLaneKernels& kernels() {
  static const AstcLaneKernels* k = [] {
    const CpuFeatures& f = cpu_features();
    if (const AstcLaneKernels* k = f.avx512 ? astc_lane_kernels_avx512() : nullptr) return k;
    const AstcLaneKernels* simd = f.avx2 ? astc_lane_kernels_avx2() : nullptr;
    return simd != nullptr ? simd : &astc_lane_kernels_scalar();
  }();
  return *k;
}

// ---- layouts shared by both paths ----------------------------------------------------------

// Per-thread scratch, every array with the tokens innermost so the products vectorise over
// them: x[tc][i][t] (the input padded to whole tiles with zeros), sums[tc][t] (the input summed
// over tile column tc), acc[y][t] (the six rows of the current tile row).
struct Scratch {
  std::vector<float> x, sums, acc;
};

void pad_input(const float* x, int64_t n_tok, int64_t cols, int64_t tile_cols, Scratch& s) {
  s.x.assign(static_cast<size_t>(tile_cols * kTile * n_tok), 0.0f);
  s.sums.assign(static_cast<size_t>(tile_cols * n_tok), 0.0f);
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = x[t * cols + c];
      s.x[c * n_tok + t] = v;  // (tile c / 6, column c % 6) is row c of the padded layout
      s.sums[(c / kTile) * n_tok + t] += v;
    }
  }
}

// Rows [first, last) of tile row tr from acc[y][t] into y.
void store_rows(const Scratch& s, int64_t tr, int64_t row_begin, int64_t row_end, int64_t n_tok,
                float* y, int64_t ldy) {
  const int64_t first = std::max(row_begin, tr * kTile), last = std::min(row_end, tr * kTile + kTile);
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t r = first; r < last; ++r) y[t * ldy + r] = s.acc[(r - tr * kTile) * n_tok + t];
  }
}

// ---- the lane form -------------------------------------------------------------------------

// One token: the input laid out per tile column as the lanes read it (gemm_astc_lanes.h), so a
// tile's product is 6 lane-wise multiply-adds; the 6 rows are summed out of the 48 lanes once
// per tile row.
void lanes_vector(const astc::LaneView& v, int64_t cols, int64_t row_begin, int64_t row_end,
                  const float* x, float* y) {
  thread_local std::vector<float> xpat, sums;
  xpat.resize(static_cast<size_t>(v.tile_cols * kXpatFloats));
  sums.resize(static_cast<size_t>(v.tile_cols));
  for (int64_t tc = 0; tc < v.tile_cols; ++tc) {
    float xs[kTile], sum = 0;
    for (int i = 0; i < kTile; ++i) {
      const int64_t c = tc * kTile + i;
      xs[i] = c < cols ? x[c] : 0.0f;
      sum += xs[i];
    }
    float* xp = xpat.data() + tc * kXpatFloats;
    for (int p = 0; p < 2; ++p) {
      for (int i = 0; i < 8; ++i) xp[8 * p + i] = i < kTile ? xs[(2 * i + p) % kTile] : 0.0f;
    }
    sums[tc] = sum;
  }
  const AstcLaneKernels& k = kernels();
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    float row[kTile];
    k.row(v.blocks + tr * v.tile_cols, v.offsets + tr * v.tile_cols, sums.data(), v.tile_cols,
          xpat.data(), row);
    for (auto* e = v.exceptions_begin(tr); e != v.exceptions_end(tr); ++e) {
      k.exception(*e, xpat.data() + e->tile_col * kXpatFloats, row);
    }
    const int64_t first = std::max(row_begin, tr * kTile), last = std::min(row_end, tr * kTile + kTile);
    for (int64_t r = first; r < last; ++r) y[r] = row[r - tr * kTile];
  }
}

// A batch: each tile decoded once into row-major order, then the tokens-innermost product.
void lanes_batch(const astc::LaneView& v, int64_t cols, int64_t row_begin, int64_t row_end,
                 const float* x, int64_t n_tok, float* y, int64_t ldy) {
  thread_local Scratch s;
  pad_input(x, n_tok, cols, v.tile_cols, s);
  s.acc.resize(static_cast<size_t>(kTile * n_tok));
  const auto& texel = lane_texels();
  const AstcLaneKernels& k = kernels();
  float lanes[kLanes], tile[astc::kTexels];
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    std::fill(s.acc.begin(), s.acc.end(), 0.0f);
    const astc::LaneException* e = v.exceptions_begin(tr);
    for (int64_t tc = 0; tc < v.tile_cols; ++tc) {
      if (e != v.exceptions_end(tr) && e->tile_col == tc) {
        for (int l = 0; l < kLanes; ++l) lanes[l] = f16_to_f32(e->lanes[l]);
        ++e;
      } else {
        k.decode(v.blocks[tr * v.tile_cols + tc], lanes);
      }
      for (int l = 0; l < kLanes; ++l) {
        if (texel[l] >= 0) tile[texel[l]] = lanes[l];
      }
      const float offset = f16_to_f32(v.offsets[tr * v.tile_cols + tc]);
      k.tile_product(tile, offset, s.x.data() + tc * kTile * n_tok, s.sums.data() + tc * n_tok,
                     n_tok, s.acc.data());
    }
    store_rows(s, tr, row_begin, row_end, n_tok, y, ldy);
  }
}

}  // namespace

const AstcLaneKernels& astc_lane_kernels_scalar() {
  static const AstcLaneKernels k{scalar_row, scalar_exception, scalar_decode, scalar_tile_product};
  return k;
}

void astc6x6_gemm(const uint8_t* w, int64_t rows, int64_t cols, int64_t row_begin,
                  int64_t row_end, const float* x, int64_t n_tok, float* y, int64_t ldy) {
  if (row_begin >= row_end || n_tok == 0) return;
  thread_local Scratch s;
  const astc::TileGrid g = astc::tile_grid(rows, cols);
  pad_input(x, n_tok, cols, g.tile_cols, s);
  s.acc.resize(static_cast<size_t>(kTile * n_tok));
  const auto* offsets = reinterpret_cast<const uint16_t*>(w + g.offsets_at);
  const AstcLaneKernels& k = kernels();
  float tile[astc::kTexels];
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    std::fill(s.acc.begin(), s.acc.end(), 0.0f);
    const uint8_t* blocks = w + tr * g.tile_cols * astc::kBlockBytes;
    for (int64_t tc = 0; tc < g.tile_cols; ++tc) {
      AFM_CHECK(astc::decode_block(blocks + tc * astc::kBlockBytes, tile) == astc::BlockStatus::kOk);
      const float offset = f16_to_f32(offsets[tr * g.tile_cols + tc]);
      k.tile_product(tile, offset, s.x.data() + tc * kTile * n_tok, s.sums.data() + tc * n_tok,
                     n_tok, s.acc.data());
    }
    store_rows(s, tr, row_begin, row_end, n_tok, y, ldy);
  }
}

void astc6x6_lanes_gemm(const void* lanes, int64_t rows, int64_t cols, int64_t row_begin,
                        int64_t row_end, const float* x, int64_t n_tok, float* y, int64_t ldy) {
  if (row_begin >= row_end || n_tok == 0) return;
  const astc::LaneView v = astc::lane_view(lanes, rows, cols);
  if (n_tok == 1) {
    lanes_vector(v, cols, row_begin, row_end, x, y);
  } else {
    lanes_batch(v, cols, row_begin, row_end, x, n_tok, y, ldy);
  }
}

}  // namespace afm::cpu
