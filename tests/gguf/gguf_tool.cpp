// Test-only tool used by interop_test.py:
//   gguf_tool dump FILE          prints the file as JSON (metadata typed, tensors with hex bytes)
//   gguf_tool write SPEC OUT     writes SPEC (the same JSON shape) with afm's GGUF writer
// Exit 1 with one line on stderr on error (the reader's message, including the byte offset).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "base/mapped_file.h"
#include "gguf/gguf_json.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace {

using namespace afm;

std::string to_hex(std::span<const uint8_t> bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

std::vector<uint8_t> from_hex(const std::string& s) {
  std::vector<uint8_t> out(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  return out;
}

int dump(const std::string& path) {
  gguf::File file = gguf::File::open(path);
  nlohmann::json j = {{"version", file.version()},
                      {"alignment", file.alignment()},
                      {"data_offset", file.data_offset()}};
  nlohmann::json meta = nlohmann::json::array();
  for (const auto& [key, value] : file.metadata()) {
    meta.push_back({{"key", key}, {"value", gguf::testing::value_to_json(value)}});
  }
  j["metadata"] = meta;
  nlohmann::json tensors = nlohmann::json::array();
  for (const gguf::TensorInfo& t : file.tensors()) {
    tensors.push_back({{"name", t.name},
                       {"shape", t.shape},
                       {"type", std::string(gguf::tensor_type_traits(t.type).name)},
                       {"offset", t.offset},
                       {"data", to_hex(t.bytes())}});
  }
  j["tensors"] = tensors;
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

int write(const std::string& spec_path, const std::string& out) {
  nlohmann::json spec = nlohmann::json::parse(read_file_to_string(spec_path));
  gguf::Writer writer;
  for (const auto& kv : spec.at("metadata")) {
    std::string key = kv.at("key").get<std::string>();
    if (key == "general.alignment") {  // also changes the layout, and keeps the key's position
      writer.set_alignment(kv.at("value").at("value").get<uint32_t>());
    } else {
      writer.set(key, gguf::testing::value_from_json(kv.at("value")));
    }
  }
  for (const auto& t : spec.at("tensors")) {
    auto type = gguf::tensor_type_from_name(t.at("type").get<std::string>());
    if (!type) throw std::runtime_error("unknown tensor type in spec");
    std::vector<uint8_t> data = from_hex(t.at("data").get<std::string>());
    writer.add_tensor(t.at("name").get<std::string>(), *type,
                      t.at("shape").get<std::vector<uint64_t>>(), std::span<const uint8_t>(data));
  }
  writer.write(out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "dump" && argc == 3) return dump(argv[2]);
    if (mode == "write" && argc == 4) return write(argv[2], argv[3]);
    std::fprintf(stderr, "usage: gguf_tool dump FILE | gguf_tool write SPEC.json OUT.gguf\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gguf_tool: %s\n", e.what());
    return 1;
  }
}
