// Rendered fine-tuning conversations: what `afm data sft` writes and `afm-train sft` reads
// (docs/data.md "Fine-tuning records"). Rendering needs the runtime (chat template, tokenizer,
// request parser); reading needs nothing but this file, so the trainer builds without the
// runtime, as it does for token shards.
//
// A record file:
//   offset size  field
//   0      8     magic "AFMSFT01"
//   8      4     u32 version = 1
//   12     4     u32 vocab_size, 1 .. 2^31-1 (every token id is below it)
//   16     8     u64 n_records
//   24     ...   n_records records: u32 n (>= 2), n x u32 token ids, n x u8 trained (0 or 1)
// Little-endian, no padding. A record has at least one trained token after its first.
//
// Contract: read_sft_records() validates everything above and throws Error(kFormat) naming the
// file, the record and the byte offset (truncation, a bad magic or version, an id out of range,
// a flag other than 0/1, trailing bytes); write_sft_records() writes atomically.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace afm::data {

inline constexpr std::string_view kSftMagic = "AFMSFT01";
inline constexpr uint32_t kSftVersion = 1;

struct SftRecord {
  std::vector<int32_t> tokens;
  std::vector<uint8_t> trained;  // per token: 1 when the model learns to produce it
  int64_t trained_count() const;
};

struct SftRecordFile {
  uint32_t vocab_size = 0;
  std::vector<SftRecord> records;
};

void write_sft_records(const std::string& path, const SftRecordFile& file);
SftRecordFile read_sft_records(const std::string& path);
// The same from bytes; `context` names them in errors (a path, "fuzz").
SftRecordFile parse_sft_records(std::span<const uint8_t> bytes, const std::string& context);

}  // namespace afm::data
