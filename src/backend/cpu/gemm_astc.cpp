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

// One CPU-specific copy per instruction set where the compiler supports it (chosen at load).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define AFM_ASTC_CLONES __attribute__((target_clones("default", "arch=haswell", "arch=skylake-avx512")))
#else
#define AFM_ASTC_CLONES
#endif

// acc[y][t] += sum_i tile[y][i] * x[i][t] + offset * sums[t] for the 6 rows of one tile.
AFM_ASTC_CLONES
void tile_product(const float* tile, float offset, const float* x, const float* sums,
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

// The same for one token: acc[y] += sum_i tile[y][i] * x[i] + offset * sum.
void tile_vector_product(const float* tile, float offset, const float* x, float sum, float* acc) {
  for (int y = 0; y < kTile; ++y) {
    const float* w = tile + y * kTile;
    acc[y] += w[0] * x[0] + w[1] * x[1] + w[2] * x[2] + w[3] * x[3] + w[4] * x[4] + w[5] * x[5] +
              offset * sum;
  }
}

}  // namespace

void astc6x6_gemm(const uint8_t* w, int64_t rows, int64_t cols, int64_t row_begin,
                  int64_t row_end, const float* x, int64_t n_tok, float* y, int64_t ldy) {
  if (row_begin >= row_end || n_tok == 0) return;
  thread_local Scratch s;
  const astc::TileGrid g = astc::tile_grid(rows, cols);
  pad_input(x, n_tok, cols, g.tile_cols, s);
  s.acc.resize(static_cast<size_t>(kTile * n_tok));
  const auto* offsets = reinterpret_cast<const uint16_t*>(w + g.offsets_at);
  float tile[astc::kTexels];
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    std::fill(s.acc.begin(), s.acc.end(), 0.0f);
    const uint8_t* blocks = w + tr * g.tile_cols * astc::kBlockBytes;
    for (int64_t tc = 0; tc < g.tile_cols; ++tc) {
      AFM_CHECK(astc::decode_block(blocks + tc * astc::kBlockBytes, tile) == astc::BlockStatus::kOk);
      const float offset = f16_to_f32(offsets[tr * g.tile_cols + tc]);
      const float* xs = s.x.data() + tc * kTile * n_tok;
      if (n_tok == 1) {  // decode: one straight 6 x 6 product, no loop over tokens
        tile_vector_product(tile, offset, xs, s.sums[tc], s.acc.data());
      } else {
        tile_product(tile, offset, xs, s.sums.data() + tc * n_tok, n_tok, s.acc.data());
      }
    }
    const int64_t first = std::max(row_begin, tr * kTile), last = std::min(row_end, tr * kTile + kTile);
    for (int64_t t = 0; t < n_tok; ++t) {
      for (int64_t r = first; r < last; ++r) y[t * ldy + r] = s.acc[(r - tr * kTile) * n_tok + t];
    }
  }
}

// ---- the lane form ------------------------------------------------------------------------

