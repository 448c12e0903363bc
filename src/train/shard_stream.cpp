#include "train/shard_stream.h"

#include <algorithm>
#include <vector>

#include "base/error.h"
#include "data/shard_meta.h"
#include "data/shard_reader.h"

namespace afm::train {
namespace {

// One split's shards read as a single stream (a window may straddle two shards: documents are
// EOS-separated, so the join is just another document boundary).
struct SplitShards {
  std::vector<data::ShardReader> shards;
  std::vector<uint64_t> starts;  // first stream offset of each shard
  uint64_t size = 0;

  void copy(uint64_t start, uint64_t n, int64_t* out) const {
    size_t s = std::upper_bound(starts.begin(), starts.end(), start) - starts.begin() - 1;
    while (n > 0) {
      const uint64_t local = start - starts[s];
      const uint64_t take = std::min(n, shards[s].n_tokens() - local);
      shards[s].view().read(local, std::span<int64_t>(out, take));
      out += take, start += take, n -= take, ++s;
    }
  }
};

std::shared_ptr<SplitShards> open_split(const std::string& dir, const data::ShardMeta& meta,
                                        const std::string& split) {
  auto result = std::make_shared<SplitShards>();
  for (const auto& path : data::shard_paths(dir, meta, split)) {
    data::ShardReader reader = data::ShardReader::open(path.string());
    if (reader.view().vocab_size() != meta.vocab_size)
      throw_error(ErrorCode::kFormat, "shard " + path.string() + ": vocab_size " +
                                          std::to_string(reader.view().vocab_size()) +
                                          " differs from meta.json's " +
                                          std::to_string(meta.vocab_size));
    if (reader.n_tokens() == 0) continue;
    result->starts.push_back(result->size);
    result->size += reader.n_tokens();
    result->shards.push_back(std::move(reader));
  }
  return result;
}

TokenStream stream_of(const std::shared_ptr<SplitShards>& split) {
  const SplitShards* s = split.get();
  return {s->size, [s](uint64_t start, uint64_t n, int64_t* out) { s->copy(start, n, out); }};
}

}  // namespace

ShardSplits open_shards(const std::string& dir) {
  const data::ShardMeta meta = data::load_shard_meta(dir);
  auto train = open_split(dir, meta, "train");
  auto val = open_split(dir, meta, "val");
  if (train->size == 0) throw_error(ErrorCode::kInvalidArgument, dir + ": no training tokens");
  if (val->size == 0)
    throw_error(ErrorCode::kInvalidArgument,
                dir + ": no held-out tokens (make the shards with --val-fraction > 0)");
  ShardSplits out;
  out.train = stream_of(train);
  out.val = stream_of(val);
  out.vocab_size = meta.vocab_size;
  out.keep_alive = std::make_shared<std::pair<std::shared_ptr<SplitShards>,
                                              std::shared_ptr<SplitShards>>>(train, val);
  return out;
}

}  // namespace afm::train
