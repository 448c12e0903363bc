// The inner loops of astc6x6_lanes_gemm (gemm_astc.h), one set per instruction set; internal to
// the CPU backend.
#pragma once

#include <cstdint>

#include "quant/astc_lanes.h"

namespace afm::cpu {

struct AstcLaneKernels {
  // acc[L] += sum over tile columns tc of tile(tc)[L] * xpat[tc * kLanes + L] for the
  // tile_cols lane blocks of one tile row (lane order, quant/astc_lanes.h; xpat is zero at
  // padding lanes); returns sum over tc of offset(tc) * sums[tc] (offsets f16).
  float (*row)(const quant::astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
               int64_t tile_cols, const float* xpat, float acc[quant::astc::kLanes]);
  // One lane block's 48 lanes as floats; a padding lane holds one of the block's 8 palette
  // values (the endpoint bytes read as digits), the same in every set.
  void (*decode)(const quant::astc::LaneBlock& block, float lanes[quant::astc::kLanes]);
};

const AstcLaneKernels& astc_lane_kernels_scalar();
// Null when the library was built without AVX2 code.
const AstcLaneKernels* astc_lane_kernels_avx2();

}  // namespace afm::cpu
