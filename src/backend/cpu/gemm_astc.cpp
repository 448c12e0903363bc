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

// Per-thread scratch: the input padded to whole tiles, its per-tile column sums, accumulators.
struct Scratch {
  std::vector<float> x, sums, acc;
};

// x copied into rows of tile_cols * 6 floats, zero past `cols`, and S[t][tc] = the sum of
// token t's inputs over tile column tc.
void pad_input(const float* x, int64_t n_tok, int64_t cols, int64_t tile_cols, Scratch& s) {
  const int64_t width = tile_cols * kTile;
  s.x.assign(static_cast<size_t>(n_tok * width), 0.0f);
  s.sums.resize(static_cast<size_t>(n_tok * tile_cols));
  for (int64_t t = 0; t < n_tok; ++t) {
    std::memcpy(&s.x[t * width], x + t * cols, static_cast<size_t>(cols) * sizeof(float));
    for (int64_t tc = 0; tc < tile_cols; ++tc) {
      float sum = 0.0f;
      for (int i = 0; i < kTile; ++i) sum += s.x[t * width + tc * kTile + i];
      s.sums[t * tile_cols + tc] = sum;
    }
  }
}

// acc[t][y] += sum_x tile[y][x] * xs_t[x] for the 6 rows of one tile, every token.
void tile_product(const float* tile, const float* x, int64_t width, int64_t n_tok, float* acc) {
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* xs = x + t * width;
    float* a = acc + t * kTile;
    for (int y = 0; y < kTile; ++y) {
      const float* w = tile + y * kTile;
      a[y] += w[0] * xs[0] + w[1] * xs[1] + w[2] * xs[2] + w[3] * xs[3] + w[4] * xs[4] + w[5] * xs[5];
    }
  }
}

}  // namespace

void astc6x6_gemm(const uint8_t* w, int64_t rows, int64_t cols, int64_t row_begin,
                  int64_t row_end, const float* x, int64_t n_tok, float* y, int64_t ldy) {
  if (row_begin >= row_end || n_tok == 0) return;
  thread_local Scratch s;
  const astc::TileGrid g = astc::tile_grid(rows, cols);
  const int64_t width = g.tile_cols * kTile;
  pad_input(x, n_tok, cols, g.tile_cols, s);
  s.acc.resize(static_cast<size_t>(n_tok * kTile));
  const auto* offsets = reinterpret_cast<const uint16_t*>(w + g.offsets_at);
  float tile[astc::kTexels];
  for (int64_t tr = row_begin / kTile; tr * kTile < row_end; ++tr) {
    std::fill(s.acc.begin(), s.acc.end(), 0.0f);
    const uint8_t* blocks = w + tr * g.tile_cols * astc::kBlockBytes;
    for (int64_t tc = 0; tc < g.tile_cols; ++tc) {
      AFM_CHECK(astc::decode_block(blocks + tc * astc::kBlockBytes, tile) == astc::BlockStatus::kOk);
      const float offset = f16_to_f32(offsets[tr * g.tile_cols + tc]);
      tile_product(tile, s.x.data() + tc * kTile, width, n_tok, s.acc.data());
      // The offset adds offset * S to all six rows of the tile.
      for (int64_t t = 0; t < n_tok; ++t) {
        const float o = offset * s.sums[t * g.tile_cols + tc];
        for (int r = 0; r < kTile; ++r) s.acc[t * kTile + r] += o;
      }
    }
    const int64_t first = std::max(row_begin, tr * kTile), last = std::min(row_end, tr * kTile + kTile);
    for (int64_t t = 0; t < n_tok; ++t) {
      for (int64_t r = first; r < last; ++r) y[t * ldy + r] = s.acc[t * kTile + (r - tr * kTile)];
    }
  }
}

}  // namespace afm::cpu
