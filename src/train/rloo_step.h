// One RLOO update (rloo.h) on a batch of samples, shared by the synchronous loop
// (rloo_run.h) and the asynchronous updater (rloo_updater.h).
//
// A row is one sample: its rendered tokens, which of them are the completion (`trained`), the
// log-probabilities the sampling policy gave those trained tokens in order (`behaviour`; empty:
// the sampling policy is the one being updated, so the ratio is 1), its reward and its prompt
// group. rloo_update() computes the reference's log-probabilities with the LoRA branches
// switched off (the base is the KL reference), the policy's with them on, the loss, one
// clipped AdamW step on the branches.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "train/adamw.h"
#include "train/language_model.h"
#include "train/rloo.h"

namespace afm::train {

struct RlooRow {
  std::vector<int32_t> tokens;
  std::vector<uint8_t> trained;  // per token
  std::vector<float> behaviour;  // per trained token, or empty
  double reward = 0;
  int64_t group = 0;
};

struct RlooBatch {
  torch::Tensor tokens;     // (B, T) int64, padded with 0
  torch::Tensor mask;       // (B, T-1) float: next token t+1 is a completion token
  torch::Tensor behaviour;  // (B, T-1) float, 0 off the mask; undefined: the policy's own
  torch::Tensor rewards;    // (B) float64
  torch::Tensor groups;     // (B) int64
};

// Error(kInvalidArgument) when a row's behaviour is neither empty nor one per trained token,
// or rows disagree on having it.
RlooBatch collate_rloo(const std::vector<RlooRow>& rows);

RlooTerms rloo_update(LanguageModel& policy, AdamW& optimizer, const RlooBatch& batch,
                      const RlooOptions& options, double grad_clip, bool autocast);

}  // namespace afm::train
