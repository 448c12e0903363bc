#include "data/shard_writer.h"

#include <algorithm>
#include <cstdio>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/shard_format.h"

namespace afm::data {

namespace {

// Appends the tokens little-endian, token_bytes each.
template <typename T>
void append_tokens(std::vector<uint8_t>& out, std::span<const T> tokens, uint32_t token_bytes) {
  const size_t at = out.size();
  out.resize(at + tokens.size() * token_bytes);
  uint8_t* p = out.data() + at;
  for (const T t : tokens) {
    const auto v = static_cast<uint32_t>(t);
    if (token_bytes == 2) {
      p[0] = static_cast<uint8_t>(v);
      p[1] = static_cast<uint8_t>(v >> 8);
      p += 2;
    } else {
      store_le32(p, v);
      p += 4;
    }
  }
}

// The header and the already little-endian payload, atomically.
void write_encoded_shard(const std::string& path, std::span<const uint8_t> payload,
                         uint32_t vocab_size) {
  ShardHeader h;
  h.token_bytes = token_bytes_for_vocab(vocab_size);
  h.n_tokens = payload.size() / h.token_bytes;
  h.vocab_size = vocab_size;
  uint8_t header[kShardHeaderBytes];
  encode_shard_header(h, header);
  AtomicFileWriter out(path);
  out.write(header, sizeof(header));
  out.write(payload.data(), payload.size());
  out.commit();
}

}  // namespace

void write_shard(const std::string& path, std::span<const uint32_t> tokens, uint32_t vocab_size) {
  const uint32_t width = token_bytes_for_vocab(vocab_size);
  std::vector<uint8_t> payload;
  append_tokens(payload, tokens, width);
  write_encoded_shard(path, payload, vocab_size);
}

SplitWriter::SplitWriter(std::filesystem::path dir, std::string split, uint32_t vocab_size,
                         uint64_t target_tokens)
    : dir_(std::move(dir)),
      split_(std::move(split)),
      vocab_size_(vocab_size),
      token_bytes_(token_bytes_for_vocab(vocab_size)),
      target_tokens_(target_tokens > 0 ? target_tokens : 1) {}

void SplitWriter::add_document(std::span<const int32_t> tokens) {
  const uint64_t pending_tokens = pending_.size() / token_bytes_;
  if (pending_tokens > 0 && pending_tokens + tokens.size() > target_tokens_) close_shard();
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<uint32_t>(t) >= vocab_size_) {
      throw_error(ErrorCode::kInternal, "token id " + std::to_string(t) +
                                            " outside the vocabulary (" +
                                            std::to_string(vocab_size_) + " ids)");
    }
  }
  append_tokens(pending_, tokens, token_bytes_);
  tokens_ += tokens.size();
  ++documents_;
}

void SplitWriter::close_shard() {
  char name[64];
  std::snprintf(name, sizeof(name), "%s-%05zu.bin", split_.c_str(), shards_.size());
  write_encoded_shard((dir_ / name).string(), pending_, vocab_size_);
  shards_.emplace_back(name);
  pending_.clear();
}

const std::vector<std::string>& SplitWriter::finish() {
  if (!pending_.empty()) close_shard();
  return shards_;
}

}  // namespace afm::data
