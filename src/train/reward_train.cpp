#include "train/reward_train.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "base/error.h"
#include "base/progress.h"
#include "data/hash_mix.h"
#include "framework/loaded_model.h"
#include "framework/training_example.h"
#include "rl/preference_pair.h"
#include "rl/reward_model.h"
#include "train/checkpoint.h"
#include "train/cpu_setup.h"
#include "train/gguf_export.h"
#include "train/gguf_import.h"
#include "train/json_log.h"
#include "train/lr_schedule.h"
#include "train/reward_loss.h"
#include "train/sequence_scores.h"
#include "train/torch_ops.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;

struct RenderedPair {
  std::vector<int32_t> chosen, rejected;
  float chosen_grade = std::numeric_limits<float>::quiet_NaN();
  float rejected_grade = std::numeric_limits<float>::quiet_NaN();
};

struct PairSplit {
  std::vector<RenderedPair> train, val;
  int64_t skipped_long = 0;
};

std::vector<int32_t> render(const LoadedModel& m, const ChatRequest& prompt,
                            const ChatMessage& reply) {
  ChatRequest conversation = prompt;
  conversation.messages.push_back(reply);
  return render_training_example(*m.chat_template(), m.tokenizer(), conversation).tokens;
}

PairSplit render_pairs(const RewardTrainOptions& o) {
  const auto runtime = LoadedModel::load(o.base);
  if (!runtime->chat_template())
    throw_error(ErrorCode::kUnsupported, o.base + ": " + runtime->unavailable_reason());
  const std::vector<rl::PreferencePair> pairs = rl::read_preference_pairs(o.data);
  PairSplit split;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const rl::PreferencePair& p = pairs[i];
    RenderedPair r{render(*runtime, p.prompt, p.chosen), render(*runtime, p.prompt, p.rejected)};
    if (p.chosen_grade) r.chosen_grade = static_cast<float>(*p.chosen_grade);
    if (p.rejected_grade) r.rejected_grade = static_cast<float>(*p.rejected_grade);
    if (static_cast<int64_t>(std::max(r.chosen.size(), r.rejected.size())) > o.max_tokens) {
      ++split.skipped_long;
      continue;
    }
    const double u = static_cast<double>(data::mix64(o.seed ^ 0x5eed, i) >> 11) * 0x1.0p-53;
    (u < o.val_fraction ? split.val : split.train).push_back(std::move(r));
  }
  if (split.train.empty())
    throw_error(ErrorCode::kInvalidArgument, o.data + ": no pair left to train on (" +
                                                 std::to_string(split.skipped_long) +
                                                 " longer than --max-tokens)");
  return split;
}

// Scores (2P) of a batch: rows 0..P-1 the chosen replies, P..2P-1 the rejected ones, packed
// (train/sequence_scores.h).
torch::Tensor batch_scores(LanguageModel& model, const std::vector<const RenderedPair*>& batch,
                           int32_t score_token) {
  const size_t p = batch.size();
  std::vector<const std::vector<int32_t>*> sequences(2 * p);
  for (size_t i = 0; i < p; ++i) {
    sequences[i] = &batch[i]->chosen;
    sequences[p + i] = &batch[i]->rejected;
  }
  return last_token_logits(model, sequences, score_token);
}

torch::Tensor batch_grades(const std::vector<const RenderedPair*>& batch) {
  torch::Tensor g = torch::empty({static_cast<int64_t>(batch.size()), 2}, torch::kFloat32);
  for (size_t i = 0; i < batch.size(); ++i) {
    g[i][0] = batch[i]->chosen_grade;
    g[i][1] = batch[i]->rejected_grade;
  }
  return g;
}

RewardLossTerms evaluate(LanguageModel& model, const std::vector<RenderedPair>& val,
                         const RewardTrainOptions& o) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> chosen, rejected, grades;
  for (size_t b = 0; b < val.size(); b += static_cast<size_t>(o.batch_size)) {
    std::vector<const RenderedPair*> batch;
    for (size_t i = b; i < std::min(val.size(), b + o.batch_size); ++i) batch.push_back(&val[i]);
    const torch::Tensor s = batch_scores(model, batch, o.score_token);
    const int64_t p = static_cast<int64_t>(batch.size());
    chosen.push_back(s.slice(0, 0, p));
    rejected.push_back(s.slice(0, p));
    grades.push_back(batch_grades(batch));
  }
  return reward_loss(torch::cat(chosen), torch::cat(rejected), torch::cat(grades), o.grade_weight);
}

nlohmann::json config_json(const RewardTrainOptions& o) {
  return {{"base", o.base},
          {"data", o.data},
          {"steps", o.steps},
          {"batch_size", o.batch_size},
          {"lr", o.optim.lr},
          {"grade_weight", o.grade_weight},
          {"val_fraction", o.val_fraction},
          {"score_token", o.score_token},
          {"seed", o.seed}};
}

}  // namespace

