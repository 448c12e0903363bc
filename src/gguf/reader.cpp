#include "gguf/reader.h"

#include <algorithm>
#include <limits>

#include "base/byte_reader.h"
#include "base/error.h"

namespace afm::gguf {

namespace {

constexpr uint64_t kMaxKeyBytes = 65535;      // the GGUF spec's limit for keys
constexpr int kMaxArrayDepth = 8;             // nested arrays deeper than this are rejected

// Smallest encoded size of one item of each value type: counts read from the file are
// checked against the bytes left before anything is allocated for them.
uint64_t min_encoded_size(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool:
      return 1;
    case ValueType::kUint16:
    case ValueType::kInt16:
      return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32:
      return 4;
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64:
      return 8;
    case ValueType::kString:
      return 8;  // length prefix
    case ValueType::kArray:
      return 12;  // element type + count
  }
  return 1;
}

// No real file is this large: a count needing more bytes is corruption, not truncation.
constexpr uint64_t kMaxPlausibleBytes = uint64_t{1} << 48;

// Throws when `count` items of at least `item_bytes` each cannot fit in the bytes left after
// the count (read at `at`). A plausible count means the file was cut short, and the message
// says so with both sizes; an impossible one is named as corrupt.
void require_fits(const ByteReader& r, const std::string& what, uint64_t count, uint64_t item_bytes,
                  uint64_t at) {
  if (count <= r.remaining() / item_bytes) return;
  const std::string head = what + " " + std::to_string(count);
  if (count > kMaxPlausibleBytes / item_bytes) {
    r.fail(head + " is absurd (the file has " + std::to_string(r.remaining()) + " bytes left)", at);
  }
  const uint64_t end = r.offset() + r.remaining();
  throw_error(ErrorCode::kFormat, r.context() + ": file truncated at byte offset " +
                                      std::to_string(end) + ": " + head + " (at byte offset " +
                                      std::to_string(at) + ") needs at least " +
                                      std::to_string(count * item_bytes) +
                                      " more bytes, the file has " + std::to_string(r.remaining()));
}

std::string read_string(ByteReader& r, const char* what) {
  uint64_t at = r.offset();
  uint64_t len = r.read<uint64_t>(what);
  require_fits(r, std::string(what) + " length", len, 1, at);
  return std::string(r.read_bytes(len, what));
}

Value read_value(ByteReader& r, ValueType type, int depth);

Value read_array(ByteReader& r, int depth) {
  uint64_t at = r.offset();
  if (depth >= kMaxArrayDepth)
    r.fail("arrays nested deeper than " + std::to_string(kMaxArrayDepth), at);
  uint32_t raw_type = r.read<uint32_t>("array element type");
  if (!is_valid_value_type(raw_type))
    r.fail("unknown array element type " + std::to_string(raw_type), at);
  Array a;
  a.element_type = static_cast<ValueType>(raw_type);
  uint64_t count_at = r.offset();
  uint64_t count = r.read<uint64_t>("array length");
  require_fits(r, "array length", count, min_encoded_size(a.element_type), count_at);
  a.items.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) a.items.push_back(read_value(r, a.element_type, depth + 1));
  return Value(std::move(a));
}

Value read_value(ByteReader& r, ValueType type, int depth) {
  switch (type) {
    case ValueType::kUint8:
      return Value(r.read<uint8_t>("u8 value"));
    case ValueType::kInt8:
      return Value(r.read<int8_t>("i8 value"));
    case ValueType::kUint16:
      return Value(r.read<uint16_t>("u16 value"));
    case ValueType::kInt16:
      return Value(r.read<int16_t>("i16 value"));
    case ValueType::kUint32:
      return Value(r.read<uint32_t>("u32 value"));
    case ValueType::kInt32:
      return Value(r.read<int32_t>("i32 value"));
    case ValueType::kFloat32:
      return Value(r.read<float>("f32 value"));
    case ValueType::kUint64:
      return Value(r.read<uint64_t>("u64 value"));
    case ValueType::kInt64:
      return Value(r.read<int64_t>("i64 value"));
    case ValueType::kFloat64:
      return Value(r.read<double>("f64 value"));
    case ValueType::kBool: {
      uint64_t at = r.offset();
      uint8_t b = r.read<uint8_t>("bool value");
      if (b > 1) r.fail("bool value " + std::to_string(b) + " is neither 0 nor 1", at);
      return Value(b == 1);
    }
    case ValueType::kString:
      return Value(read_string(r, "string value"));
    case ValueType::kArray:
      return read_array(r, depth);
  }
  AFM_CHECK(false);
}

