// Reading token shards (shard_format.h) for training.
//
// ShardView validates and reads a shard held in memory (it does not own the bytes);
// ShardReader maps a shard file and owns the mapping. Validation happens once, when the view
// is made: header fields against the file size, and with verify_tokens every token against
// vocab_size. Errors are Error(kFormat) (kUnsupported for another version) whose message
// starts with "shard <file>:" and names the field or the token index; the file cannot be
// opened -> Error(kIo). Both are immutable after construction and safe to read from many
// threads.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/mapped_file.h"
#include "data/shard_format.h"

namespace afm::data {

class ShardView {
 public:
  ShardView() = default;
  // `bytes` is the whole shard file; it must outlive the view.
  static ShardView parse(std::span<const uint8_t> bytes, const std::string& name,
                         bool verify_tokens = false);

  uint64_t n_tokens() const { return header_.n_tokens; }
  uint32_t vocab_size() const { return header_.vocab_size; }
  uint32_t token_bytes() const { return header_.token_bytes; }
  const std::string& name() const { return name_; }

  // Token i (i < n_tokens()).
  uint32_t token(uint64_t i) const {
    const uint8_t* p = payload_ + i * header_.token_bytes;
    return header_.token_bytes == 2 ? uint32_t{p[0]} | (uint32_t{p[1]} << 8) : load_le32(p);
  }
  // Copies tokens [begin, begin + out.size()) into out; Error(kInvalidArgument) when the range
  // is past the end.
  void read(uint64_t begin, std::span<int32_t> out) const;
  void read(uint64_t begin, std::span<int64_t> out) const;
  // The raw little-endian token bytes, n_tokens() * token_bytes() of them.
  std::span<const uint8_t> payload() const {
    return {payload_, header_.n_tokens * header_.token_bytes};
  }

  // Error(kFormat) naming the first token >= vocab_size and its index.
  void verify_tokens() const;

 private:
  template <typename T>
  void read_into(uint64_t begin, std::span<T> out) const;

  ShardHeader header_;
  const uint8_t* payload_ = nullptr;
  std::string name_;
};

class ShardReader {
 public:
  static ShardReader open(const std::string& path, bool verify_tokens = false);
  const ShardView& view() const { return view_; }
  uint64_t n_tokens() const { return view_.n_tokens(); }
  uint32_t token(uint64_t i) const { return view_.token(i); }

 private:
  MappedFile file_;
  ShardView view_;
};

}  // namespace afm::data
