#include "model_quantize.h"

#include <algorithm>
#include <memory>

#include "base/error.h"
#include "base/progress.h"
#include "gguf/writer.h"
#include "ops/embedding.h"
#include "ops/matrix.h"
#include "quant/astc6x6.h"
#include "quant/tensor_encode.h"

namespace afm::cli {
namespace {

bool contains_any(const std::string& name, const std::vector<std::string>& patterns) {
  for (const std::string& p : patterns) {
    if (!p.empty() && name.find(p) != std::string::npos) return true;
  }
  return false;
}

bool fits_blocks(gguf::TensorType type, uint64_t row_length) {
  const auto traits = gguf::tensor_type_traits(type);
  return traits.tile_rows > 1 || row_length % traits.block_elements == 0;
}

bool is_tile_type(gguf::TensorType type) { return gguf::tensor_type_traits(type).tile_rows > 1; }

// One matrix of a stack (shape[2..] matrices of shape[1] x shape[0]) decoded to floats.
std::vector<float> decode_matrix(const gguf::TensorInfo& t, int64_t index) {
  const int64_t cols = static_cast<int64_t>(t.shape[0]), rows = static_cast<int64_t>(t.shape[1]);
  const auto* data = static_cast<const uint8_t*>(t.data) + index * ops::matrix_bytes(t.type, rows, cols);
  std::vector<float> w(static_cast<size_t>(rows * cols));
  if (is_tile_type(t.type)) {
    quant::astc::decode_matrix(data, rows, cols, "tensor " + t.name, w.data());
  } else {
    const ops::Matrix in{t.type, data, rows, cols, ops::row_bytes_for(t.type, cols)};
    for (int64_t r = 0; r < rows; ++r) ops::dequantize_row(in, r, w.data() + r * cols);
  }
  return w;
}

// The tensor re-encoded a matrix at a time: the path when either type is a tile type.
std::vector<uint8_t> reencode_by_matrix(const gguf::TensorInfo& t, gguf::TensorType type,
                                        const quant::astc::EncodeOptions& astc) {
  const int64_t cols = static_cast<int64_t>(t.shape[0]), rows = static_cast<int64_t>(t.shape[1]);
  const int64_t stack = static_cast<int64_t>(t.n_elements()) / (rows * cols);
  const size_t bytes = ops::matrix_bytes(type, rows, cols);
  std::vector<uint8_t> out(bytes * stack);
  for (int64_t e = 0; e < stack; ++e) {
    const std::vector<float> w = decode_matrix(t, e);
    if (is_tile_type(type)) {
      quant::astc::encode_matrix(w.data(), rows, cols, astc, out.data() + e * bytes);
    } else {
      quant::encode_values(w.data(), w.size(), type, out.data() + e * bytes);
    }
  }
  return out;
}

// The tensor's values re-encoded row by row (rows of shape[0] values), so no more than one
// row of floats is held at a time (one matrix when either type is a tile type).
std::vector<uint8_t> reencode(const gguf::TensorInfo& t, gguf::TensorType type,
                              const quant::astc::EncodeOptions& astc) {
  if (is_tile_type(type) || is_tile_type(t.type)) return reencode_by_matrix(t, type, astc);
  const int64_t cols = static_cast<int64_t>(t.shape[0]);
  const int64_t rows = static_cast<int64_t>(t.n_elements()) / cols;
  const ops::Matrix in{t.type, t.data, rows, cols, ops::row_bytes_for(t.type, cols)};
  const size_t out_row = ops::row_bytes_for(type, cols);
  std::vector<uint8_t> out(out_row * rows);
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    ops::dequantize_row(in, r, row.data());
    quant::encode_values(row.data(), row.size(), type, out.data() + r * out_row);
  }
  return out;
}

void check_runnable(gguf::TensorType type, const char* option) {
  if (!ops::is_supported_weight_type(type)) {
    throw_error(ErrorCode::kInvalidArgument,
                std::string(option) + " " + std::string(gguf::tensor_type_traits(type).name) +
                    " is not a weight type the runtime runs (f32, f16, bf16, q8_0, q4_0, q2_b, "
                    "astc6x6)");
  }
}

// The type the options ask for this tensor, before the block-size fallback.
gguf::TensorType wanted_type(const gguf::TensorInfo& t, const QuantizeOptions& o) {
  const bool tiles = is_tile_type(o.type);
  if (t.name == "token_embd.weight") return o.embedding_type.value_or(tiles ? t.type : o.type);
  if (t.name == "output.weight") return o.output_type.value_or(tiles ? t.type : o.type);
  return o.type;
}

}  // namespace

