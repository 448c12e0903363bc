// Training batches for a draft model (draft.h) and for fine-tuning and adapters (sft.h): text
// windows from packed token shards
// (`afm data shards`), conversations rendered by `afm data sft` (packed as SFT packs them), or
// both in every micro-batch.
//
// Mixing: a micro-batch of B rows holds round(B x sft_share) packed conversation rows and the
// rest shard windows; shard rows then carry a one-document Packing (segment 0, positions
// 0 .. T-1), which computes exactly what an unpacked row does. Rows are drawn by coordinates,
// as every source of the training loop draws them. Held-out batches are the shards' evaluation
// windows, then the held-out conversation rows (at most eval_batches of each).
//
// Distillation reads every position a row holds: `valid_positions()` marks them (all of a
// window; a packed row's up to its padding). Targets are each source's: every next token of a
// window, the assistant's tokens of a conversation (the CE term's positions).
//
// Errors: afm::Error naming the folder when a source was made for another vocabulary, is
// shorter than one window, or holds no conversation that fits; kInvalidArgument when neither
// source is given.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "train/training_loop.h"

namespace afm::train {

struct DraftDataOptions {
  std::string shards;      // folder of `afm data shards`; may be empty
  std::string sft;         // folder of `afm data sft`; may be empty
  double sft_share = 0.5;  // with both: share of each micro-batch's rows from conversations
  int64_t batch_size = 8, seq_len = 256, eval_batches = 8;
  uint64_t seed = 1;
  int64_t vocab_size = 0;  // the base's: both sources must match it
};

std::unique_ptr<BatchSource> open_draft_data(const DraftDataOptions& options);

// (B, T) bool: the positions of `batch` that hold a token (not padding).
torch::Tensor valid_positions(const TrainBatch& batch);

}  // namespace afm::train
