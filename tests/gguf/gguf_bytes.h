// Test helper: builds GGUF byte streams field by field, so tests can craft malformed files.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace afm::gguf::testing {

class GgufBytes {
 public:
  GgufBytes& u8(uint8_t v) { return raw(&v, 1); }
  GgufBytes& u32(uint32_t v) { return raw(&v, 4); }
  GgufBytes& u64(uint64_t v) { return raw(&v, 8); }
  GgufBytes& f32(float v) { return raw(&v, 4); }
  GgufBytes& str(const std::string& s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  GgufBytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return u32(0x46554747).u32(version).u64(n_tensors).u64(n_kv);
  }
  // key + type + u32 value
  GgufBytes& kv_u32(const std::string& key, uint32_t v) { return str(key).u32(4).u32(v); }
  // tensor info: name, dims, type, offset
  GgufBytes& tensor(const std::string& name, std::vector<uint64_t> shape, uint32_t type,
                    uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(shape.size()));
    for (uint64_t d : shape) u64(d);
    return u32(type).u64(offset);
  }
  GgufBytes& pad_to(size_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back(0);
    return *this;
  }
  GgufBytes& zeros(size_t n) {
    bytes_.resize(bytes_.size() + n, 0);
    return *this;
  }
  GgufBytes& raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace afm::gguf::testing
