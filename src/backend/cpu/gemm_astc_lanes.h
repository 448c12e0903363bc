// The inner loops of astc6x6_lanes_gemm (gemm_astc.h), one set per instruction set; internal to
// the CPU backend.
#pragma once

#include <cstdint>

#include "quant/astc_lanes.h"

namespace afm::cpu {

// A tile column's input in lane order needs two 8-float vectors only: lane L = 8 v + i reads
// column (2 i + v % 2) % 6 of the tile whatever its digit, so xpat[tc * 16 + 8 p + i] holds
// x[6 tc + (2 i + p) % 6] for i < 6 (0 past the matrix's last column) and 0 for i = 6, 7.
inline constexpr int kXpatFloats = 16;

// The integer row path (where a set has one): the input quantised per group of kGroupTiles tile
// columns (96 inputs) to integers q = round(x / scale) of at most kQMax in magnitude, scale =
// the group's largest |x| / kQMax, laid out as the lanes read them: qpat[tc * 16 + j] = q of
// column 6 tc + j % 6 for j < 12, 0 for j = 12..15 (the lanes of the endpoint bytes). qpat
// holds whole groups, zero past the matrix. Bounds: a lane block's integer palette is below
// 2^15 and the products of one 32-bit lane over a group sum to at most
// 8 x 2 x 32752 x 2047 < 2^31 (the kernel adds two texels of one block of every other tile
// column into a lane).
inline constexpr int kQpatLanes = 16;
inline constexpr int kGroupTiles = 16;
inline constexpr int kQMax = 2047;

struct AstcLaneKernels {
  // The 6 outputs of one tile row: out[y] = sum over its tile_cols lane blocks of
  // sum_i tile(tc)[y][i] * x(tc)[i] + offset(tc) * sums[tc] (offsets f16).
  void (*row)(const quant::astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
              int64_t tile_cols, const float* xpat, float out[quant::astc::kTile]);
  // out[y] += sum_i e[y][i] * x[i] for an exception tile; `xpat` points at its column's 16 floats.
  void (*exception)(const quant::astc::LaneException& e, const float* xpat,
                    float out[quant::astc::kTile]);
  // One lane block's 48 lanes as floats; a padding lane holds one of the block's 8 palette
  // values (the endpoint bytes read as digits), the same in every set.
  void (*decode)(const quant::astc::LaneBlock& block, float lanes[quant::astc::kLanes]);
  // acc[y][t] += sum_i tile[y][i] * x[i][t] + offset * sums[t] for the 6 rows of a row-major
  // 6 x 6 tile and n_tok tokens (x, sums and acc with the tokens innermost).
  void (*tile_product)(const float* tile, float offset, const float* x, const float* sums,
                       int64_t n_tok, float* acc);
  // The `row` product from the quantised input (above), null in sets without one: out[y] =
  // 2^(exponent - 25) x sum over groups g of scales[g] x the integer sum over its lane blocks of
  // lane_palette_int(digit, exponent) x q, plus the offsets' term as in `row`. Reads no block
  // past tile_cols.
  void (*row_q)(const quant::astc::LaneBlock* blocks, const uint16_t* offsets, const float* sums,
                int64_t tile_cols, int exponent, const int16_t* qpat, const float* scales,
                float out[quant::astc::kTile]);
};

const AstcLaneKernels& astc_lane_kernels_scalar();
// Null when the library was built without AVX2 code.
const AstcLaneKernels* astc_lane_kernels_avx2();
// Null when the library was built without AVX-512 code: its own row kernel (two blocks per
// register), the AVX2 set's other entries. The caller checks the CPU.
// astc_lane_kernels_avx512_vnni adds the integer row path (vpermw lookups, vpdpwssd products).
const AstcLaneKernels* astc_lane_kernels_avx512();
const AstcLaneKernels* astc_lane_kernels_avx512_vnni();

}  // namespace afm::cpu
