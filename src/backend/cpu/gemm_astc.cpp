#include "backend/cpu/gemm_astc.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/half.h"
#include "quant/astc6x6.h"

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

}  // namespace afm::cpu
