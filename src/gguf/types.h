// GGUF v3 type codes: metadata value types and tensor element types (docs/gguf.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace afm::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr uint32_t kVersion = 3;
inline constexpr uint32_t kDefaultAlignment = 32;
// ggml's GGML_MAX_NAME - 1: longer tensor names are not loadable by llama.cpp.
inline constexpr uint64_t kMaxTensorNameBytes = 63;

// x rounded up to a multiple of alignment (> 0): where the data section and each tensor start.
inline constexpr uint64_t align_up(uint64_t x, uint64_t alignment) {
  return (x + alignment - 1) / alignment * alignment;
}

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
// ASTC6X6 is a tile type, not a row-block type: each 6 x 6 tile of a matrix is one 16-byte ASTC
// block plus one f16 offset (quant/astc6x6.h), so its size depends on both dimensions:
// tensor_data_bytes.
enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,   // read only, like the types below (quant/block_formats.h, quant/k_quants.h)
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kBF16 = 30,
  kQ2_B = 128,     // afm's balanced 2-bit type; ggml does not read it
  kASTC6X6 = 129,  // afm's ASTC 6x6 HDR tiles with per-tile offsets; ggml does not read it
};

struct TensorTypeTraits {
  std::string_view name;    // "f32", "q8_0", ...
  uint32_t block_elements;  // elements per block (1 for plain types)
  uint32_t block_bytes;     // bytes per block
  uint32_t tile_rows = 1;   // rows one block spans: 1 for row-block types, 6 for astc6x6
};

// nullopt for a type number this build does not know.
std::optional<TensorTypeTraits> tensor_type_traits(uint32_t raw);
TensorTypeTraits tensor_type_traits(TensorType t);
std::optional<TensorType> tensor_type_from_name(std::string_view name);

// Bytes of a tensor of `type` and `shape` (ggml order: shape[0] is the row length), or nullopt
// when the shape does not suit the type: a row-block type needs shape[0] to be a multiple of its
// block; a tile type needs at least two dimensions (a stack of shape[1] x shape[0] matrices,
// each tiled on its own, edges padded up to whole tiles). The caller checks element overflow.
std::optional<uint64_t> tensor_data_bytes(TensorType type, const std::vector<uint64_t>& shape);

}  // namespace afm::gguf
