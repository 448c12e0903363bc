#include "train/rloo_step.h"

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "train/checkpoint.h"
#include "train/gguf_export.h"
#include "train/gguf_import.h"
#include "train/lora_export.h"
#include "train/torch_ops.h"

namespace afm::train {

RlooBatch collate_rloo(const std::vector<RlooRow>& rows) {
  const int64_t b = static_cast<int64_t>(rows.size());
  int64_t t = 2;
  bool with_behaviour = false;
  for (const RlooRow& r : rows) {
    t = std::max<int64_t>(t, static_cast<int64_t>(r.tokens.size()));
    with_behaviour |= !r.behaviour.empty();
  }
  RlooBatch batch{torch::zeros({b, t}, torch::kInt64),
                  torch::zeros({b, t - 1}, torch::kFloat32),
                  {},
                  torch::zeros({b}, torch::kFloat64),
                  torch::zeros({b}, torch::kInt64)};
  if (with_behaviour) batch.behaviour = torch::zeros({b, t - 1}, torch::kFloat32);
  auto tokens = batch.tokens.accessor<int64_t, 2>();
  auto mask = batch.mask.accessor<float, 2>();
  for (int64_t i = 0; i < b; ++i) {
    const RlooRow& r = rows[i];
    size_t used = 0;
    for (size_t j = 0; j < r.tokens.size(); ++j) {
      tokens[i][j] = r.tokens[j];
      if (j == 0 || !r.trained[j]) continue;
      mask[i][j - 1] = 1.0f;
      if (!with_behaviour) continue;
      if (used >= r.behaviour.size())
        throw_error(ErrorCode::kInvalidArgument,
                    "rloo: a sample has fewer behaviour "
                    "log-probabilities than trained tokens");
      batch.behaviour[i][j - 1] = r.behaviour[used++];
    }
    if (with_behaviour && used != r.behaviour.size())
      throw_error(ErrorCode::kInvalidArgument,
                  "rloo: a sample has more behaviour log-probabilities than trained tokens");
    batch.rewards[i] = r.reward;
    batch.groups[i] = r.group;
  }
  return batch;
}

RlooTerms rloo_update(LanguageModel& policy, AdamW& opt, const RlooBatch& batch,
                      const RlooOptions& options, double grad_clip, bool autocast) {
  AutocastGuard guard(autocast, c10::DeviceType::CPU);
  torch::Tensor ref;
  {
    torch::NoGradGuard no_grad;
    policy.set_lora_enabled(false);
    ref = next_token_logprobs(policy, batch.tokens);
    policy.set_lora_enabled(true);
  }
  opt.zero_grad();
  const torch::Tensor lp = next_token_logprobs(policy, batch.tokens);
  const torch::Tensor behaviour = batch.behaviour.defined() ? batch.behaviour : lp.detach();
  RlooTerms terms = rloo_loss(lp, ref, behaviour, batch.mask, batch.rewards, batch.groups, options);
  terms.loss.backward();
  clip_gradient_norm(policy.trainable_tensors(), grad_clip > 0 ? grad_clip : 1e30);
  opt.step();
  return terms;
}

RlooPolicy load_rloo_policy(const RlooRunOptions& o) {
  RlooPolicy p;
  p.model = import_gguf_model(o.base).model;
  torch::manual_seed(o.seed);
  p.model->attach_lora(o.lora);
  p.optimizer = std::make_unique<AdamW>(p.model->trainable_parameters(), o.optim);
  if (!o.run.fresh && checkpoint_exists(o.out_dir))
    p.next_step = load_checkpoint(o.out_dir, *p.model, p.optimizer.get()).next_step;
  return p;
}

void export_rloo_result(LanguageModel& policy, const RlooRunOptions& o, RlooRunResult& result) {
  const std::filesystem::path out(o.out_dir);
  result.adapter_path = (out / "adapter.gguf").string();
  export_lora_adapter(policy, o.base, {gguf::TensorType::kF32, "afm-rloo"}, result.adapter_path);
  if (!o.merged) return;
  policy.merge_lora();
  result.model_path = (out / "model.gguf").string();
  export_gguf(policy, {gguf::TensorType::kF32, o.base, "afm-rloo"}, result.model_path);
}

}  // namespace afm::train
