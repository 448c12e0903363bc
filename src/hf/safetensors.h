// Bounds-checked, zero-copy reader of Hugging Face safetensors files, single or sharded.
//
// Format: u64 little-endian header length N, N bytes of JSON
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the data section; offsets are relative to it. "__metadata__" may be null (mlx writes
// that); shape [] is a scalar of one element.
// Contract: parse()/open() check the header length (<= 100 MB and inside the file), the JSON,
// every field's type, dtypes, shapes (product overflow), that end - begin equals the size the
// dtype and shape need, that ranges lie inside the data section and do not overlap, and
// duplicate names across shards. Errors are Error(kFormat) naming the file, tensor and problem.
// Views point into the mapping and live as long as the object. Immutable, thread-safe reads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mapped_file.h"

namespace afm::hf {

enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool, kF8E4M3, kF8E5M2 };

std::string dtype_name(DType t);
size_t dtype_size(DType t);

struct SafeTensor {
  std::string name;
  DType dtype;
  std::vector<uint64_t> shape;  // PyTorch order: shape.back() is contiguous
  std::span<const uint8_t> data;
  std::string file;  // which file holds it (for messages)

  uint64_t n_elements() const;
};

class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);
  // Parses bytes the caller keeps alive (fuzzing, tests).
  static SafetensorsFile parse(std::span<const uint8_t> bytes, std::string context);

  const std::vector<SafeTensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  void parse_all(std::span<const uint8_t> bytes);

  MappedFile mapping_;
  std::string context_;
  std::vector<SafeTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a model folder: model.safetensors, or the shards listed by
// model.safetensors.index.json (every listed shard must exist and hold exactly the tensors
// the index assigns to it), or every *.safetensors file when there is no index.
class SafetensorsModel {
 public:
  static SafetensorsModel open_dir(const std::string& dir);

  const SafeTensor* find(const std::string& name) const;
  const SafeTensor& get(const std::string& name) const;  // Error(kNotFound) naming it
  const std::vector<const SafeTensor*>& tensors() const { return order_; }  // sorted by name

 private:
  void add_file(const std::string& path);

  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::unordered_map<std::string, const SafeTensor*> by_name_;
  std::vector<const SafeTensor*> order_;
};

}  // namespace afm::hf
