#include "quant/astc_encoder.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

extern "C" {
#include <astcenc.h>
}

#include "base/error.h"
#include "base/half.h"
#include "quant/astc6x6.h"

namespace afm::quant::astc {
namespace {

// The largest f16 value not above x (so a tile shifted by it stays non-negative).
uint16_t f16_at_or_below(float x) {
  uint16_t h = f32_to_f16(x);
  if (f16_to_f32(h) <= x) return h;
  // One step towards -inf: a smaller magnitude for positives, a larger one for negatives.
  if (h == 0x0000) return 0x8001;
  return (h & 0x8000) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h - 1);
}

// The tile's offset for `mode`, from the minimum and maximum of its real (unpadded) weights.
uint16_t tile_offset(float lo, float hi, OffsetMode mode) {
  if (mode == OffsetMode::kMinimum) return f16_at_or_below(lo);
  // Smallest normal f16 for a constant tile: any B > 0 keeps the values in one binade.
  const float range = hi - lo;
  const float b = range > 0 ? std::exp2(std::ceil(std::log2(range))) : 0x1p-14f;
  return f16_at_or_below(lo - b);
}

struct ContextDeleter {
  void operator()(astcenc_context* c) const { astcenc_context_free(c); }
};
using Context = std::unique_ptr<astcenc_context, ContextDeleter>;

void check(astcenc_error status, const char* what) {
  if (status != ASTCENC_SUCCESS) {
    throw_error(ErrorCode::kInternal,
                std::string("astcenc ") + what + ": " + astcenc_get_error_string(status));
  }
}

Context make_context(const EncodeOptions& options, int threads) {
  astcenc_config config;
  check(astcenc_config_init(ASTCENC_PRF_HDR_RGB_LDR_A, kTile, kTile, 1, options.effort, 0, &config),
        "config");
  // One partition and one weight plane: the blocks afm's decoder and kernels handle. On trained
  // weights a second partition lowered the error by 2.5% (docs/compression.md) for a slower,
  // branchier decode.
  config.tune_partition_count_limit = 1;
  config.tune_2_plane_early_out_limit_correlation = 0.0f;
  config.cw_a_weight = 0.0f;  // alpha is a constant 1 that nothing reads
  astcenc_context* raw = nullptr;
  check(astcenc_context_alloc(&config, static_cast<unsigned>(threads), &raw), "context");
  return Context(raw);
}

}  // namespace

void encode_matrix(const float* w, int64_t rows, int64_t cols, const EncodeOptions& options,
                   uint8_t* out) {
  const TileGrid g = tile_grid(rows, cols);
  const int64_t height = g.tile_rows * kTile, width = g.tile_cols * kTile;
  // The image: RGBA floats, every weight in R, G and B (grey, so the encoder picks luminance
  // endpoints and spends its bits on weights), alpha 1.
  std::vector<float> image(static_cast<size_t>(height * width * 4));
  for (int64_t tr = 0; tr < g.tile_rows; ++tr) {
    for (int64_t tc = 0; tc < g.tile_cols; ++tc) {
      const int64_t r_end = std::min(rows, (tr + 1) * kTile), c_end = std::min(cols, (tc + 1) * kTile);
      float lo = INFINITY, hi = -INFINITY;
      for (int64_t r = tr * kTile; r < r_end; ++r) {
        for (int64_t c = tc * kTile; c < c_end; ++c) {
          const float v = w[r * cols + c];
          if (!std::isfinite(v)) {
            throw_error(ErrorCode::kInvalidArgument, "astc6x6: weight (" + std::to_string(r) +
                                                         ", " + std::to_string(c) + ") is not finite");
          }
          lo = std::min(lo, v), hi = std::max(hi, v);
        }
      }
      const uint16_t offset = tile_offset(lo, hi, options.offset);
      std::memcpy(out + g.offsets_at + (tr * g.tile_cols + tc) * 2, &offset, 2);
      const float shift = f16_to_f32(offset);
      // Padding repeats the nearest real weight of the tile, so it never widens the range.
      for (int64_t y = 0; y < kTile; ++y) {
        for (int64_t x = 0; x < kTile; ++x) {
          const int64_t r = std::min(tr * kTile + y, rows - 1), c = std::min(tc * kTile + x, cols - 1);
          float* px = &image[static_cast<size_t>(((tr * kTile + y) * width + tc * kTile + x) * 4)];
          px[0] = px[1] = px[2] = w[r * cols + c] - shift;
          px[3] = 1.0f;
        }
      }
    }
  }

  const int threads = std::max(1, options.threads);
  Context context = make_context(options, threads);
  void* slices[1] = {image.data()};
  astcenc_image img{static_cast<unsigned>(width), static_cast<unsigned>(height), 1,
                    ASTCENC_TYPE_F32, slices};
  const astcenc_swizzle swizzle{ASTCENC_SWZ_R, ASTCENC_SWZ_G, ASTCENC_SWZ_B, ASTCENC_SWZ_A};
  std::vector<astcenc_error> status(threads, ASTCENC_SUCCESS);
  auto work = [&](int i) {
    status[i] = astcenc_compress_image(context.get(), &img, &swizzle, out, g.offsets_at,
                                       static_cast<unsigned>(i));
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(work, i);
  work(0);
  for (std::thread& t : pool) t.join();
  for (astcenc_error s : status) check(s, "compress");
  try {
    validate_matrix(out, rows, cols, "astcenc output");
  } catch (const Error& e) {
    throw_error(ErrorCode::kInternal, e.what());
  }
}

}  // namespace afm::quant::astc
