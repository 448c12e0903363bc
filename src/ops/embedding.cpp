#include "ops/embedding.h"

#include <cstring>

#include "base/error.h"
#include "base/half.h"
#include "quant/block_formats.h"

namespace afm::ops {

void dequantize_row(const Matrix& table, int64_t row, float* out) {
  const auto* p = static_cast<const uint8_t*>(table.data) + row * table.row_bytes;
  const int64_t n = table.cols;
  switch (table.type) {
    case gguf::TensorType::kF32:
      std::memcpy(out, p, n * sizeof(float));
      break;
    case gguf::TensorType::kF16:
      for (int64_t i = 0; i < n; ++i) out[i] = f16_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
      break;
    case gguf::TensorType::kBF16:
      for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(reinterpret_cast<const uint16_t*>(p)[i]);
      break;
    case gguf::TensorType::kQ8_0:
      quant::dequantize_row_q8_0(reinterpret_cast<const quant::BlockQ8_0*>(p), out, n);
      break;
    case gguf::TensorType::kQ4_0:
      quant::dequantize_row_q4_0(reinterpret_cast<const quant::BlockQ4_0*>(p), out, n);
      break;
    default:
      AFM_CHECK(false && "unsupported embedding type");
  }
}

void embed_tokens(const Matrix& table, std::span<const int32_t> tokens, float* out) {
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] < 0 || tokens[t] >= table.rows) {
      throw_error(ErrorCode::kInvalidArgument, "token id " + std::to_string(tokens[t]) +
                                                   " is outside the vocabulary of " +
                                                   std::to_string(table.rows) + " tokens");
    }
    dequantize_row(table, tokens[t], out + t * table.cols);
  }
}

}  // namespace afm::ops
