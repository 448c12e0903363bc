#include "hf/safetensors.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/byte_reader.h"
#include "base/error.h"

namespace afm::hf {

namespace {

constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeInfo {
  const char* name;
  DType dtype;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {"F64", DType::kF64, 8},   {"F32", DType::kF32, 4},        {"F16", DType::kF16, 2},
    {"BF16", DType::kBF16, 2}, {"I64", DType::kI64, 8},        {"I32", DType::kI32, 4},
    {"I16", DType::kI16, 2},   {"I8", DType::kI8, 1},          {"U8", DType::kU8, 1},
    {"BOOL", DType::kBool, 1}, {"F8_E4M3", DType::kF8E4M3, 1}, {"F8_E5M2", DType::kF8E5M2, 1},
};

const DTypeInfo* find_dtype(const std::string& name) {
  for (const DTypeInfo& d : kDTypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

[[noreturn]] void fail(const std::string& context, const std::string& message) {
  throw_error(ErrorCode::kFormat, context + ": " + message);
}

SafeTensor parse_entry(const std::string& context, const std::string& name,
                       const nlohmann::json& entry, std::span<const uint8_t> data) {
  const std::string where = "tensor '" + name + "'";
  if (!entry.is_object()) fail(context, where + " is not an object");
  auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end() || !dtype_it->is_string()) fail(context, where + " has no dtype");
  const DTypeInfo* dtype = find_dtype(dtype_it->get<std::string>());
  if (dtype == nullptr) fail(context, where + " has unknown dtype " + dtype_it->dump());
  auto shape_it = entry.find("shape");
  if (shape_it == entry.end() || !shape_it->is_array()) fail(context, where + " has no shape");
  SafeTensor t{name, dtype->dtype, {}, {}, context};
  uint64_t n = 1;
  for (const auto& d : *shape_it) {
    if (!d.is_number_unsigned()) fail(context, where + " has a non-integer dimension");
    uint64_t v = d.get<uint64_t>();
    if (v != 0 && n > std::numeric_limits<uint64_t>::max() / dtype->size / v) {
      fail(context, where + " size overflows");
    }
    n *= v;
    t.shape.push_back(v);
  }
  auto off_it = entry.find("data_offsets");
  if (off_it == entry.end() || !off_it->is_array() || off_it->size() != 2 ||
      !(*off_it)[0].is_number_unsigned() || !(*off_it)[1].is_number_unsigned()) {
    fail(context, where + " needs data_offsets [begin, end]");
  }
  uint64_t begin = (*off_it)[0].get<uint64_t>(), end = (*off_it)[1].get<uint64_t>();
  if (end < begin || end > data.size()) {
    fail(context, where + " data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                      ") lie outside the " + std::to_string(data.size()) + "-byte data section");
  }
  if (end - begin != n * dtype->size) {
    fail(context, where + " has " + std::to_string(end - begin) +
                      " bytes, its dtype and shape need " + std::to_string(n * dtype->size));
  }
  t.data = data.subspan(begin, end - begin);
  return t;
}

}  // namespace

std::string dtype_name(DType t) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.dtype == t) return d.name;
  }
  return "?";
}

size_t dtype_size(DType t) {
  for (const DTypeInfo& d : kDTypes) {
    if (d.dtype == t) return d.size;
  }
  return 0;
}

uint64_t SafeTensor::n_elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.mapping_ = MappedFile::open(path);
  f.context_ = path;
  f.parse_all(f.mapping_.bytes());
  return f;
}

SafetensorsFile SafetensorsFile::parse(std::span<const uint8_t> bytes, std::string context) {
  SafetensorsFile f;
  f.context_ = std::move(context);
  f.parse_all(bytes);
  return f;
}

