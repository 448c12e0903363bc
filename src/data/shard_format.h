// The packed token shard format that `afm data shards` writes and the trainer reads
// (docs/data.md is the normative description; keep the two in step).
//
//   offset size field
//   0      8    magic "AFMTOK01"
//   8      4    u32 version = 1
//   12     4    u32 token_bytes: 2 when vocab_size <= 65536, else 4
//   16     8    u64 n_tokens
//   24     4    u32 vocab_size
//   28     4    u32 reserved = 0
//   32     n_tokens * token_bytes: the tokens, unsigned little-endian
//
// Every document's tokens are followed by the EOS id; a shard holds whole documents.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace afm::data {

inline constexpr std::string_view kShardMagic = "AFMTOK01";
inline constexpr uint32_t kShardVersion = 1;
inline constexpr size_t kShardHeaderBytes = 32;

struct ShardHeader {
  uint32_t version = kShardVersion;
  uint32_t token_bytes = 2;
  uint64_t n_tokens = 0;
  uint32_t vocab_size = 0;
  uint32_t reserved = 0;
};

// 2 for vocabularies of at most 65536 ids, else 4.
uint32_t token_bytes_for_vocab(uint64_t vocab_size);

void encode_shard_header(const ShardHeader& h, uint8_t out[kShardHeaderBytes]);

// Reads and validates the header of a shard whose whole file is `bytes`: magic, version,
// token_bytes, vocab_size, reserved, and that n_tokens * token_bytes is exactly the rest of
// the file. Throws Error(kFormat) (kUnsupported for another version) whose message starts
// with "shard <name>:" and names the field.
ShardHeader decode_shard_header(std::span<const uint8_t> bytes, const std::string& name);

// Little-endian helpers (the format is little-endian on every host).
inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}
inline uint64_t load_le64(const uint8_t* p) {
  return uint64_t{load_le32(p)} | (uint64_t{load_le32(p + 4)} << 32);
}
inline void store_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace afm::data
