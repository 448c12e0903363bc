// The trainer's view of a folder written by `afm data shards`: the train and val splits as
// token streams over the memory-mapped shards (docs/data.md gives the format).
//
// Contract: open_shards() validates meta.json and every shard header (through the data
// library's reader) and throws afm::Error naming the file and the problem.
#pragma once

#include <memory>
#include <string>

#include "train/batch_sampler.h"

namespace afm::train {

struct ShardSplits {
  TokenStream train, val;
  int64_t vocab_size = 0;
  std::shared_ptr<const void> keep_alive;  // owns the mapped shards the streams read
};

ShardSplits open_shards(const std::string& dir);

}  // namespace afm::train
