#include "gguf/writer.h"

#include <limits>
#include <unordered_set>

#include "base/atomic_file.h"
#include "base/error.h"

namespace afm::gguf {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw_error(ErrorCode::kInvalidArgument, "gguf writer: " + message);
}

template <typename T>
void put(AtomicFileWriter& out, T v) {
  out.write(&v, sizeof(T));
}

void put_string(AtomicFileWriter& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.write(s);
}

void put_value(AtomicFileWriter& out, const Value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          put_string(out, x);
        } else if constexpr (std::is_same_v<T, Array>) {
          put<uint32_t>(out, static_cast<uint32_t>(x.element_type));
          put<uint64_t>(out, x.items.size());
          for (const Value& item : x.items) put_value(out, item);
        } else if constexpr (std::is_same_v<T, bool>) {
          put<uint8_t>(out, x ? 1 : 0);
        } else {
          put<T>(out, x);
        }
      },
      v.storage());
}

// Arrays must be homogeneous: every item has the declared element type.
void check_array_types(const std::string& key, const Value& v) {
  if (!v.is_array()) return;
  const Array& a = v.as_array(key);
  for (const Value& item : a.items) {
    if (item.type() != a.element_type) {
      invalid("metadata key '" + key + "': array of " +
              std::string(value_type_name(a.element_type)) + " holds a " +
              std::string(value_type_name(item.type())));
    }
    check_array_types(key, item);
  }
}

}  // namespace

uint64_t Writer::tensor_bytes(TensorType type, const std::vector<uint64_t>& shape) {
  if (shape.empty() || shape.size() > kMaxDims) invalid("tensor must have 1..4 dimensions");
  TensorTypeTraits traits = tensor_type_traits(type);
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (d == 0) invalid("tensor has a zero dimension");
    if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / d) {
      invalid("tensor element count overflows");
    }
    n *= d;
  }
  const std::optional<uint64_t> bytes = tensor_data_bytes(type, shape);
  if (!bytes && traits.tile_rows > 1) {
    invalid(std::string(traits.name) + " is a tile type: the tensor must have 2..4 dimensions");
  }
  if (!bytes) {
    invalid("row length " + std::to_string(shape[0]) + " is not a multiple of the " +
            std::string(traits.name) + " block size " + std::to_string(traits.block_elements));
  }
  return *bytes;
}

void Writer::set(std::string key, Value value) {
  if (key.empty()) invalid("empty metadata key");
  for (const KeyValue& kv : metadata_) {
    if (kv.first == key) invalid("duplicate metadata key '" + key + "'");
  }
  check_array_types(key, value);
  metadata_.emplace_back(std::move(key), std::move(value));
}

void Writer::set_alignment(uint32_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    invalid("alignment " + std::to_string(alignment) + " is not a power of two");
  }
  alignment_ = alignment;
  set("general.alignment", Value(alignment));
}

void Writer::add_tensor(std::string name, TensorType type, std::vector<uint64_t> shape,
                        std::span<const uint8_t> data) {
  uint64_t n_bytes = tensor_bytes(type, shape);
  if (data.size() != n_bytes) {
    invalid("tensor '" + name + "' has " + std::to_string(data.size()) + " bytes, its type and " +
            "shape need " + std::to_string(n_bytes));
  }
  std::vector<uint8_t> copy(data.begin(), data.end());
  add_pending({std::move(name), type, std::move(shape), n_bytes,
               [copy = std::move(copy)](std::vector<uint8_t>& out) { out = copy; }});
}

void Writer::add_tensor(std::string name, TensorType type, std::vector<uint64_t> shape,
                        Producer producer) {
  uint64_t n_bytes = tensor_bytes(type, shape);
  add_pending({std::move(name), type, std::move(shape), n_bytes, std::move(producer)});
}

void Writer::add_pending(PendingTensor t) {
  if (t.name.empty()) invalid("empty tensor name");
  if (t.name.size() > kMaxTensorNameBytes) invalid("tensor name '" + t.name + "' is over 63 bytes");
  for (const PendingTensor& other : tensors_) {
    if (other.name == t.name) invalid("duplicate tensor name '" + t.name + "'");
  }
  tensors_.push_back(std::move(t));
}

uint64_t Writer::total_tensor_bytes() const {
  uint64_t total = 0;
  for (const PendingTensor& t : tensors_) total += t.n_bytes;
  return total;
}

void Writer::write(const std::string& path, const ProgressFn& progress) const {
  AtomicFileWriter out(path);
  put<uint32_t>(out, kMagic);
  put<uint32_t>(out, kVersion);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, metadata_.size());
  for (const KeyValue& kv : metadata_) {
    put_string(out, kv.first);
    put<uint32_t>(out, static_cast<uint32_t>(kv.second.type()));
    put_value(out, kv.second);
  }
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    put_string(out, t.name);
    put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (uint64_t d : t.shape) put<uint64_t>(out, d);
    put<uint32_t>(out, static_cast<uint32_t>(t.type));
    put<uint64_t>(out, offset);
    offset = align_up(offset + t.n_bytes, alignment_);
  }
  out.write_zeros(align_up(out.bytes_written(), alignment_) - out.bytes_written());

  uint64_t total = total_tensor_bytes();
  uint64_t done = 0;
  std::vector<uint8_t> buffer;
  for (const PendingTensor& t : tensors_) {
    buffer.clear();
    t.producer(buffer);
    if (buffer.size() != t.n_bytes) {
      throw_error(ErrorCode::kInternal, "gguf writer: tensor '" + t.name + "' produced " +
                                            std::to_string(buffer.size()) + " bytes, expected " +
                                            std::to_string(t.n_bytes));
    }
    out.write(buffer.data(), buffer.size());
    out.write_zeros(align_up(t.n_bytes, alignment_) - t.n_bytes);
    done += t.n_bytes;
    if (progress) progress(done, total);
  }
  out.commit();
}

}  // namespace afm::gguf
