// Writes token shards (shard_format.h) for one split ("train" or "val"): documents are
// appended whole, and a shard is closed before a document would take it past the target size
// (a single document larger than the target gets a shard of its own).
//
// Contract: shard files are named <split>-00000.bin, <split>-00001.bin, ... in `dir`, each
// written atomically when it is closed; until finish() the last one is held in memory
// (about target_tokens * token_bytes bytes). Errors: Error(kIo) naming the file; token ids
// outside [0, vocab_size) are Error(kInternal) (the tokenizer produced them). Not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace afm::data {

// Writes one complete shard file atomically.
void write_shard(const std::string& path, std::span<const uint32_t> tokens, uint32_t vocab_size);

class SplitWriter {
 public:
  SplitWriter(std::filesystem::path dir, std::string split, uint32_t vocab_size,
              uint64_t target_tokens);

  // Appends one document's tokens (the EOS already included).
  void add_document(std::span<const int32_t> tokens);
  // Closes the last shard; returns the shard file names (relative to dir), in order.
  const std::vector<std::string>& finish();

  uint64_t tokens() const { return tokens_; }
  uint64_t documents() const { return documents_; }

 private:
  void close_shard();

  std::filesystem::path dir_;
  std::string split_;
  uint32_t vocab_size_;
  uint32_t token_bytes_;
  uint64_t target_tokens_;
  std::vector<uint8_t> pending_;  // the open shard's tokens, already little-endian
  std::vector<std::string> shards_;
  uint64_t tokens_ = 0, documents_ = 0;
};

}  // namespace afm::data
