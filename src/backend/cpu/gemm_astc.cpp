#include "backend/cpu/gemm_astc.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
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

// The integer row path's reference (gemm_astc_lanes.h): each group's sums in 64-bit integers,
// texel by texel.
void scalar_row_q(const astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
                  int64_t tile_cols, int exponent, const int16_t* qpat, const float* scales,
                  float out[kTile]) {
  float offset_sum = 0, rows[kTile] = {};
  for (int64_t tc = 0; tc < tile_cols; ++tc) offset_sum += f16_to_f32(offsets[tc]) * sums[tc];
  for (int64_t g = 0; g * kGroupTiles < tile_cols; ++g) {
    int64_t acc[kTile] = {};
    for (int64_t tc = g * kGroupTiles; tc < std::min<int64_t>(tile_cols, (g + 1) * kGroupTiles); ++tc) {
      int32_t palette[8];
      for (int k = 0; k < 8; ++k) palette[k] = astc::lane_palette_int(blocks[tc], k, exponent);
      for (int j = 0; j < astc::kDigitBytes; ++j) {
        const int b = blocks[tc].digits[j], digit[3] = {b % 6, (b / 6) % 6, b / 36};
        for (int d = 0; d < 3; ++d) {
          acc[(j + astc::kDigitBytes * d) / kTile] += int64_t{palette[digit[d]]} * qpat[tc * kQpatLanes + j];
        }
      }
    }
    for (int y = 0; y < kTile; ++y) rows[y] += scales[g] * static_cast<float>(acc[y]);
  }
  for (int y = 0; y < kTile; ++y) out[y] = offset_sum + rows[y] * std::ldexp(1.0f, exponent - 25);
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

// The set with the integer row path, where the CPU has one and AFM_ASTC_INT is not 0; else
// null (the float lanes). AFM_ASTC_INT=portable takes the path through its reference kernel on
// any CPU (for tests).
const AstcLaneKernels* int_kernels() {
  static const AstcLaneKernels* k = [] () -> const AstcLaneKernels* {
    const char* env = std::getenv("AFM_ASTC_INT");
    if (env != nullptr && std::string_view(env) == "0") return nullptr;
    if (env != nullptr && std::string_view(env) == "portable") return &astc_lane_kernels_scalar();
    const CpuFeatures& f = cpu_features();
    return f.avx512 && f.avx512_vnni ? astc_lane_kernels_avx512_vnni() : nullptr;
  }();
  return k;
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

// One token's input as the row kernels read it: per tile column the 16 floats of the float
// lanes (gemm_astc_lanes.h), its sum, and for the integer path the quantised lanes and the
// groups' scales.
struct VectorInput {
  std::vector<float> xpat, sums, scales;
  std::vector<int16_t> qpat;

  void prepare(const float* x, int64_t cols, int64_t tile_cols, bool quantised) {
    xpat.resize(static_cast<size_t>(tile_cols * kXpatFloats));
    sums.resize(static_cast<size_t>(tile_cols));
    for (int64_t tc = 0; tc < tile_cols; ++tc) {
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
    if (quantised) quantise(x, cols, tile_cols);
  }

  // q = round(x / scale), scale = the group's largest |x| / kQMax, so |q| <= kQMax. A group
  // with an infinite input gets an infinite scale (its outputs are not finite, as the float
  // path's), and a NaN input a 0 (no float-to-integer conversion of a NaN).
  void quantise(const float* x, int64_t cols, int64_t tile_cols) {
    const int64_t groups = (tile_cols + kGroupTiles - 1) / kGroupTiles;
    const int64_t per_group = int64_t{kGroupTiles} * kTile;
    scales.assign(static_cast<size_t>(groups), 0.0f);
    qpat.assign(static_cast<size_t>(groups * kGroupTiles * kQpatLanes), 0);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t begin = g * per_group, end = std::min(cols, begin + per_group);
      float largest = 0;
      for (int64_t c = begin; c < end; ++c) largest = std::max(largest, std::abs(x[c]));
      if (largest == 0) continue;
      // In double: kQMax / largest overflows a float for groups below ~1e-35.
      const double scale = double{largest} / kQMax;
      scales[g] = static_cast<float>(scale);
      for (int64_t c = begin; c < end; ++c) {
        const double v = std::nearbyint(x[c] / scale);
        const auto q = static_cast<int16_t>(v == v ? std::clamp(v, -double{kQMax}, double{kQMax}) : 0.0);
        int16_t* lanes = qpat.data() + (c / kTile) * kQpatLanes;
        lanes[c % kTile] = q;
        lanes[c % kTile + kTile] = q;
      }
    }
  }
};

// One token: the input laid out per tile column as the lanes read it (gemm_astc_lanes.h), so a
// tile's product is lane-wise; the 6 rows are summed out of the lanes once per tile row. The
// integer path where the CPU has one, else the float lanes.
void lanes_vector(const astc::LaneView& v, int64_t cols, int64_t row_begin, int64_t row_end,
                  const float* x, float* y) {
  const AstcLaneKernels* quantised = int_kernels();
  thread_local VectorInput in;
  in.prepare(x, cols, v.tile_cols, quantised != nullptr);
  const AstcLaneKernels& k = quantised != nullptr ? *quantised : kernels();
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    float row[kTile];
    if (quantised != nullptr) {
      k.row_q(v.blocks + tr * v.tile_cols, v.offsets + tr * v.tile_cols, in.sums.data(), v.tile_cols,
              v.exponents[tr], in.qpat.data(), in.scales.data(), row);
    } else {
      k.row(v.blocks + tr * v.tile_cols, v.offsets + tr * v.tile_cols, in.sums.data(), v.tile_cols,
            in.xpat.data(), row);
    }
    for (auto* e = v.exceptions_begin(tr); e != v.exceptions_end(tr); ++e) {
      k.exception(*e, in.xpat.data() + e->tile_col * kXpatFloats, row);
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
  static const AstcLaneKernels k{scalar_row, scalar_exception, scalar_decode, scalar_tile_product,
                                 scalar_row_q};
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

bool astc6x6_quantises_one_token() { return int_kernels() != nullptr; }

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
