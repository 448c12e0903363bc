// Training and evaluation batches: windows of seq_len + 1 consecutive tokens from a token
// stream. Training windows start at offsets drawn from a hash of (seed, step, micro-batch,
// rank, row), so a batch depends only on its coordinates: a resumed run sees exactly the
// batches an uninterrupted run would, with no loader state to save. Evaluation windows are
// evenly spaced over the held-out stream and the same at every evaluation.
#pragma once

#include <cstdint>
#include <functional>

#include <torch/torch.h>

namespace afm::train {

// A read-only stream of token ids (the concatenated shards of one split).
struct TokenStream {
  uint64_t size = 0;
  // Copies tokens [start, start + n) into out.
  std::function<void(uint64_t start, uint64_t n, int64_t* out)> copy;
};

struct BatchCoordinates {
  uint64_t seed = 0;
  int64_t step = 0, micro = 0, rank = 0;
};

// (batch, seq_len + 1) int64 on the CPU. Throws afm::Error(kInvalidArgument) when the stream
// is shorter than one window.
torch::Tensor training_batch(const TokenStream& tokens, int64_t batch, int64_t seq_len,
                             const BatchCoordinates& at);

// Evaluation batch `index` of `count` (each `batch` rows), evenly spaced over the stream.
torch::Tensor evaluation_batch(const TokenStream& tokens, int64_t batch, int64_t seq_len,
                               int64_t index, int64_t count);

}  // namespace afm::train
