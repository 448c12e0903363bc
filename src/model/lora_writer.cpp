#include "model/lora_writer.h"

#include <cstring>

#include "base/error.h"
#include "base/half.h"
#include "gguf/digest.h"
#include "model/lora.h"

namespace afm::model {
namespace {

std::vector<uint8_t> encode(std::span<const float> v, gguf::TensorType type) {
  std::vector<uint8_t> out;
  if (type == gguf::TensorType::kF32) {
    out.resize(v.size() * sizeof(float));
    std::memcpy(out.data(), v.data(), out.size());
  } else {
    out.resize(v.size() * sizeof(uint16_t));
    for (size_t i = 0; i < v.size(); ++i) {
      const uint16_t h = f32_to_f16(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
  }
  return out;
}

}  // namespace

LoraWriter::LoraWriter(const gguf::File& base, float alpha) : base_(base) {
  writer_.set("general.architecture", gguf::Value(base.architecture()));
  writer_.set("general.type", gguf::Value("adapter"));
  writer_.set("adapter.type", gguf::Value("lora"));
  writer_.set("adapter.lora.alpha", gguf::Value(alpha));
  writer_.set(kAdapterBaseSha256Key, gguf::Value(gguf::data_section_sha256(base)));
}

void LoraWriter::add(const std::string& name, int64_t rank, std::span<const float> a,
                     std::span<const float> b, gguf::TensorType type) {
  const gguf::TensorInfo* w = base_.find_tensor(name);
  if (!w) {
    throw_error(ErrorCode::kNotFound, "adapter writer: base model " + base_.path() +
                                          " has no tensor " + name);
  }
  if (!is_adaptable_tensor(name) || w->shape.size() < 2) {
    throw_error(ErrorCode::kUnsupported, "adapter writer: " + name + " cannot be adapted");
  }
  if (type != gguf::TensorType::kF32 && type != gguf::TensorType::kF16) {
    throw_error(ErrorCode::kInvalidArgument, "adapter writer: " + name + ": type must be f32 or f16");
  }
  const uint64_t in = w->shape[0], out = w->shape[1];
  const uint64_t n = w->shape.size() == 3 ? w->shape[2] : 1, r = static_cast<uint64_t>(rank);
  if (rank <= 0 || a.size() != n * r * in || b.size() != n * out * r) {
    throw_error(ErrorCode::kInvalidArgument,
                "adapter writer: " + name + ": rank " + std::to_string(rank) + " needs " +
                    std::to_string(n * r * in) + " A and " + std::to_string(n * out * r) +
                    " B values, got " + std::to_string(a.size()) + " and " +
                    std::to_string(b.size()));
  }
  std::vector<uint64_t> shape_a{in, r}, shape_b{r, out};
  if (n > 1 || w->shape.size() == 3) shape_a.push_back(n), shape_b.push_back(n);
  writer_.add_tensor(name + ".lora_a", type, shape_a, encode(a, type));
  writer_.add_tensor(name + ".lora_b", type, shape_b, encode(b, type));
}

}  // namespace afm::model
