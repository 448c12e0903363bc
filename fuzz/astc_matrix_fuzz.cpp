// libFuzzer target: any bytes given as an astc6x6 matrix (quant/astc6x6.h) are refused by the
// load-time check with an afm::Error, or decode and multiply without a crash or an
// out-of-bounds read, from the blocks and from the lane form (quant/astc_lanes.h), whose lane
// blocks must decode to exactly the blocks' values. The first two bytes pick the shape (1..24
// rows and columns).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/cpu/gemm_astc.h"
#include "base/error.h"
#include "quant/astc6x6.h"
#include "quant/astc_lanes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace astc = afm::quant::astc;
  if (size < 2) return 0;
  const int64_t rows = 1 + data[0] % 24, cols = 1 + data[1] % 24;
  const astc::TileGrid g = astc::tile_grid(rows, cols);
  if (size - 2 < g.bytes) return 0;
  const uint8_t* m = data + 2;
  try {
    astc::validate_matrix(m, rows, cols, "fuzz");
  } catch (const afm::Error&) {
    return 0;
  }
  std::vector<float> w(rows * cols), x(2 * cols, 0.5f), y(2 * rows);
  astc::decode_rows(m, rows, cols, 0, rows, w.data());
  afm::cpu::astc6x6_gemm(m, rows, cols, 0, rows, x.data(), 2, y.data(), rows);

  const astc::LaneForms forms = astc::make_lane_forms(m, 1, rows, cols);
  std::vector<uint8_t> form(forms.bytes());
  forms.place(form.data());
  for (int64_t t = 0; t < g.tile_rows * g.tile_cols; ++t) {
    astc::LaneBlock lane;
    if (!astc::to_lane_block(m + t * astc::kBlockBytes, &lane)) continue;
    uint16_t want[astc::kTexels], got[astc::kTexels];
    astc::decode_block_f16(m + t * astc::kBlockBytes, want);
    astc::lane_block_f16(lane, got);
    if (std::memcmp(want, got, sizeof(want)) != 0) std::abort();
  }
  afm::cpu::astc6x6_lanes_gemm(form.data(), rows, cols, 0, rows, x.data(), 1, y.data(), rows);
  afm::cpu::astc6x6_lanes_gemm(form.data(), rows, cols, 0, rows, x.data(), 2, y.data(), rows);
  return 0;
}
