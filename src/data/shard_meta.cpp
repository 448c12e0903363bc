#include "data/shard_meta.h"

#include "base/error.h"
#include "base/mapped_file.h"

namespace afm::data {
namespace {

using Json = nlohmann::json;

[[noreturn]] void bad(const std::string& name, const std::string& pointer,
                      const std::string& what) {
  throw_error(ErrorCode::kFormat, name + ": " + pointer + " " + what);
}

const Json& field(const Json& obj, const char* key, const std::string& pointer,
                  const std::string& name) {
  if (!obj.is_object()) bad(name, pointer.empty() ? "/" : pointer, "is not an object");
  auto it = obj.find(key);
  if (it == obj.end()) bad(name, pointer + "/" + key, "is missing");
  return *it;
}

uint64_t unsigned_field(const Json& obj, const char* key, const std::string& pointer,
                        const std::string& name) {
  const Json& v = field(obj, key, pointer, name);
  if (!v.is_number_unsigned()) bad(name, pointer + "/" + key, "is not a non-negative integer");
  return v.get<uint64_t>();
}

std::string string_field(const Json& obj, const char* key, const std::string& pointer,
                         const std::string& name) {
  const Json& v = field(obj, key, pointer, name);
  if (!v.is_string()) bad(name, pointer + "/" + key, "is not a string");
  return v.get<std::string>();
}

SplitMeta parse_split(const Json& root, const char* split, const std::string& name) {
  const std::string pointer = std::string("/") + split;
  const Json& s = field(root, split, "", name);
  SplitMeta m;
  const Json& shards = field(s, "shards", pointer, name);
  if (!shards.is_array()) bad(name, pointer + "/shards", "is not an array");
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string at = pointer + "/shards/" + std::to_string(i);
    if (!shards[i].is_string()) bad(name, at, "is not a string");
    const std::string file = shards[i].get<std::string>();
    // Shard names are plain file names inside the directory, never paths out of it.
    if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos) {
      bad(name, at, "is not a plain file name");
    }
    m.shards.push_back(file);
  }
  m.tokens = unsigned_field(s, "tokens", pointer, name);
  m.documents = unsigned_field(s, "documents", pointer, name);
  return m;
}

}  // namespace

nlohmann::ordered_json ShardMeta::to_json() const {
  nlohmann::ordered_json inputs_json = nlohmann::ordered_json::array();
  for (const InputMeta& in : inputs) {
    inputs_json.push_back({{"file", in.file}, {"bytes", in.bytes}, {"documents", in.documents}});
  }
  auto split = [](const SplitMeta& s) {
    return nlohmann::ordered_json{
        {"shards", s.shards}, {"tokens", s.tokens}, {"documents", s.documents}};
  };
  return {{"format", "afm-shards"},
          {"version", 1},
          {"tokenizer_sha256", tokenizer_sha256},
          {"vocab_size", vocab_size},
          {"eos_id", eos_id},
          {"token_bytes", token_bytes},
          {"seed", seed},
          {"val_fraction", val_fraction},
          {"train", split(train)},
          {"val", split(val)},
          {"inputs", inputs_json}};
}

ShardMeta parse_shard_meta(const std::string& json_text, const std::string& name) {
  Json root = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) throw_error(ErrorCode::kFormat, name + ": not valid JSON");
  if (string_field(root, "format", "", name) != "afm-shards") {
    bad(name, "/format", "is not \"afm-shards\"");
  }
  const uint64_t version = unsigned_field(root, "version", "", name);
  if (version != 1) {
    throw_error(ErrorCode::kUnsupported, name + ": shard format version " +
                                             std::to_string(version) + " (this build reads 1)");
  }
  ShardMeta m;
  m.tokenizer_sha256 = string_field(root, "tokenizer_sha256", "", name);
  const uint64_t vocab = unsigned_field(root, "vocab_size", "", name);
  const uint64_t eos = unsigned_field(root, "eos_id", "", name);
  if (vocab == 0 || vocab > UINT32_MAX) bad(name, "/vocab_size", "is out of range");
  if (eos >= vocab) bad(name, "/eos_id", "is not below vocab_size");
  m.vocab_size = static_cast<uint32_t>(vocab);
  m.eos_id = static_cast<int32_t>(eos);
  const uint64_t width = unsigned_field(root, "token_bytes", "", name);
  if (width != 2 && width != 4) bad(name, "/token_bytes", "is not 2 or 4");
  m.token_bytes = static_cast<uint32_t>(width);
  m.seed = unsigned_field(root, "seed", "", name);
  const Json& fraction = field(root, "val_fraction", "", name);
  if (!fraction.is_number()) bad(name, "/val_fraction", "is not a number");
  m.val_fraction = fraction.get<double>();
  m.train = parse_split(root, "train", name);
  m.val = parse_split(root, "val", name);
  const Json& inputs = field(root, "inputs", "", name);
  if (!inputs.is_array()) bad(name, "/inputs", "is not an array");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string at = "/inputs/" + std::to_string(i);
    m.inputs.push_back({string_field(inputs[i], "file", at, name),
                        unsigned_field(inputs[i], "bytes", at, name),
                        unsigned_field(inputs[i], "documents", at, name)});
  }
  return m;
}

ShardMeta load_shard_meta(const std::filesystem::path& dir) {
  const std::string path = (dir / "meta.json").string();
  return parse_shard_meta(read_file_to_string(path), path);
}

std::vector<std::filesystem::path> shard_paths(const std::filesystem::path& dir,
                                               const ShardMeta& meta, const std::string& split) {
  if (split != "train" && split != "val") {
    throw_error(ErrorCode::kInvalidArgument, "unknown split '" + split + "' (train or val)");
  }
  std::vector<std::filesystem::path> out;
  for (const std::string& s : (split == "train" ? meta.train : meta.val).shards) {
    out.push_back(dir / s);
  }
  return out;
}

}  // namespace afm::data