// Multiplies dimensions with an overflow check; the product must fit in int64 like ggml's.
uint64_t checked_elements(const std::vector<uint64_t>& shape, ByteReader& r, uint64_t at) {
  uint64_t n = 1;
  for (uint64_t d : shape) {
    if (d != 0 && n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / d) {
      r.fail("tensor element count overflows", at);
    }
    n *= d;
  }
  return n;
}

// Tensors may appear in any order in the table, but their byte ranges must be disjoint.
void check_no_overlaps(const std::vector<TensorInfo>& tensors, const std::vector<uint64_t>& info_at,
                       ByteReader& r) {
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = tensors[order[k - 1]];
    const TensorInfo& cur = tensors[order[k]];
    if (prev.offset + prev.n_bytes > cur.offset) {
      r.fail("tensor '" + cur.name + "' overlaps tensor '" + prev.name + "'", info_at[order[k]]);
    }
  }
}

// A tensor whose bytes run past the data section (starting at `data_offset`). When they would
// end at a plausible size the file was cut short (an interrupted download or copy), and the
// message says where the data ends and where the file does.
[[noreturn]] void fail_extent(const ByteReader& r, const TensorInfo& t, uint64_t data_offset,
                              uint64_t at) {
  const uint64_t file_size = r.offset() + r.remaining();
  const std::string extent = "tensor '" + t.name + "' data [" + std::to_string(t.offset) + ", +" +
                             std::to_string(t.n_bytes) + ")";
  if (t.offset > kMaxPlausibleBytes || t.n_bytes > kMaxPlausibleBytes) {
    r.fail(extent + " lies outside the " + std::to_string(file_size - data_offset) +
               "-byte data section",
           at);
  }
  const uint64_t end = data_offset + t.offset + t.n_bytes;
  throw_error(ErrorCode::kFormat,
              r.context() + ": file truncated at byte offset " + std::to_string(file_size) + ": " +
                  extent + " (table entry at byte offset " + std::to_string(at) +
                  ") ends at byte offset " + std::to_string(end) + ", " +
                  std::to_string(end - file_size) + " bytes past the end of the file");
}

}  // namespace

uint64_t TensorInfo::n_elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

File File::open(const std::string& path) {
  File f;
  f.mapping_ = MappedFile::open(path);
  f.context_ = path;
  f.parse_all(f.mapping_.bytes());
  return f;
}

File File::parse(std::span<const uint8_t> bytes, std::string context) {
  File f;
  f.context_ = std::move(context);
  f.parse_all(bytes);
  return f;
}

