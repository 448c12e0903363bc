#include "gguf/types.h"

#include <array>

#include "base/error.h"

namespace afm::gguf {

std::string_view value_type_name(ValueType t) {
  static constexpr std::array<std::string_view, 13> kNames = {
      "u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
      "bool", "string", "array", "u64", "i64", "f64"};
  auto i = static_cast<uint32_t>(t);
  return i < kNames.size() ? kNames[i] : "unknown";
}

bool is_valid_value_type(uint32_t raw) { return raw <= static_cast<uint32_t>(ValueType::kFloat64); }

std::optional<TensorTypeTraits> tensor_type_traits(uint32_t raw) {
  switch (static_cast<TensorType>(raw)) {
    case TensorType::kF32:
      return TensorTypeTraits{"f32", 1, 4};
    case TensorType::kF16:
      return TensorTypeTraits{"f16", 1, 2};
    case TensorType::kBF16:
      return TensorTypeTraits{"bf16", 1, 2};
    case TensorType::kQ8_0:
      return TensorTypeTraits{"q8_0", 32, 34};
    case TensorType::kQ4_0:
      return TensorTypeTraits{"q4_0", 32, 18};
    case TensorType::kQ4_1:
      return TensorTypeTraits{"q4_1", 32, 20};
    case TensorType::kQ5_0:
      return TensorTypeTraits{"q5_0", 32, 22};
    case TensorType::kQ5_1:
      return TensorTypeTraits{"q5_1", 32, 24};
    case TensorType::kQ2_K:
      return TensorTypeTraits{"q2_k", 256, 84};
    case TensorType::kQ3_K:
      return TensorTypeTraits{"q3_k", 256, 110};
    case TensorType::kQ4_K:
      return TensorTypeTraits{"q4_k", 256, 144};
    case TensorType::kQ5_K:
      return TensorTypeTraits{"q5_k", 256, 176};
    case TensorType::kQ6_K:
      return TensorTypeTraits{"q6_k", 256, 210};
    case TensorType::kQ2_B:
      return TensorTypeTraits{"q2_b", 128, 34};
    case TensorType::kASTC6X6:
      return TensorTypeTraits{"astc6x6", 36, 18, 6};
  }
  return std::nullopt;
}

TensorTypeTraits tensor_type_traits(TensorType t) {
  auto traits = tensor_type_traits(static_cast<uint32_t>(t));
  AFM_CHECK(traits.has_value());
  return *traits;
}

std::optional<TensorType> tensor_type_from_name(std::string_view name) {
  for (TensorType t : {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0,
                       TensorType::kQ4_0, TensorType::kQ4_1, TensorType::kQ5_0, TensorType::kQ5_1,
                       TensorType::kQ2_K, TensorType::kQ3_K, TensorType::kQ4_K, TensorType::kQ5_K,
                       TensorType::kQ6_K, TensorType::kQ2_B, TensorType::kASTC6X6}) {
    if (tensor_type_traits(t).name == name) return t;
  }
  return std::nullopt;
}

std::optional<uint64_t> tensor_data_bytes(TensorType type, const std::vector<uint64_t>& shape) {
  const TensorTypeTraits traits = tensor_type_traits(type);
  if (shape.empty()) return std::nullopt;
  if (traits.tile_rows > 1) {
    if (shape.size() < 2) return std::nullopt;
    const uint64_t side = traits.tile_rows;  // square tiles
    uint64_t tiles = ((shape[0] + side - 1) / side) * ((shape[1] + side - 1) / side);
    for (size_t d = 2; d < shape.size(); ++d) tiles *= shape[d];
    return tiles * traits.block_bytes;
  }
  if (shape[0] % traits.block_elements != 0) return std::nullopt;
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n / traits.block_elements * traits.block_bytes;
}

}  // namespace afm::gguf
