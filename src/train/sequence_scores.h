// One logit per whole sequence: the reward model's score (train/reward_train.h) is the logit of
// row `score_token` after a sequence's last token.
//
// The sequences are packed, longest first, into as few rows as hold them at the longest one's
// length (first fit). Attention never crosses sequences and RoPE counts from each one's start
// (torch_ops.h, Packing), so every score is what its sequence gives alone, while a batch of short
// replies and one long conversation costs about its real tokens instead of count x the longest.
// Only each sequence's last position goes through the head.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "train/language_model.h"

namespace afm::train {

// Where each sequence went: rows of `width` tokens, and per sequence its row and first column.
struct SequencePacking {
  int64_t rows = 0, width = 0;
  std::vector<int64_t> row, start;
};

// First-fit-decreasing placement of sequences of the given lengths (each >= 1) into rows as wide
// as the longest. Ties keep their order.
SequencePacking pack_sequences(const std::vector<int64_t>& lengths);

// (n) float32: for each sequence, `model`'s logit of `score_token` after its last token, in the
// order given. Differentiable (the caller picks grad mode). Every sequence must be non-empty.
torch::Tensor last_token_logits(LanguageModel& model,
                                const std::vector<const std::vector<int32_t>*>& sequences,
                                int32_t score_token);

}  // namespace afm::train
