// GGUF v3 reader: parses the header, metadata and tensor table, and hands out zero-copy views
// of tensor data inside a read-only mmap.
//
// Contract: open()/parse() validate everything docs/gguf.md lists (magic, version, counts,
// string lengths, types, duplicate keys and names, alignment, tensor extents and overlaps) and
// throw Error(kFormat) naming the problem and its byte offset; they never read out of bounds,
// never allocate from an unchecked count and never loop without consuming input.
// A File is immutable after loading and safe to share between threads. Tensor views point into
// the mapping and live as long as the File.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/mapped_file.h"
#include "gguf/types.h"
#include "gguf/value.h"

namespace afm::gguf {

inline constexpr uint32_t kMaxDims = 4;

struct TensorInfo {
  std::string name;
  std::vector<uint64_t> shape;  // ggml order: shape[0] is the contiguous (innermost) dimension
  TensorType type;
  uint64_t offset;  // relative to the start of the data section
  uint64_t n_bytes;
  const uint8_t* data;  // into the mapping (or the parsed buffer)

  uint64_t n_elements() const;
  std::span<const uint8_t> bytes() const { return {data, static_cast<size_t>(n_bytes)}; }
};

using KeyValue = std::pair<std::string, Value>;

class File {
 public:
  // Maps `path` and parses it. Throws Error(kIo) or Error(kFormat).
  static File open(const std::string& path);
  // Parses bytes the caller keeps alive for the File's lifetime (fuzzing, tests).
  static File parse(std::span<const uint8_t> bytes, std::string context = "gguf");

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return file_size_; }
  const std::string& path() const { return context_; }
  // The tensor data section: data_offset() to the end of the file (empty when the header
  // fills the file). Lives as long as the File.
  std::span<const uint8_t> data_section() const { return data_section_; }
  // MappedFile::drop_resident for a range of the data section of an opened file; nothing for
  // a parsed buffer (its bytes belong to the caller).
  void drop_resident(std::span<const uint8_t> bytes) const { mapping_.drop_resident(bytes); }

  const std::vector<KeyValue>& metadata() const { return metadata_; }  // file order
  const Value* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // Throws Error(kNotFound) naming the key when absent, Error(kFormat) on a type mismatch.
  const Value& get(std::string_view key) const;
  uint64_t get_u64(std::string_view key) const { return get(key).as_u64(key); }
  uint32_t get_u32(std::string_view key) const;
  double get_f64(std::string_view key) const { return get(key).as_f64(key); }
  const std::string& get_string(std::string_view key) const { return get(key).as_string(key); }
  // general.architecture, or "" when absent.
  std::string architecture() const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // file order
  const TensorInfo* find_tensor(std::string_view name) const;
  const TensorInfo& get_tensor(std::string_view name) const;  // Error(kNotFound) when absent

 private:
  void parse_all(std::span<const uint8_t> bytes);

  MappedFile mapping_;
  std::string context_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  uint64_t file_size_ = 0;
  std::span<const uint8_t> data_section_;
  std::vector<KeyValue> metadata_;
  std::unordered_map<std::string, size_t> key_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;
};

}  // namespace afm::gguf