void File::parse_all(std::span<const uint8_t> bytes) {
  ByteReader r(bytes, context_);
  file_size_ = bytes.size();

  uint32_t magic = r.read<uint32_t>("magic");
  if (magic != kMagic) {
    if (magic == 0x47475546u) r.fail("big-endian GGUF files are not supported", 0);
    r.fail("not a GGUF file (bad magic)", 0);
  }
  version_ = r.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3) {
    r.fail("unsupported GGUF version " + std::to_string(version_) + " (accepted: 2, 3)", 4);
  }
  uint64_t n_tensors = r.read<uint64_t>("tensor count");
  uint64_t n_kv = r.read<uint64_t>("metadata count");
  // Each key-value needs >= 13 bytes (length, one key byte, type); tensors are checked below.
  require_fits(r, "metadata count", n_kv, 13, 16);

  metadata_.reserve(static_cast<size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    uint64_t at = r.offset();
    std::string key = read_string(r, "metadata key");
    if (key.empty()) r.fail("empty metadata key", at);
    if (key.size() > kMaxKeyBytes) r.fail("metadata key longer than 65535 bytes", at);
    if (key_index_.count(key) != 0) r.fail("duplicate metadata key '" + key + "'", at);
    uint64_t type_at = r.offset();
    uint32_t raw_type = r.read<uint32_t>("metadata value type");
    if (!is_valid_value_type(raw_type)) {
      r.fail("metadata key '" + key + "' has unknown value type " + std::to_string(raw_type),
             type_at);
    }
    Value v = read_value(r, static_cast<ValueType>(raw_type), 0);
    key_index_.emplace(key, metadata_.size());
    metadata_.emplace_back(std::move(key), std::move(v));
  }

  if (const Value* a = find("general.alignment")) {
    if (a->type() != ValueType::kUint32) r.fail("general.alignment must be a u32", r.offset());
    alignment_ = a->as_u64("general.alignment");
    if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) {
      r.fail("general.alignment " + std::to_string(alignment_) + " is not a power of two",
             r.offset());
    }
  }

  // Each tensor entry needs >= 33 bytes (name length, one name byte, dims, one dim, type, offset).
  require_fits(r, "tensor count", n_tensors, 33, 8);
  std::vector<uint64_t> info_at;  // where each tensor's entry starts, for error messages
  tensors_.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    uint64_t at = r.offset();
    TensorInfo t;
    t.name = read_string(r, "tensor name");
    if (t.name.empty()) r.fail("empty tensor name", at);
    if (t.name.size() > kMaxTensorNameBytes) {
      r.fail("tensor name '" + t.name.substr(0, 40) + "...' longer than 63 bytes", at);
    }
    if (tensor_index_.count(t.name) != 0) r.fail("duplicate tensor name '" + t.name + "'", at);
    uint64_t dims_at = r.offset();
    uint32_t n_dims = r.read<uint32_t>("tensor dimension count");
    if (n_dims == 0 || n_dims > kMaxDims) {
      r.fail("tensor '" + t.name + "' has " + std::to_string(n_dims) + " dimensions (1..4 allowed)",
             dims_at);
    }
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim_at = r.offset();
      uint64_t dim = r.read<uint64_t>("tensor dimension");
      if (dim == 0) r.fail("tensor '" + t.name + "' has a zero dimension", dim_at);
      t.shape.push_back(dim);
    }
    uint64_t type_at = r.offset();
    uint32_t raw_type = r.read<uint32_t>("tensor type");
    auto traits = tensor_type_traits(raw_type);
    if (!traits) {
      r.fail("tensor '" + t.name + "' has unknown or unsupported type " + std::to_string(raw_type),
             type_at);
    }
    t.type = static_cast<TensorType>(raw_type);
    uint64_t n = checked_elements(t.shape, r, dims_at);
    (void)n;  // checked_elements bounds the element count, which bounds the byte count
    const std::optional<uint64_t> bytes = tensor_data_bytes(t.type, t.shape);
    if (!bytes) {
      r.fail("tensor '" + t.name + "': " +
                 (traits->tile_rows > 1
                      ? std::string(traits->name) + " is a tile type, so it needs a matrix"
                      : "row length " + std::to_string(t.shape[0]) + " is not a multiple of the " +
                            std::string(traits->name) + " block size"),
             dims_at);
    }
    t.n_bytes = *bytes;
    t.offset = r.read<uint64_t>("tensor data offset");
    t.data = nullptr;
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
    info_at.push_back(at);
  }

  data_offset_ = align_up(r.offset(), alignment_);
  if (n_tensors > 0 && data_offset_ > file_size_) {
    r.fail("file truncated: the tensor data section starts at byte offset " +
               std::to_string(data_offset_) + ", past the file's end at byte offset " +
               std::to_string(file_size_),
           r.offset());
  }
  uint64_t data_size = data_offset_ <= file_size_ ? file_size_ - data_offset_ : 0;
  data_section_ = bytes.subspan(static_cast<size_t>(file_size_ - data_size));
  for (size_t i = 0; i < tensors_.size(); ++i) {
    TensorInfo& t = tensors_[i];
    if (t.offset % alignment_ != 0) {
      r.fail("tensor '" + t.name + "' data offset " + std::to_string(t.offset) +
                 " is not aligned to " + std::to_string(alignment_),
             info_at[i]);
    }
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      fail_extent(r, t, data_offset_, info_at[i]);
    }
    t.data = bytes.data() + data_offset_ + t.offset;
  }
  check_no_overlaps(tensors_, info_at, r);
}

}  // namespace afm::gguf

namespace afm::gguf {

const Value* File::find(std::string_view key) const {
  auto it = key_index_.find(std::string(key));
  return it == key_index_.end() ? nullptr : &metadata_[it->second].second;
}

const Value& File::get(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) {
    throw_error(ErrorCode::kNotFound,
                context_ + ": missing metadata key '" + std::string(key) + "'");
  }
  return *v;
}

uint32_t File::get_u32(std::string_view key) const {
  uint64_t v = get_u64(key);
  if (v > std::numeric_limits<uint32_t>::max()) {
    throw_error(ErrorCode::kFormat, context_ + ": metadata key '" + std::string(key) + "' value " +
                                        std::to_string(v) + " does not fit in u32");
  }
  return static_cast<uint32_t>(v);
}

std::string File::architecture() const {
  const Value* v = find("general.architecture");
  return v != nullptr && v->is_string() ? v->as_string("general.architecture") : std::string();
}

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& File::get_tensor(std::string_view name) const {
  const TensorInfo* t = find_tensor(name);
  if (t == nullptr) {
    throw_error(ErrorCode::kNotFound, context_ + ": missing tensor '" + std::string(name) + "'");
  }
  return *t;
}

}  // namespace afm::gguf
