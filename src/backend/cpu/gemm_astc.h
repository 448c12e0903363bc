// y = x · Wᵀ for an astc6x6 weight matrix (quant/astc6x6.h), decoding each tile as it goes:
// the matrix is never expanded in memory.
#pragma once

#include <cstdint>

namespace afm::cpu {

// Output rows [row_begin, row_end) of W (rows x cols, validated) for n_tok input rows x (each
// `cols` floats, rows `cols` apart): y[t * ldy + r]. A tile is decoded once per call and used by
// every token; the tile offsets enter as y += offset · S, S = the sum of x over the tile's
// columns, one product per tile and token instead of 36. Thread-safe (scratch is per thread).
// Reads the file's ASTC blocks: the reference path, and the one taken without a lane form.
void astc6x6_gemm(const uint8_t* w, int64_t rows, int64_t cols, int64_t row_begin,
                  int64_t row_end, const float* x, int64_t n_tok, float* y, int64_t ldy);

// Whether astc6x6_lanes_gemm computes one token's product on the integer path (AVX-512 VNNI,
// unless AFM_ASTC_INT=0): the input quantised per 96 columns to 12-bit integers
// (gemm_astc_lanes.h), the weights exact. Batches and other CPUs multiply floats.
bool astc6x6_quantises_one_token();

// The same product read from the matrix's lane form (quant/astc_lanes.h, a region made by
// make_lane_forms): the same weights, summed in another order. AVX2 where the CPU has it.
void astc6x6_lanes_gemm(const void* lanes, int64_t rows, int64_t cols, int64_t row_begin,
                        int64_t row_end, const float* x, int64_t n_tok, float* y, int64_t ldy);

}  // namespace afm::cpu
