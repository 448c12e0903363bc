// `afm data shards`: tokenizes document files (document_io.h) into packed token shards
// (shard_format.h) plus meta.json (shard_meta.h).
//
// Contract:
// - Documents are numbered across the inputs in command-line order; document i goes to the
//   validation split when is_validation_document(seed, i, val_fraction), else to train.
// - Each document is encoded with the tokenizer (special-token strings map to their ids, no
//   BOS) and followed by the EOS id: the --eos token if given, else "<|endoftext|>" when the
//   vocabulary has it, else the tokenizer's eos; none -> Error(kInvalidArgument).
// - Encoding runs on `threads` threads; the output bytes do not depend on the thread count.
// - Every file is written atomically, meta.json last. Bad options -> Error(kInvalidArgument);
//   unreadable inputs -> Error(kIo); a tokenizer that cannot be loaded -> its loader's error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/shard_meta.h"
#include "tokenizer/tokenizer.h"

namespace afm::data {

struct ShardOptions {
  std::string tokenizer_path;  // a Hugging Face tokenizer.json
  std::vector<std::string> inputs;
  std::filesystem::path out_dir;
  double val_fraction = 0.01;
  uint64_t seed = 0;
  uint64_t shard_tokens = 100'000'000;
  int threads = 1;
  std::string eos_token;  // "" for the default choice above
  bool progress = true;   // a progress bar on stderr (drawn only on a terminal)
};

struct ShardResult {
  ShardMeta meta;
  uint64_t input_bytes = 0;
  double seconds = 0;
};

bool is_validation_document(uint64_t seed, uint64_t index, double val_fraction);

// The EOS id the contract above chooses; `tokenizer_name` appears in the error.
int32_t choose_eos_id(const tokenizer::Tokenizer& tokenizer, const std::string& eos_token,
                      const std::string& tokenizer_name);

ShardResult build_shards(const ShardOptions& options);

}  // namespace afm::data
