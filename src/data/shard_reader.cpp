#include "data/shard_reader.h"

#include "base/error.h"

namespace afm::data {

ShardView ShardView::parse(std::span<const uint8_t> bytes, const std::string& name,
                           bool verify_tokens) {
  ShardView v;
  v.header_ = decode_shard_header(bytes, name);
  v.payload_ = bytes.data() + kShardHeaderBytes;
  v.name_ = name;
  if (verify_tokens) v.verify_tokens();
  return v;
}

template <typename T>
void ShardView::read_into(uint64_t begin, std::span<T> out) const {
  if (begin > n_tokens() || out.size() > n_tokens() - begin) {
    throw_error(ErrorCode::kInvalidArgument,
                "shard " + name_ + ": tokens [" + std::to_string(begin) + ", " +
                    std::to_string(begin + out.size()) + ") are past its " +
                    std::to_string(n_tokens()) + " tokens");
  }
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(token(begin + i));
}

void ShardView::read(uint64_t begin, std::span<int32_t> out) const { read_into(begin, out); }
void ShardView::read(uint64_t begin, std::span<int64_t> out) const { read_into(begin, out); }

void ShardView::verify_tokens() const {
  for (uint64_t i = 0; i < n_tokens(); ++i) {
    const uint32_t t = token(i);
    if (t >= header_.vocab_size) {
      throw_error(ErrorCode::kFormat, "shard " + name_ + ": token " + std::to_string(i) + " is " +
                                          std::to_string(t) + ", not below vocab_size " +
                                          std::to_string(header_.vocab_size));
    }
  }
}

ShardReader ShardReader::open(const std::string& path, bool verify_tokens) {
  ShardReader r;
  r.file_ = MappedFile::open(path);
  r.view_ = ShardView::parse(r.file_.bytes(), path, verify_tokens);
  return r;
}

}  // namespace afm::data
