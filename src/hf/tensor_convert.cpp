#include "hf/tensor_convert.h"

#include <cstring>

#include "base/error.h"
#include "base/half.h"
#include "quant/block_formats.h"
#include "quant/tensor_encode.h"

namespace afm::hf {

gguf::TensorType storage_type(const SafeTensor& t, gguf::TensorType requested) {
  if (t.shape.size() <= 1) return gguf::TensorType::kF32;
  const uint32_t block = gguf::tensor_type_traits(requested).block_elements;
  if (t.shape.back() % block != 0) return gguf::TensorType::kF16;
  return requested;
}

std::vector<float> to_f32(const SafeTensor& t) {
  const uint64_t n = t.n_elements();
  std::vector<float> out(n);
  const uint8_t* p = t.data.data();
  switch (t.dtype) {
    case DType::kF32:
      std::memcpy(out.data(), p, n * 4);
      break;
    case DType::kF16:
    case DType::kBF16:
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = t.dtype == DType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
      break;
    default:
      throw_error(ErrorCode::kUnsupported, t.file + ": tensor '" + t.name + "' has dtype " +
                                               dtype_name(t.dtype) +
                                               " (supported: F32, F16, BF16)");
  }
  return out;
}

std::vector<float> permute_rope_rows(const std::vector<float>& x, uint64_t rows, uint64_t cols,
                                     uint64_t n_head) {
  AFM_CHECK(n_head > 0 && rows % (2 * n_head) == 0 && x.size() == rows * cols);
  const uint64_t head_dim = rows / n_head, half = head_dim / 2;
  std::vector<float> out(x.size());
  for (uint64_t h = 0; h < n_head; ++h) {
    for (uint64_t i = 0; i < half; ++i) {
      for (uint64_t j = 0; j < 2; ++j) {
        const float* src = &x[(h * head_dim + j * half + i) * cols];
        std::memcpy(&out[(h * head_dim + 2 * i + j) * cols], src, cols * sizeof(float));
      }
    }
  }
  return out;
}

void encode(const std::vector<float>& x, gguf::TensorType type, std::vector<uint8_t>& out) {
  quant::encode_tensor(x.data(), x.size(), type, out);
}

}  // namespace afm::hf
