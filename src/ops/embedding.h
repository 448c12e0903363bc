// Row lookup in an embedding table stored in any weight type.
#pragma once

#include <cstdint>
#include <span>

#include "ops/matrix.h"

namespace afm::ops {

// Dequantises table row `row` into out (table.cols floats).
void dequantize_row(const Matrix& table, int64_t row, float* out);

// out: (tokens.size(), table.cols). A token id outside [0, table.rows) is an
// Error(kInvalidArgument) naming the id and the vocabulary size.
void embed_tokens(const Matrix& table, std::span<const int32_t> tokens, float* out);

}  // namespace afm::ops
