#include "data/shard_format.h"

#include <cstring>

#include "base/error.h"

namespace afm::data {

uint32_t token_bytes_for_vocab(uint64_t vocab_size) { return vocab_size <= 65536 ? 2 : 4; }

void encode_shard_header(const ShardHeader& h, uint8_t out[kShardHeaderBytes]) {
  std::memcpy(out, kShardMagic.data(), kShardMagic.size());
  store_le32(out + 8, h.version);
  store_le32(out + 12, h.token_bytes);
  store_le64(out + 16, h.n_tokens);
  store_le32(out + 24, h.vocab_size);
  store_le32(out + 28, h.reserved);
}

ShardHeader decode_shard_header(std::span<const uint8_t> bytes, const std::string& name) {
  auto fail = [&](ErrorCode code, const std::string& what) {
    throw_error(code, "shard " + name + ": " + what);
  };
  if (bytes.size() < kShardHeaderBytes) {
    fail(ErrorCode::kFormat, "truncated header: " + std::to_string(bytes.size()) +
                                 " bytes, the header needs " + std::to_string(kShardHeaderBytes));
  }
  const uint8_t* p = bytes.data();
  if (std::memcmp(p, kShardMagic.data(), kShardMagic.size()) != 0) {
    fail(ErrorCode::kFormat, "bad magic (expected \"AFMTOK01\"; not a token shard)");
  }
  ShardHeader h;
  h.version = load_le32(p + 8);
  h.token_bytes = load_le32(p + 12);
  h.n_tokens = load_le64(p + 16);
  h.vocab_size = load_le32(p + 24);
  h.reserved = load_le32(p + 28);
  if (h.version != kShardVersion) {
    fail(ErrorCode::kUnsupported, "version " + std::to_string(h.version) + " (this build reads " +
                                      std::to_string(kShardVersion) + ")");
  }
  if (h.token_bytes != 2 && h.token_bytes != 4) {
    fail(ErrorCode::kFormat, "token_bytes is " + std::to_string(h.token_bytes) + ", not 2 or 4");
  }
  if (h.vocab_size == 0 || h.token_bytes != token_bytes_for_vocab(h.vocab_size)) {
    fail(ErrorCode::kFormat, "vocab_size " + std::to_string(h.vocab_size) +
                                 " does not fit token_bytes " + std::to_string(h.token_bytes));
  }
  if (h.reserved != 0) fail(ErrorCode::kFormat, "reserved field is not 0");
  const uint64_t payload = bytes.size() - kShardHeaderBytes;
  if (h.n_tokens > payload / h.token_bytes || h.n_tokens * h.token_bytes != payload) {
    fail(ErrorCode::kFormat, "n_tokens " + std::to_string(h.n_tokens) + " needs " +
                                 (h.n_tokens > payload / h.token_bytes
                                      ? "more bytes than the file has"
                                      : std::to_string(h.n_tokens * h.token_bytes) + " bytes") +
                                 ", but " + std::to_string(payload) +
                                 " bytes follow the header (truncated or padded file)");
  }
  return h;
}

}  // namespace afm::data
