#include "model/weights.h"

#include "base/error.h"
#include "ops/embedding.h"
#include "quant/astc6x6.h"

namespace afm::model {
namespace {

std::string shape_string(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

ops::Matrix WeightLoader::matrix(const std::string& name, int64_t rows, int64_t cols) const {
  return as_matrix(table(name, rows, cols));
}

ops::Matrix WeightLoader::table(const std::string& name, int64_t rows, int64_t cols) const {
  return view(name, {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows)}, rows, cols);
}

ops::Matrix WeightLoader::as_matrix(ops::Matrix table) const { return with_copy(table, 1); }

ops::Matrix WeightLoader::with_copy(ops::Matrix m, int64_t stack) const {
  if (interleaved_ != nullptr && m.interleaved == nullptr) interleaved_->attach(m, file_, stack);
  return m;
}

ops::Matrix WeightLoader::stacked_matrix(const std::string& name, int64_t n, int64_t rows,
                                         int64_t cols) const {
  return with_copy(view(name, {static_cast<uint64_t>(cols), static_cast<uint64_t>(rows),
                               static_cast<uint64_t>(n)},
                        n * rows, cols),
                   n);
}

ops::Matrix expert(const ops::Matrix& stacked, int64_t e, int64_t rows) {
  ops::Matrix m = stacked;
  m.data = static_cast<const uint8_t*>(stacked.data) + e * ops::matrix_bytes(stacked.type, rows, stacked.cols);
  m.interleaved = ops::expert_copy(stacked, e, rows);
  m.rows = rows;
  return m;
}

ops::Matrix row_slice(const ops::Matrix& fused, int64_t row0, int64_t rows,
                      const std::string& name) {
  if (fused.row_bytes == 0) {
    throw_error(ErrorCode::kFormat, "tensor " + name + ": its type has no separately addressable "
                                    "rows, so its fused parts cannot be used");
  }
  if (row0 < 0 || rows <= 0 || row0 + rows > fused.rows) {
    throw_error(ErrorCode::kFormat, "tensor " + name + ": rows " + std::to_string(row0) + " .. " +
                                        std::to_string(row0 + rows) + " pass its " +
                                        std::to_string(fused.rows));
  }
  ops::Matrix m = fused;
  m.data = static_cast<const uint8_t*>(fused.data) + static_cast<size_t>(row0) * fused.row_bytes;
  m.interleaved = ops::interleaved_slice(fused, row0);
  m.rows = rows;
  return m;
}

ops::Matrix WeightLoader::view(const std::string& name, const std::vector<uint64_t>& want,
                               int64_t rows, int64_t cols) const {
  const gguf::TensorInfo& t = file_.get_tensor(name);
  if (t.shape != want) {
    throw_error(ErrorCode::kFormat, file_.path() + ": tensor " + name + " has shape " +
                                        shape_string(t.shape) + ", expected " + shape_string(want));
  }
  const auto traits = gguf::tensor_type_traits(t.type);
  const uint32_t block = traits.block_elements;
  if (traits.tile_rows == 1 && cols % block != 0) {
    throw_error(ErrorCode::kFormat, file_.path() + ": tensor " + name + " rows of " +
                                        std::to_string(cols) + " values do not fill whole " +
                                        std::to_string(block) + "-value blocks");
  }
  if (!ops::is_supported_weight_type(t.type)) {
    throw_error(ErrorCode::kUnsupported,
                file_.path() + ": tensor " + name + " has type " +
                    std::string(gguf::tensor_type_traits(t.type).name) +
                    ", which the engine does not run (f32, f16, bf16, q8_0, q4_0, q2_b, astc6x6)");
  }
  if (t.type == gguf::TensorType::kASTC6X6) {
    // Each matrix of a stack is tiled on its own: check every block once, here, so the
    // kernels never meet one the decoder refuses.
    const int64_t n = want.size() > 2 ? static_cast<int64_t>(want[2]) : 1;
    const int64_t matrix_rows = rows / n;
    const size_t bytes = ops::matrix_bytes(t.type, matrix_rows, cols);
    for (int64_t e = 0; e < n; ++e) {
      quant::astc::validate_matrix(static_cast<const uint8_t*>(t.data) + e * bytes, matrix_rows,
                                   cols, file_.path() + ": tensor " + name);
    }
  }
  ops::Matrix m;
  m.type = t.type;
  m.data = t.data;
  m.rows = rows;
  m.cols = cols;
  m.row_bytes = ops::row_bytes_for(t.type, cols);
  return m;
}

std::vector<float> WeightLoader::vector(const std::string& name, int64_t n) const {
  const gguf::TensorInfo& t = file_.get_tensor(name);
  const std::vector<uint64_t> want{static_cast<uint64_t>(n)};
  if (t.shape != want) {
    throw_error(ErrorCode::kFormat, file_.path() + ": tensor " + name + " has shape " +
                                        shape_string(t.shape) + ", expected " + shape_string(want));
  }
  const auto traits = gguf::tensor_type_traits(t.type);
  if (!ops::is_supported_weight_type(t.type) || n % traits.block_elements != 0) {
    throw_error(ErrorCode::kUnsupported, file_.path() + ": tensor " + name + " has type " +
                                             std::string(traits.name) + ", expected f32");
  }
  const ops::Matrix row{t.type, t.data, 1, n, ops::row_bytes_for(t.type, n)};
  std::vector<float> out(n);
  ops::dequantize_row(row, 0, out.data());
  return out;
}

std::vector<float> WeightLoader::optional_vector(const std::string& name, int64_t n) const {
  return has(name) ? vector(name, n) : std::vector<float>{};
}

}  // namespace afm::model
