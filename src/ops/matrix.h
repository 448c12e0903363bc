// A weight matrix as the kernels see it: N rows of K values in one of the file's weight types,
// viewed in place (usually inside the model file's mmap).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/types.h"

namespace afm::ops {

struct Matrix {
  gguf::TensorType type = gguf::TensorType::kF32;
  const void* data = nullptr;
  int64_t rows = 0;  // N (outputs)
  int64_t cols = 0;  // K (inputs)
  size_t row_bytes = 0;  // 0 for astc6x6, whose tiles span 6 rows (quant/astc6x6.h)
  // q8_0 / q4_0: rows [0, rows / 16 * 16) again in the kernels' 16-row interleaved layout,
  // f16 / bf16 in their 4-row float groups (backend/cpu/gemm.h), q4_k / q6_k in their 16-row
  // lanes (backend/cpu/k_quant_lanes.h), at the same byte offsets as `data`; astc6x6: the
  // matrix's lane form
  // (quant/astc_lanes.h). Made at load by InterleavedWeights (ops/interleaved_weights.h);
  // matmul reads it instead of `data`. Null when there is none; `data` stays valid either way
  // (embedding lookups, tail rows).
  const void* interleaved = nullptr;

  bool empty() const { return data == nullptr; }
};

// Types the matmul kernels accept as weights.
bool is_supported_weight_type(gguf::TensorType type);
// Bytes of one row of `cols` values (cols must suit the type's block size); 0 for a tile type.
size_t row_bytes_for(gguf::TensorType type, int64_t cols);
// Bytes of one rows x cols matrix.
size_t matrix_bytes(gguf::TensorType type, int64_t rows, int64_t cols);

}  // namespace afm::ops
