#include "quant/tensor_encode.h"

#include <cstring>

#include "base/error.h"
#include "base/half.h"
#include "quant/balanced_2bit.h"
#include "quant/block_formats.h"
#include "quant/k_quants.h"

namespace afm::quant {

namespace {

[[noreturn]] void tile_type(const char* what) {
  throw_error(ErrorCode::kUnsupported,
              std::string(what) + ": astc6x6 is a tile type, encoded and decoded a matrix at a time "
                                  "(quant/astc6x6.h, quant/astc_encoder.h), not as a run of values");
}

[[noreturn]] void read_only_type(gguf::TensorType type) {
  throw_error(ErrorCode::kUnsupported,
              "afm reads " + std::string(gguf::tensor_type_traits(type).name) +
                  " tensors but does not write them (llama.cpp's llama-quantize does); write one "
                  "of f32, f16, bf16, q8_0, q4_0, q2_b, astc6x6");
}

}  // namespace

bool can_encode(gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kF32:
    case gguf::TensorType::kF16:
    case gguf::TensorType::kBF16:
    case gguf::TensorType::kQ8_0:
    case gguf::TensorType::kQ4_0:
    case gguf::TensorType::kQ2_B:
    case gguf::TensorType::kASTC6X6:
      return true;
    default:
      return false;
  }
}

size_t encoded_bytes(gguf::TensorType type, size_t n) {
  const auto traits = gguf::tensor_type_traits(type);
  if (traits.tile_rows > 1) tile_type("encoded_bytes");
  return n / traits.block_elements * traits.block_bytes;
}

void encode_values(const float* x, size_t n, gguf::TensorType type, uint8_t* out) {
  switch (type) {
    case gguf::TensorType::kF32:
      std::memcpy(out, x, n * sizeof(float));
      return;
    case gguf::TensorType::kF16:
      convert_row_f32_to_f16(x, reinterpret_cast<uint16_t*>(out), n);
      return;
    case gguf::TensorType::kBF16:
      convert_row_f32_to_bf16(x, reinterpret_cast<uint16_t*>(out), n);
      return;
    case gguf::TensorType::kQ8_0:
      quantize_row_q8_0(x, reinterpret_cast<BlockQ8_0*>(out), n);
      return;
    case gguf::TensorType::kQ4_0:
      quantize_row_q4_0(x, reinterpret_cast<BlockQ4_0*>(out), n);
      return;
    case gguf::TensorType::kQ2_B:
      quantize_row_q2b_search(x, reinterpret_cast<BlockQ2B*>(out), n);
      return;
    case gguf::TensorType::kASTC6X6:
      tile_type("encode_values");
    default:
      read_only_type(type);
  }
}

void encode_tensor(const float* x, size_t n, gguf::TensorType type, std::vector<uint8_t>& out) {
  out.resize(encoded_bytes(type, n));
  encode_values(x, n, type, out.data());
}

void decode_values(const uint8_t* in, size_t n, gguf::TensorType type, float* out) {
  const auto* half = reinterpret_cast<const uint16_t*>(in);
  switch (type) {
    case gguf::TensorType::kF32:
      std::memcpy(out, in, n * sizeof(float));
      return;
    case gguf::TensorType::kF16:
      for (size_t i = 0; i < n; ++i) out[i] = f16_to_f32(half[i]);
      return;
    case gguf::TensorType::kBF16:
      for (size_t i = 0; i < n; ++i) out[i] = bf16_to_f32(half[i]);
      return;
    case gguf::TensorType::kQ8_0:
      dequantize_row_q8_0(reinterpret_cast<const BlockQ8_0*>(in), out, n);
      return;
    case gguf::TensorType::kQ4_0:
      dequantize_row_q4_0(reinterpret_cast<const BlockQ4_0*>(in), out, n);
      return;
    case gguf::TensorType::kQ4_1:
      dequantize_row_q4_1(reinterpret_cast<const BlockQ4_1*>(in), out, n);
      return;
    case gguf::TensorType::kQ5_0:
      dequantize_row_q5_0(reinterpret_cast<const BlockQ5_0*>(in), out, n);
      return;
    case gguf::TensorType::kQ5_1:
      dequantize_row_q5_1(reinterpret_cast<const BlockQ5_1*>(in), out, n);
      return;
    case gguf::TensorType::kQ2_K:
      dequantize_row_q2_k(reinterpret_cast<const BlockQ2_K*>(in), out, n);
      return;
    case gguf::TensorType::kQ3_K:
      dequantize_row_q3_k(reinterpret_cast<const BlockQ3_K*>(in), out, n);
      return;
    case gguf::TensorType::kQ4_K:
      dequantize_row_q4_k(reinterpret_cast<const BlockQ4_K*>(in), out, n);
      return;
    case gguf::TensorType::kQ5_K:
      dequantize_row_q5_k(reinterpret_cast<const BlockQ5_K*>(in), out, n);
      return;
    case gguf::TensorType::kQ6_K:
      dequantize_row_q6_k(reinterpret_cast<const BlockQ6_K*>(in), out, n);
      return;
    case gguf::TensorType::kQ2_B:
      dequantize_row_q2b(reinterpret_cast<const BlockQ2B*>(in), out, n);
      return;
    case gguf::TensorType::kASTC6X6:
      tile_type("decode_values");
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
    case gguf::TensorType::kQ4_1:
      return 3;
    case gguf::TensorType::kQ5_0:
      return 8;
    case gguf::TensorType::kQ5_1:
      return 9;
    case gguf::TensorType::kQ2_K:
      return 10;
    case gguf::TensorType::kQ3_K:
      return 12;  // Q3_K_M
    case gguf::TensorType::kQ4_K:
      return 15;  // Q4_K_M
    case gguf::TensorType::kQ5_K:
      return 17;  // Q5_K_M
    case gguf::TensorType::kQ6_K:
      return 18;
    case gguf::TensorType::kBF16:
      return 32;
    case gguf::TensorType::kQ2_B:
    case gguf::TensorType::kASTC6X6:
      return 1024;
  }
  return 0;
}

}  // namespace afm::quant
