// Writes a tiny shard folder (docs/data.md format) for trainer tests: a learnable token stream
// (a fixed cycle with occasional random tokens), split into train and val.
#pragma once

#include <cstdint>
#include <string>

namespace afm::train::testing {

void write_tiny_shards(const std::string& dir, uint32_t vocab_size, uint64_t train_tokens,
                       uint64_t val_tokens);

}  // namespace afm::train::testing
