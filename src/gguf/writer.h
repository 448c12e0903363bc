// GGUF v3 writer. Collects metadata and tensors, then writes the file atomically.
//
// Contract: set() and add_tensor() reject duplicate keys/names, invalid shapes and sizes that
// do not match the type with Error(kInvalidArgument). Tensor bytes are either given up front
// or produced on demand by a callback at write time (so a converter never holds a whole model
// in memory). write() lays tensors out in insertion order, each aligned to `alignment`, writes
// to a temporary file and renames it into place; on any error the target is untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "gguf/reader.h"
#include "gguf/types.h"
#include "gguf/value.h"

namespace afm::gguf {

class Writer {
 public:
  // Produces exactly the tensor's n_bytes into `out` (resized by the writer).
  using Producer = std::function<void(std::vector<uint8_t>& out)>;
  // Called after each tensor is written with (bytes_written_so_far, total_bytes).
  using ProgressFn = std::function<void(uint64_t, uint64_t)>;

  Writer() = default;

  void set(std::string key, Value value);
  void set_alignment(uint32_t alignment);  // also stored as general.alignment (u32)
  void add_tensor(std::string name, TensorType type, std::vector<uint64_t> shape,
                  std::span<const uint8_t> data);
  void add_tensor(std::string name, TensorType type, std::vector<uint64_t> shape,
                  Producer producer);

  const std::vector<KeyValue>& metadata() const { return metadata_; }
  uint64_t total_tensor_bytes() const;

  void write(const std::string& path, const ProgressFn& progress = nullptr) const;

  // Bytes a tensor of this type and shape takes; Error(kInvalidArgument) when the innermost
  // dimension is not a multiple of the block size or the shape is empty/too deep.
  static uint64_t tensor_bytes(TensorType type, const std::vector<uint64_t>& shape);

 private:
  struct PendingTensor {
    std::string name;
    TensorType type;
    std::vector<uint64_t> shape;
    uint64_t n_bytes;
    Producer producer;
  };
  void add_pending(PendingTensor t);

  std::vector<KeyValue> metadata_;
  std::vector<PendingTensor> tensors_;
  uint32_t alignment_ = kDefaultAlignment;
};

}  // namespace afm::gguf
