#include "ops/embedding.h"

#include "base/error.h"
#include "quant/astc6x6.h"
#include "quant/tensor_encode.h"

namespace afm::ops {

void dequantize_row(const Matrix& table, int64_t row, float* out) {
  if (table.type == gguf::TensorType::kASTC6X6) {  // decodes the tile row it lies in
    quant::astc::decode_rows(static_cast<const uint8_t*>(table.data), table.rows, table.cols, row,
                             row + 1, out);
    return;
  }
  const auto* p = static_cast<const uint8_t*>(table.data) + row * table.row_bytes;
  quant::decode_values(p, static_cast<size_t>(table.cols), table.type, out);
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
