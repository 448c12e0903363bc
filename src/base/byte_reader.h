// Bounds-checked little-endian cursor over untrusted bytes (GGUF, safetensors headers).
//
// Contract: every read checks the remaining length first and throws Error(kFormat) with
// "<context>: <what> at byte offset N" when the input is too short. Never reads out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"

namespace afm {

class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> bytes, std::string context)
      : bytes_(bytes), context_(std::move(context)) {}

  uint64_t offset() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  const std::string& context() const { return context_; }

  template <typename T>
  T read(const char* what) {
    require(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::string_view read_bytes(uint64_t n, const char* what) {
    require(n, what);
    std::string_view s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<size_t>(n));
    pos_ += n;
    return s;
  }

  void seek(uint64_t offset, const char* what) {
    if (offset > bytes_.size()) fail(std::string(what) + " lies past the end of the input", offset);
    pos_ = offset;
  }

  [[noreturn]] void fail(const std::string& message, uint64_t offset) const {
    throw_error(ErrorCode::kFormat,
                context_ + ": " + message + " at byte offset " + std::to_string(offset));
  }
  [[noreturn]] void fail(const std::string& message) const { fail(message, pos_); }

 private:
  void require(uint64_t n, const char* what) const {
    if (n > remaining()) {
      fail(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " +
           std::to_string(remaining()) + " left");
    }
  }

  std::span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
  std::string context_;
};

}  // namespace afm