gguf::TensorType target_type(const gguf::TensorInfo& t, const QuantizeOptions& o) {
  if (t.shape.size() < 2 || contains_any(t.name, o.keep) ||
      t.name.ends_with(".ffn_gate_inp.weight")) {
    return t.type;
  }
  const gguf::TensorType want = wanted_type(t, o);
  return fits_blocks(want, t.shape[0]) ? want : gguf::TensorType::kF16;
}

QuantizeSummary quantize_model(const gguf::File& in, const std::string& out_path,
                               const QuantizeOptions& o) {
  check_runnable(o.type, "--type");
  if (o.embedding_type) check_runnable(*o.embedding_type, "--embedding-type");
  if (o.output_type) check_runnable(*o.output_type, "--output-type");
  gguf::Writer w;
  // Metadata in the input's order, general.file_type replaced where it stands (a file that
  // gains nothing from re-encoding comes back byte for byte).
  const gguf::Value file_type(quant::llama_file_type(o.type));
  bool had_file_type = false;
  for (const auto& [key, value] : in.metadata()) {
    if (key == "general.alignment") continue;  // set_alignment writes it
    const bool is_file_type = key == "general.file_type";
    had_file_type |= is_file_type;
    w.set(key, is_file_type ? file_type : value);
  }
  if (!had_file_type) w.set("general.file_type", file_type);
  if (in.alignment() != gguf::kDefaultAlignment) {
    w.set_alignment(static_cast<uint32_t>(in.alignment()));
  }
  QuantizeSummary s;
  for (const gguf::TensorInfo& t : in.tensors()) {
    const gguf::TensorType type = target_type(t, o);
    ++s.tensors;
    s.bytes_in += t.n_bytes;
    const uint64_t bytes = gguf::Writer::tensor_bytes(type, t.shape);
    s.bytes_out += bytes;
    auto& totals = s.per_type[std::string(gguf::tensor_type_traits(type).name)];
    ++totals.tensors, totals.elements += t.n_elements(), totals.bytes += bytes;
    if (type == t.type) {
      ++s.kept;
      w.add_tensor(t.name, t.type, t.shape, t.bytes());
      continue;
    }
    if (!ops::is_supported_weight_type(t.type)) {
      throw_error(ErrorCode::kUnsupported,
                  in.path() + ": tensor " + t.name + " is " +
                      std::string(gguf::tensor_type_traits(t.type).name) +
                      ", which afm quantize cannot decode; keep it with --keep " + t.name);
    }
    ++s.converted;
    if (type != wanted_type(t, o)) ++s.fallbacks;  // rows that do not split into blocks
    const gguf::TensorInfo* info = &t;
    const quant::astc::EncodeOptions astc = o.astc;
    w.add_tensor(t.name, type, t.shape, [info, type, astc](std::vector<uint8_t>& out) {
      out = reencode(*info, type, astc);
    });
  }
  std::unique_ptr<ProgressBar> bar;
  if (o.progress) bar = std::make_unique<ProgressBar>("quantize", w.total_tensor_bytes());
  w.write(out_path, [&bar](uint64_t done, uint64_t) {
    if (bar) bar->update(done);
  });
  if (bar) bar->finish();
  return s;
}

}  // namespace afm::cli