namespace {

constexpr int kLanes = astc::kLanes;

const std::array<int8_t, kLanes>& lane_texels() {
  static const auto table = [] {
    std::array<int8_t, kLanes> t{};
    for (int lane = 0; lane < kLanes; ++lane) t[lane] = static_cast<int8_t>(astc::lane_texel(lane));
    return t;
  }();
  return table;
}

const AstcLaneKernels& lane_kernels() {
  static const AstcLaneKernels* k = [] {
    const AstcLaneKernels* simd = cpu_features().avx2 ? astc_lane_kernels_avx2() : nullptr;
    return simd != nullptr ? simd : &astc_lane_kernels_scalar();
  }();
  return *k;
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

float scalar_row(const astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
                 int64_t tile_cols, const float* xpat, float acc[kLanes]) {
  float lanes[kLanes], offset_sum = 0;
  for (int64_t tc = 0; tc < tile_cols; ++tc) {
    scalar_decode(blocks[tc], lanes);
    for (int l = 0; l < kLanes; ++l) acc[l] += lanes[l] * xpat[tc * kLanes + l];
    offset_sum += f16_to_f32(offsets[tc]) * sums[tc];
  }
  return offset_sum;
}

void exception_lanes(const astc::LaneException& e, float lanes[kLanes]) {
  for (int l = 0; l < kLanes; ++l) lanes[l] = f16_to_f32(e.lanes[l]);
}

// One token: the input laid out per tile column in lane order (zeros at padding and past the
// last column), so a tile's product is 6 lane-wise multiply-adds; the 6 rows are summed out of
// the 48 lanes once per tile row.
struct LaneScratch {
  std::vector<float> xpat, sums;
};

void lanes_vector(const astc::LaneView& v, int64_t cols, int64_t row_begin, int64_t row_end,
                  const float* x, float* y) {
  thread_local LaneScratch s;
  const auto& texel = lane_texels();
  s.xpat.assign(static_cast<size_t>(v.tile_cols * kLanes), 0.0f);
  s.sums.assign(static_cast<size_t>(v.tile_cols), 0.0f);
  for (int64_t tc = 0; tc < v.tile_cols; ++tc) {
    for (int l = 0; l < kLanes; ++l) {
      const int64_t c = tc * kTile + texel[l] % kTile;
      if (texel[l] >= 0 && c < cols) s.xpat[tc * kLanes + l] = x[c];
    }
    for (int64_t c = tc * kTile; c < std::min(cols, tc * kTile + kTile); ++c) s.sums[tc] += x[c];
  }
  const AstcLaneKernels& k = lane_kernels();
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    float acc[kLanes] = {}, lanes[kLanes];
    const float offset_sum = k.row(v.blocks + tr * v.tile_cols, v.offsets + tr * v.tile_cols,
                                   s.sums.data(), v.tile_cols, s.xpat.data(), acc);
    for (auto* e = v.exceptions_begin(tr); e != v.exceptions_end(tr); ++e) {
      exception_lanes(*e, lanes);
      const float* xp = s.xpat.data() + e->tile_col * kLanes;
      for (int l = 0; l < kLanes; ++l) acc[l] += lanes[l] * xp[l];
    }
    float row[kTile];
    std::fill(row, row + kTile, offset_sum);
    for (int l = 0; l < kLanes; ++l) {
      if (texel[l] >= 0) row[texel[l] / kTile] += acc[l];
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
  const AstcLaneKernels& k = lane_kernels();
  float lanes[kLanes], tile[astc::kTexels];
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    std::fill(s.acc.begin(), s.acc.end(), 0.0f);
    const astc::LaneException* e = v.exceptions_begin(tr);
    for (int64_t tc = 0; tc < v.tile_cols; ++tc) {
      if (e != v.exceptions_end(tr) && e->tile_col == tc) {
        exception_lanes(*e++, lanes);
      } else {
        k.decode(v.blocks[tr * v.tile_cols + tc], lanes);
      }
      for (int l = 0; l < kLanes; ++l) {
        if (texel[l] >= 0) tile[texel[l]] = lanes[l];
      }
      const float offset = f16_to_f32(v.offsets[tr * v.tile_cols + tc]);
      tile_product(tile, offset, s.x.data() + tc * kTile * n_tok, s.sums.data() + tc * n_tok,
                   n_tok, s.acc.data());
    }
    const int64_t first = std::max(row_begin, tr * kTile), last = std::min(row_end, tr * kTile + kTile);
    for (int64_t t = 0; t < n_tok; ++t) {
      for (int64_t r = first; r < last; ++r) y[t * ldy + r] = s.acc[(r - tr * kTile) * n_tok + t];
    }
  }
}

}  // namespace

const AstcLaneKernels& astc_lane_kernels_scalar() {
  static const AstcLaneKernels k{scalar_row, scalar_decode};
  return k;
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
