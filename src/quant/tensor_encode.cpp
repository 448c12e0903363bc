#include "quant/tensor_encode.h"

#include <cstring>

#include "quant/block_formats.h"

namespace afm::quant {

void encode_tensor(const float* x, size_t n, gguf::TensorType type, std::vector<uint8_t>& out) {
  const auto traits = gguf::tensor_type_traits(type);
  out.resize(n / traits.block_elements * traits.block_bytes);
  switch (type) {
    case gguf::TensorType::kF32:
      std::memcpy(out.data(), x, n * 4);
      break;
    case gguf::TensorType::kF16:
      convert_row_f32_to_f16(x, reinterpret_cast<uint16_t*>(out.data()), n);
      break;
    case gguf::TensorType::kBF16:
      convert_row_f32_to_bf16(x, reinterpret_cast<uint16_t*>(out.data()), n);
      break;
    case gguf::TensorType::kQ8_0:
      quantize_row_q8_0(x, reinterpret_cast<BlockQ8_0*>(out.data()), n);
      break;
    case gguf::TensorType::kQ4_0:
      quantize_row_q4_0(x, reinterpret_cast<BlockQ4_0*>(out.data()), n);
      break;
  }
}

uint32_t llama_file_type(gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kF32:
      return 0;
    case gguf::TensorType::kF16:
      return 1;
    case gguf::TensorType::kQ4_0:
      return 2;
    case gguf::TensorType::kQ8_0:
      return 7;
    case gguf::TensorType::kBF16:
      return 32;
  }
  return 0;
}

}  // namespace afm::quant
