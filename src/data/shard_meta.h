// DIR/meta.json of a shard directory: what the shards hold and how they were made.
//
//   {"format": "afm-shards", "version": 1, "tokenizer_sha256": "...", "vocab_size": n,
//    "eos_id": n, "token_bytes": 2|4, "seed": n, "val_fraction": x,
//    "train": {"shards": ["train-00000.bin", ...], "tokens": n, "documents": n},
//    "val": {...}, "inputs": [{"file": "...", "bytes": n, "documents": n}]}
//
// Contract: load_shard_meta throws Error(kIo) when the file cannot be read, Error(kFormat)
// naming the JSON pointer of a missing or mistyped field (or a shard name that is not a plain
// file name), Error(kUnsupported) for another format version.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace afm::data {

struct SplitMeta {
  std::vector<std::string> shards;  // file names relative to the directory
  uint64_t tokens = 0, documents = 0;
};

struct InputMeta {
  std::string file;
  uint64_t bytes = 0, documents = 0;
};

struct ShardMeta {
  std::string tokenizer_sha256;
  uint32_t vocab_size = 0;
  int32_t eos_id = 0;
  uint32_t token_bytes = 2;
  uint64_t seed = 0;
  double val_fraction = 0;
  SplitMeta train, val;
  std::vector<InputMeta> inputs;

  nlohmann::ordered_json to_json() const;
};

ShardMeta load_shard_meta(const std::filesystem::path& dir);
ShardMeta parse_shard_meta(const std::string& json_text, const std::string& name);

// Full paths of one split's shards ("train" or "val"), in order.
std::vector<std::filesystem::path> shard_paths(const std::filesystem::path& dir,
                                               const ShardMeta& meta, const std::string& split);

}  // namespace afm::data