RewardTrainResult run_reward_training(const RewardTrainOptions& o) {
  if (o.out_dir.empty()) throw_error(ErrorCode::kInvalidArgument, "reward needs an output folder");
  const CpuSetup cpu = configure_cpu(o.run.threads, o.run.cpu_bf16);
  const PairSplit split = render_pairs(o);
  std::shared_ptr<LanguageModel> model = import_gguf_model(o.base).model;
  if (o.score_token < 0 || o.score_token >= model->config().vocab_size)
    throw_error(ErrorCode::kInvalidArgument, "--score-token is outside the vocabulary");
  AdamW opt(model->trainable_parameters(), o.optim);
  int64_t step = 0;
  if (!o.run.fresh && checkpoint_exists(o.out_dir))
    step = load_checkpoint(o.out_dir, *model, &opt).next_step;

  JsonLog log(o.out_dir, o.run.json_stdout);
  if (step == 0)
    log.write({{"event", "start"},
               {"train_pairs", split.train.size()},
               {"val_pairs", split.val.size()},
               {"skipped_long", split.skipped_long},
               {"config", config_json(o)}});
  RewardTrainResult result;
  result.train_pairs = static_cast<int64_t>(split.train.size());
  result.val_pairs = static_cast<int64_t>(split.val.size());
  const auto eval = [&](int64_t at) {
    if (split.val.empty()) return;
    AutocastGuard guard(cpu.bf16_autocast, c10::DeviceType::CPU);
    const auto t0 = std::chrono::steady_clock::now();
    const RewardLossTerms v = evaluate(*model, split.val, o);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.val_accuracy = v.accuracy, result.val_loss = v.loss.item<double>();
    log.write({{"step", at},
               {"val_loss", result.val_loss},
               {"val_accuracy", v.accuracy},
               {"val_margin", v.margin},
               {"val_pairwise", v.pairwise},
               {"val_graded", v.graded},
               {"seconds", seconds}});
  };
  if (step == 0) eval(0);
  ProgressBar bar("reward", static_cast<uint64_t>(o.steps), ProgressBar::Unit::kItems);
  bar.update(static_cast<uint64_t>(step));
  int64_t steps_this_run = 0;
  while (step < o.steps) {
    std::vector<const RenderedPair*> batch;
    for (int64_t j = 0; j < o.batch_size; ++j)
      batch.push_back(&split.train[data::mix64(data::mix64(o.seed, static_cast<uint64_t>(step)),
                                               static_cast<uint64_t>(j)) %
                                   split.train.size()]);
    const auto t0 = std::chrono::steady_clock::now();
    opt.set_lr(learning_rate_at(step, o.optim.lr, o.min_lr, o.warmup, o.steps));
    RewardLossTerms t;
    {
      AutocastGuard guard(cpu.bf16_autocast, c10::DeviceType::CPU);
      opt.zero_grad();
      const torch::Tensor s = batch_scores(*model, batch, o.score_token);
      const int64_t p = static_cast<int64_t>(batch.size());
      t = reward_loss(s.slice(0, 0, p).to(torch::kFloat32), s.slice(0, p).to(torch::kFloat32),
                      batch_grades(batch), o.grade_weight);
    }
    t.loss.backward();
    clip_gradient_norm(model->trainable_tensors(), o.grad_clip > 0 ? o.grad_clip : 1e30);
    opt.step();
    ++step;
    log.write({{"step", step},
               {"loss", t.loss.item<double>()},
               {"pairwise", t.pairwise},
               {"graded", t.graded},
               {"accuracy", t.accuracy},
               {"margin", t.margin},
               {"seconds",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}});
    char detail[64];
    std::snprintf(detail, sizeof(detail), "loss %.3f acc %.2f", t.loss.item<double>(), t.accuracy);
    bar.set_detail(detail);
    bar.update(static_cast<uint64_t>(step));
    if ((o.eval_every > 0 && step % o.eval_every == 0) || step == o.steps) eval(step);
    const bool stopping = o.run.stop_after > 0 && ++steps_this_run >= o.run.stop_after;
    if ((o.checkpoint_every > 0 && step % o.checkpoint_every == 0) || step == o.steps || stopping)
      save_checkpoint(o.out_dir, *model, opt, {step, t.loss.item<double>()}, config_json(o));
    if (stopping) break;
  }
  bar.finish();
  result.steps_done = step;
  if (step >= o.steps) {
    result.model_path = (fs::path(o.out_dir) / "model.gguf").string();
    ExportOptions e{o.export_type, o.base, "afm-reward"};
    e.extra_u32.emplace_back(rl::kRewardScoreTokenKey, static_cast<uint32_t>(o.score_token));
    export_gguf(*model, e, result.model_path);
  }
  return result;
}

}  // namespace afm::train
