#include "train/rloo_run.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include "base/error.h"
#include "base/progress.h"
#include "data/hash_mix.h"
#include "framework/loaded_model.h"
#include "framework/training_example.h"
#include "model/lora.h"
#include "rl/rl_task.h"
#include "rl/rollout.h"
#include "train/checkpoint.h"
#include "train/cpu_setup.h"
#include "train/json_log.h"
#include "train/lora_export.h"
#include "train/rloo_step.h"
#include "train/torch_ops.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Sample {
  TrainingExample example;  // prompt + completion; `trained` marks the completion
  double reward = 0;
  int64_t group = 0;
  rl::RewardKind kind = rl::RewardKind::kArithmetic;
  int64_t completion_tokens = 0;
};

// Mean reward per task kind, for the log.
nlohmann::json rewards_by_kind(const std::vector<Sample>& samples) {
  std::map<std::string, std::pair<double, int>> sums;
  for (const Sample& s : samples) {
    auto& [sum, n] = sums[rl::reward_kind_name(s.kind)];
    sum += s.reward, ++n;
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [kind, v] : sums) out[kind] = v.first / v.second;
  return out;
}

std::vector<RlooRow> rows_of(const std::vector<Sample>& samples) {
  std::vector<RlooRow> rows;
  for (const Sample& s : samples)
    rows.push_back({s.example.tokens, s.example.trained, {}, s.reward, s.group});
  return rows;
}

nlohmann::json config_json(const RlooRunOptions& o) {
  return {{"base", o.base},
          {"prompts", o.prompts},
          {"rank", o.lora.rank},
          {"alpha", o.lora.alpha},
          {"kl_beta", o.rloo.kl_beta},
          {"max_ratio", o.rloo.max_ratio},
          {"lr", o.optim.lr},
          {"steps", o.steps},
          {"prompts_per_step", o.prompts_per_step},
          {"samples_per_prompt", o.samples_per_prompt},
          {"max_new_tokens", o.max_new_tokens},
          {"temperature", o.temperature},
          {"seed", o.seed},
          {"reward_model", o.reward_model}};
}

}  // namespace

RlooRunResult run_rloo(const RlooRunOptions& o) {
  if (o.out_dir.empty()) throw_error(ErrorCode::kInvalidArgument, "rloo needs an output folder");
  if (o.samples_per_prompt < 2)
    throw_error(ErrorCode::kInvalidArgument,
                "rloo needs at least 2 samples per prompt (the baseline leaves one out)");
  const CpuSetup cpu = configure_cpu(o.run.threads, o.run.cpu_bf16);
  const std::vector<rl::RlTask> tasks = rl::read_rl_tasks(o.prompts, !o.reward_model.empty());
  rl::Rollout sampler(
      LoadedModel::load(o.base),
      {.max_new_tokens = o.max_new_tokens, .temperature = o.temperature, .threads = cpu.threads});
  sampler.set_reward_model(rl::load_reward_model(o.reward_model, cpu.threads));

  RlooPolicy loaded = load_rloo_policy(o);
  LanguageModel* policy = loaded.model.get();
  AdamW& opt = *loaded.optimizer;
  int64_t step = loaded.next_step;

  JsonLog log(o.out_dir, o.run.json_stdout);
  if (step == 0)
    log.write({{"event", "start"}, {"tasks", tasks.size()}, {"config", config_json(o)},
               {"trainable_parameters", policy->trainable_count()}});
  const std::string policy_path = (fs::path(o.out_dir) / "policy.gguf").string();
  ProgressBar bar("rloo", static_cast<uint64_t>(o.steps), ProgressBar::Unit::kItems);
  bar.update(static_cast<uint64_t>(step));
  RlooRunResult result;
  int64_t steps_this_run = 0;
  while (step < o.steps) {
    const auto t0 = Clock::now();
    export_lora_adapter(*policy, o.base, {}, policy_path);
    sampler.use_policy(model::LoraAdapter::load(policy_path, sampler.model().weights()->file()));
    std::vector<Sample> samples;
    int64_t completion_tokens = 0;
    for (int64_t p = 0; p < o.prompts_per_step; ++p) {
      const uint64_t pick = data::mix64(data::mix64(o.seed, static_cast<uint64_t>(step)), p);
      const rl::RlTask& task = tasks[pick % tasks.size()];
      for (int64_t k = 0; k < o.samples_per_prompt; ++k) {
        rl::DrawnSample drawn = sampler.sample(task, data::mix64(pick, static_cast<uint64_t>(k)));
        completion_tokens += drawn.completion_tokens;
        samples.push_back(
            {std::move(drawn.example), drawn.reward, p, task.kind, drawn.completion_tokens});
      }
    }
    const double sample_s = seconds_since(t0);
    const auto t1 = Clock::now();
    // Synchronous: the sampling policy is this one, so the behaviour log-probabilities are the
    // policy's own (no behaviour in the rows).
    const RlooTerms terms = rloo_update(*policy, opt, collate_rloo(rows_of(samples)), o.rloo,
                                        o.grad_clip, cpu.bf16_autocast);
    ++step;
    result.last_reward = terms.mean_reward;
    log.write({{"step", step}, {"reward", terms.mean_reward}, {"reward_by_task", rewards_by_kind(samples)},
               {"kl", terms.mean_kl}, {"loss", terms.loss.item<double>()},
               {"advantage_abs_mean", terms.advantages.abs().mean().item<double>()},
               {"completion_tokens", completion_tokens}, {"sample_s", sample_s},
               {"update_s", seconds_since(t1)},
               {"sample_tokens_per_s", completion_tokens / std::max(sample_s, 1e-9)}});
    char detail[96];
    std::snprintf(detail, sizeof(detail), "reward %.3f kl %.3f", terms.mean_reward, terms.mean_kl);
    bar.set_detail(detail);
    bar.update(static_cast<uint64_t>(step));
    const bool stopping = o.run.stop_after > 0 && ++steps_this_run >= o.run.stop_after;
    if ((o.checkpoint_every > 0 && step % o.checkpoint_every == 0) || step == o.steps || stopping)
      save_checkpoint(o.out_dir, *policy, opt, {step, terms.mean_reward}, config_json(o));
    if (stopping) break;
  }
  bar.finish();
  result.steps_done = step;
  export_rloo_result(*policy, o, result);
  return result;
}

}  // namespace afm::train
