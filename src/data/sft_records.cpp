#include "data/sft_records.h"

#include <cstdint>

#include "base/atomic_file.h"
#include "base/byte_reader.h"
#include "base/error.h"
#include "base/mapped_file.h"

namespace afm::data {
namespace {

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// One record at the reader's position; `index` names it in errors.
SftRecord read_record(ByteReader& r, uint32_t vocab_size, uint64_t index) {
  const uint64_t start = r.offset();
  const std::string which = "record " + std::to_string(index);
  const uint32_t n = r.read<uint32_t>("a record length");
  if (n < 2) r.fail(which + " has " + std::to_string(n) + " tokens (at least 2)", start);
  if (uint64_t{n} * 5 > r.remaining()) {
    r.fail("truncated: " + which + " needs " + std::to_string(uint64_t{n} * 5) + " bytes, " +
           std::to_string(r.remaining()) + " left");
  }
  SftRecord rec;
  rec.tokens.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t id = r.read<uint32_t>("a token id");
    if (id >= vocab_size) {
      r.fail(which + " has token id " + std::to_string(id) + " >= vocab_size " +
             std::to_string(vocab_size), r.offset() - 4);
    }
    rec.tokens[i] = static_cast<int32_t>(id);
  }
  const std::string_view flags = r.read_bytes(n, "trained flags");
  rec.trained.assign(flags.begin(), flags.end());
  for (uint32_t i = 0; i < n; ++i) {
    if (rec.trained[i] > 1) r.fail(which + " has a trained flag other than 0 or 1");
  }
  if (rec.trained_count() - rec.trained[0] < 1) {
    r.fail(which + " has no trained token after its first", start);
  }
  return rec;
}

}  // namespace

int64_t SftRecord::trained_count() const {
  int64_t n = 0;
  for (uint8_t t : trained) n += t;
  return n;
}

void write_sft_records(const std::string& path, const SftRecordFile& file) {
  std::string out(kSftMagic);
  put<uint32_t>(out, kSftVersion);
  put<uint32_t>(out, file.vocab_size);
  put<uint64_t>(out, file.records.size());
  for (const SftRecord& rec : file.records) {
    AFM_CHECK(rec.tokens.size() == rec.trained.size() && rec.tokens.size() >= 2);
    put<uint32_t>(out, static_cast<uint32_t>(rec.tokens.size()));
    for (int32_t id : rec.tokens) put<uint32_t>(out, static_cast<uint32_t>(id));
    out.append(reinterpret_cast<const char*>(rec.trained.data()), rec.trained.size());
  }
  write_file_atomic(path, out);
}

SftRecordFile read_sft_records(const std::string& path) {
  const MappedFile mapped = MappedFile::open(path);
  return parse_sft_records(mapped.bytes(), path);
}

SftRecordFile parse_sft_records(std::span<const uint8_t> bytes, const std::string& context) {
  ByteReader r(bytes, context);
  if (r.read_bytes(kSftMagic.size(), "the magic") != kSftMagic) {
    r.fail("not an afm fine-tuning record file (magic is not AFMSFT01)", 0);
  }
  const uint32_t version = r.read<uint32_t>("the version");
  if (version != kSftVersion) r.fail("version " + std::to_string(version) + " is not 1", 8);
  SftRecordFile file;
  file.vocab_size = r.read<uint32_t>("the vocabulary size");
  // Ids are held as int32: a larger vocabulary would let an id turn negative.
  if (file.vocab_size == 0 || file.vocab_size > static_cast<uint32_t>(INT32_MAX)) {
    r.fail("vocab_size " + std::to_string(file.vocab_size) + " is not in 1..2147483647", 12);
  }
  const uint64_t count = r.read<uint64_t>("the record count");
  // Each record takes at least 14 bytes: a count this large cannot fit the file.
  if (count > r.remaining() / 14) {
    r.fail("truncated: " + std::to_string(count) + " records cannot fit in the " +
           std::to_string(r.remaining()) + " bytes left", 16);
  }
  file.records.reserve(count);
  for (uint64_t i = 0; i < count; ++i) file.records.push_back(read_record(r, file.vocab_size, i));
  if (r.remaining() != 0) {
    r.fail(std::to_string(r.remaining()) + " bytes after the last record");
  }
  return file;
}

}  // namespace afm::data
