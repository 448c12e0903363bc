// A training objective other than next-token cross-entropy for the shared loop
// (training_loop.h): what one micro-batch's loss is and what a held-out evaluation reports.
// Distillation (draft.h) is one: the loss compares the model's logits with a frozen teacher's.
//
// Contract: the loop calls loss() inside its autocast state and backward()s `total`; `terms`
// are detached scalars it averages over the step's micro-batches and logs under their names.
// evaluate() runs under NoGradGuard and the loop's autocast; it gets the held-out batches
// already on the model's device and returns the evaluation record's fields, which must hold
// "val_loss" (a finite number). Not thread-safe; one objective per run.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace afm::train {

class LanguageModel;
struct TrainBatch;

struct ObjectiveLoss {
  torch::Tensor total;                                       // what backward() runs on
  std::vector<std::pair<std::string, torch::Tensor>> terms;  // detached scalars to log
};

class Objective {
 public:
  virtual ~Objective() = default;
  virtual ObjectiveLoss loss(LanguageModel& model, const TrainBatch& batch) = 0;
  // `batch(i)` for i < count: held-out batch i on the model's device.
  virtual nlohmann::json evaluate(LanguageModel& model,
                                  const std::function<TrainBatch(int64_t)>& batch,
                                  int64_t count) = 0;
};

}  // namespace afm::train
