#include "shard_fixture.h"

#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "base/atomic_file.h"
#include "data/shard_meta.h"

namespace afm::train::testing {
namespace {

void write_shard(const std::string& path, uint32_t vocab, const std::vector<uint16_t>& tokens) {
  std::string bytes(32, '\0');
  std::memcpy(bytes.data(), "AFMTOK01", 8);
  const uint32_t version = 1, token_bytes = 2, reserved = 0;
  const uint64_t n = tokens.size();
  std::memcpy(bytes.data() + 8, &version, 4);
  std::memcpy(bytes.data() + 12, &token_bytes, 4);
  std::memcpy(bytes.data() + 16, &n, 8);
  std::memcpy(bytes.data() + 24, &vocab, 4);
  std::memcpy(bytes.data() + 28, &reserved, 4);
  bytes.append(reinterpret_cast<const char*>(tokens.data()), tokens.size() * 2);
  write_file_atomic(path, bytes);
}

std::vector<uint16_t> stream(uint32_t vocab, uint64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint16_t> out(n);
  for (uint64_t i = 0; i < n; ++i)
    out[i] = rng() % 10 == 0 ? rng() % vocab : static_cast<uint16_t>((i * 7) % (vocab / 2));
  return out;
}

}  // namespace

void write_tiny_shards(const std::string& dir, uint32_t vocab_size, uint64_t train_tokens,
                       uint64_t val_tokens) {
  std::filesystem::create_directories(dir);
  write_shard(dir + "/train-00000.bin", vocab_size, stream(vocab_size, train_tokens, 1));
  write_shard(dir + "/val-00000.bin", vocab_size, stream(vocab_size, val_tokens, 2));
  data::ShardMeta meta;
  meta.tokenizer_sha256 = std::string(64, '0');
  meta.vocab_size = vocab_size;
  meta.eos_id = 0;
  meta.token_bytes = 2;
  meta.train = {{"train-00000.bin"}, train_tokens, 1};
  meta.val = {{"val-00000.bin"}, val_tokens, 1};
  write_file_atomic(dir + "/meta.json", meta.to_json().dump(2));
}

}  // namespace afm::train::testing
