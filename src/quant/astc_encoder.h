// Encodes matrices as afm's astc6x6 type (quant/astc6x6.h) with Arm's astcenc library, the
// encoder the report's ASTC path implies. Only `afm quantize` and the tests link it; the runtime
// decodes with afm's own decoder and never needs the library.
#pragma once

#include <cstdint>
#include <functional>

namespace afm::quant::astc {

// How a tile is shifted to be non-negative before encoding (the HDR profile has no negatives).
enum class OffsetMode {
  // offset = min - B, B = the tile's range rounded up to a power of two: values land in
  // [B, 2B], one binade, where the HDR format's logarithmic interpolation is close to linear.
  kPowerOfTwo,
  // offset = min, as the report describes: values in [0, range], which the logarithmic
  // levels spread unevenly (about twice the error; docs/compression.md).
  kMinimum,
};

struct EncodeOptions {
  OffsetMode offset = OffsetMode::kPowerOfTwo;
  float effort = 60.0f;  // astcenc's quality preset, 0 (fastest) .. 100 (exhaustive)
  int threads = 1;
};

// Encodes a rows x cols matrix (row-major floats) into out, which must hold
// tile_grid(rows, cols).bytes. Throws Error(kInvalidArgument) for a non-finite weight and
// Error(kInternal) if the library fails or writes a block afm's decoder refuses.
void encode_matrix(const float* w, int64_t rows, int64_t cols, const EncodeOptions& options,
                   uint8_t* out);

}  // namespace afm::quant::astc
