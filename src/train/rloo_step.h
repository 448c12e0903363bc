// What the synchronous loop (rloo_run.h) and the asynchronous updater (rloo_updater.h) share:
// the LoRA policy with its optimiser, one RLOO update (rloo.h) on a batch of samples, and the
// run's result files.
//
// A row is one sample: its rendered tokens, which of them are the completion (`trained`), the
// log-probabilities the sampling policy gave those trained tokens in order (`behaviour`; empty:
// the sampling policy is the one being updated, so the ratio is 1), its reward and its prompt
// group. rloo_update() computes the reference's log-probabilities with the LoRA branches
// switched off (the base is the KL reference), the policy's with them on, the loss, one
// clipped AdamW step on the branches.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "train/adamw.h"
#include "train/language_model.h"
#include "train/rloo.h"
#include "train/rloo_run.h"

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

// The base with LoRA branches (A seeded by options.seed) and its AdamW, resumed from the run
// folder's checkpoint unless `run.fresh`; next_step is the step to run next.
struct RlooPolicy {
  std::shared_ptr<LanguageModel> model;
  std::unique_ptr<AdamW> optimizer;
  int64_t next_step = 0;
};
RlooPolicy load_rloo_policy(const RlooRunOptions& options);

// Writes <out>/adapter.gguf and, with `merged`, folds the branches into the policy and writes
// <out>/model.gguf; fills the result's paths.
void export_rloo_result(LanguageModel& policy, const RlooRunOptions& options,
                        RlooRunResult& result);

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace afm::train
