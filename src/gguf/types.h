// GGUF v3 type codes: metadata value types and tensor element types (docs/gguf.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace afm::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kDefaultAlignment = 32;

enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

std::string_view value_type_name(ValueType t);
bool is_valid_value_type(uint32_t raw);

// Tensor element types with ggml's numbering. Blocks: Q8_0 = f16 scale + 32 x int8 (34 bytes),
// Q4_0 = f16 scale + 16 bytes of packed nibbles (18 bytes). New afm types take numbers above
// ggml's range (see docs/gguf.md) and are added here with their block layout:
// Q2_B = f16 scale + 32 bytes of 2-bit codes for 128 values (34 bytes; quant/balanced_2bit.h).
enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ8_0 = 8,
  kBF16 = 30,
  kQ2_B = 128,  // afm's balanced 2-bit type; ggml does not read it
};

struct TensorTypeTraits {
  std::string_view name;    // "f32", "q8_0", ...
  uint32_t block_elements;  // elements per block (1 for plain types)
  uint32_t block_bytes;     // bytes per block
};

// nullopt for a type number this build does not know.
std::optional<TensorTypeTraits> tensor_type_traits(uint32_t raw);
TensorTypeTraits tensor_type_traits(TensorType t);
std::optional<TensorType> tensor_type_from_name(std::string_view name);

}  // namespace afm::gguf