void SafetensorsFile::parse_all(std::span<const uint8_t> bytes) {
  ByteReader r(bytes, context_);
  uint64_t header_len = r.read<uint64_t>("header length");
  if (header_len > kMaxHeaderBytes || header_len > r.remaining()) {
    r.fail("header length " + std::to_string(header_len) + " exceeds the file or 100 MB", 0);
  }
  std::string_view header = r.read_bytes(header_len, "header");
  // nlohmann keeps the last of duplicate keys; the callback catches them (tensor names).
  std::vector<std::string> top_keys;
  auto on_event = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key) {
      top_keys.push_back(parsed.get<std::string>());
    }
    return true;
  };
  nlohmann::json j = nlohmann::json::parse(header, on_event, /*allow_exceptions=*/false);
  if (j.is_discarded())
    fail(context_, "header is not valid JSON (bytes 8.." + std::to_string(8 + header_len) + ")");
  if (!j.is_object()) fail(context_, "header is not a JSON object");
  std::sort(top_keys.begin(), top_keys.end());
  auto dup = std::adjacent_find(top_keys.begin(), top_keys.end());
  if (dup != top_keys.end()) fail(context_, "duplicate tensor name '" + *dup + "' in the header");
  std::span<const uint8_t> data = bytes.subspan(8 + header_len);
  for (const auto& [name, entry] : j.items()) {
    if (name == "__metadata__") {
      if (entry.is_null()) continue;  // mlx's save_safetensors writes null when there is none
      if (!entry.is_object()) fail(context_, "__metadata__ is not an object");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string()) fail(context_, "__metadata__ value '" + k + "' is not a string");
        metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    tensors_.push_back(parse_entry(context_, name, entry, data));
  }
  // Byte ranges must be disjoint (zero-size tensors excepted).
  std::vector<const SafeTensor*> sorted;
  for (const SafeTensor& t : tensors_) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const SafeTensor* a, const SafeTensor* b) {
    return a->data.data() < b->data.data();
  });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i - 1]->data.data() + sorted[i - 1]->data.size() > sorted[i]->data.data()) {
      fail(context_,
           "tensor '" + sorted[i]->name + "' overlaps tensor '" + sorted[i - 1]->name + "'");
    }
  }
}

}  // namespace afm::hf

namespace afm::hf {

namespace {
namespace fs = std::filesystem;

// Returns shard file -> tensor names, from model.safetensors.index.json's weight_map.
std::map<std::string, std::vector<std::string>> read_index(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(read_file_to_string(path), nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail(path, "not valid JSON");
  auto map = j.find("weight_map");
  if (map == j.end() || !map->is_object()) fail(path, "missing object 'weight_map'");
  std::map<std::string, std::vector<std::string>> shards;
  for (const auto& [name, file] : map->items()) {
    if (!file.is_string()) fail(path, "weight_map entry '" + name + "' is not a file name");
    std::string f = file.get<std::string>();
    if (f.find('/') != std::string::npos || f == "..")
      fail(path, "shard name '" + f + "' is not a plain file name");
    shards[f].push_back(name);
  }
  return shards;
}
}  // namespace

SafetensorsModel SafetensorsModel::open_dir(const std::string& dir) {
  SafetensorsModel m;
  fs::path index = fs::path(dir) / "model.safetensors.index.json";
  if (fs::exists(index)) {
    for (const auto& [shard, names] : read_index(index.string())) {
      std::string path = (fs::path(dir) / shard).string();
      m.add_file(path);
      for (const std::string& name : names) {
        const SafeTensor* t = m.find(name);
        if (t == nullptr || t->file != path) {
          fail(index.string(),
               "tensor '" + name + "' is listed in shard '" + shard + "' but not stored there");
        }
      }
    }
  } else {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
    }
    if (files.empty()) throw_error(ErrorCode::kNotFound, dir + ": no *.safetensors files");
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) m.add_file(f);
  }
  std::sort(m.order_.begin(), m.order_.end(),
            [](const SafeTensor* a, const SafeTensor* b) { return a->name < b->name; });
  return m;
}

void SafetensorsModel::add_file(const std::string& path) {
  files_.push_back(std::make_unique<SafetensorsFile>(SafetensorsFile::open(path)));
  for (const SafeTensor& t : files_.back()->tensors()) {
    auto [it, inserted] = by_name_.emplace(t.name, &t);
    if (!inserted) fail(path, "tensor '" + t.name + "' is also stored in " + it->second->file);
    order_.push_back(&t);
  }
}

const SafeTensor* SafetensorsModel::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const SafeTensor& SafetensorsModel::get(const std::string& name) const {
  const SafeTensor* t = find(name);
  if (t == nullptr)
    throw_error(ErrorCode::kNotFound, "missing tensor '" + name + "' in the safetensors files");
  return *t;
}

}  // namespace afm::hf
