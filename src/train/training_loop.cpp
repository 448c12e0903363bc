#include "train/training_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/progress.h"
#include "train/adamw.h"
#include "train/checkpoint.h"
#include "train/data_parallel.h"
#include "train/json_log.h"
#include "train/language_model.h"
#include "train/lr_schedule.h"
#include "train/torch_ops.h"

namespace afm::train {
namespace {

using Clock = std::chrono::steady_clock;

// The language-model loss plus the model's auxiliary loss.
struct StepLoss {
  torch::Tensor total;  // what backward() runs on
  torch::Tensor lm;     // the language-model loss alone (detached; read once per step)
  std::vector<std::pair<std::string, torch::Tensor>> terms;  // an objective's, for the log
};

TrainBatch to_device(TrainBatch b, const torch::Device& device) {
  b.input = b.input.to(device);
  b.target = b.target.to(device);
  if (b.packing.packed()) {
    b.packing.segments = b.packing.segments.to(device);
    b.packing.positions = b.packing.positions.to(device);
  }
  return b;
}

StepLoss batch_loss(LanguageModel& model, const TrainBatch& batch, bool autocast,
                    Objective* objective) {
  AutocastGuard guard(autocast, batch.input.device().type());
  if (objective != nullptr) {
    ObjectiveLoss l = objective->loss(model, batch);
    return {l.total + model.aux_loss(), l.total.detach(), std::move(l.terms)};
  }
  torch::Tensor lm = language_model_loss(model, batch);
  return {lm + model.aux_loss(), lm.detach(), {}};
}

// The evaluation record's fields; "val_loss" is always one of them.
nlohmann::json evaluate(LanguageModel& model, const BatchSource& data, const torch::Device& device,
                        bool autocast, Objective* objective) {
  torch::NoGradGuard no_grad;
  if (objective != nullptr) {
    AutocastGuard guard(autocast, device.type());
    nlohmann::json r = objective->evaluate(
        model, [&](int64_t i) { return to_device(data.eval(i), device); }, data.eval_count());
    AFM_CHECK(r.contains("val_loss") && r["val_loss"].is_number());
    return r;
  }
  double sum = 0;
  for (int64_t i = 0; i < data.eval_count(); ++i) {
    sum += batch_loss(model, to_device(data.eval(i), device), autocast, nullptr).lm.item<double>();
  }
  const double val = sum / static_cast<double>(std::max<int64_t>(1, data.eval_count()));
  return {{"val_loss", val}, {"val_ppl", std::exp(val)}};
}

// Sums an objective's logged terms over a step's micro-batches.
void add_terms(std::vector<std::pair<std::string, torch::Tensor>>& sums,
               const std::vector<std::pair<std::string, torch::Tensor>>& terms) {
  if (sums.empty()) {
    for (const auto& [name, value] : terms) sums.emplace_back(name, value.to(torch::kFloat64));
    return;
  }
  for (size_t i = 0; i < terms.size(); ++i) sums[i].second += terms[i].second.to(torch::kFloat64);
}

std::string status_line(double loss, double tok_per_s, double mfu) {
  char buf[128];
  if (mfu > 0)
    std::snprintf(buf, sizeof(buf), "loss %.3f %.1fk tok/s MFU %.1f%%", loss, tok_per_s / 1e3,
                  100 * mfu);
  else
    std::snprintf(buf, sizeof(buf), "loss %.3f %.1fk tok/s", loss, tok_per_s / 1e3);
  return buf;
}

// Each rank's CUDA device is cuda:<rank> when several ranks share a machine.
torch::Device rank_device(const std::string& name, const DataParallel& dp) {
  torch::Device device(name);
  if (device.is_cuda() && dp.world_size() > 1 && !device.has_index()) {
    const int64_t gpus = static_cast<int64_t>(torch::cuda::device_count());
    if (dp.rank() >= gpus)
      throw_error(ErrorCode::kInvalidArgument,
                  "rank " + std::to_string(dp.rank()) + " has no GPU of its own (" +
                      std::to_string(gpus) + " visible): use at most that many ranks");
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(dp.rank()));
  }
  return device;
}

}  // namespace

torch::Tensor language_model_loss(LanguageModel& model, const TrainBatch& batch) {
  torch::Tensor logits = model.forward(batch.input, batch.packing);
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}),
                                              batch.target.reshape({-1}));
}

RunResult run_training(const TrainConfig& c, const RunOptions& run, const ModelFactory& make_model,
                       const BatchSource& data, Objective* objective) {
  // Before any tensor work: libtorch sizes its thread pool on first use.
  const CpuSetup cpu = configure_cpu(run.threads, run.cpu_bf16);
  DataParallel dp(rank_layout_from_environment());
  const torch::Device device = rank_device(run.device, dp);
  const bool cuda = device.is_cuda();
  const bool autocast = cuda || cpu.bf16_autocast;
  if (!cuda && !cpu.optimized_blas && dp.is_main())
    std::cerr << "afm-train: warning: matrix products run on " << cpu.blas
              << ", not an optimized BLAS (training is ~10x slower): install "
                 "libopenblas0-openmp (scripts/setup does)\n";
  const double peak = run.peak_tflops > 0 ? run.peak_tflops * 1e12 : (cuda ? 989e12 : 0.0);

  std::shared_ptr<LanguageModel> model = make_model();
  model->to(device);
  AdamW opt(model->trainable_parameters(), {c.optim.lr, c.optim.beta1, c.optim.beta2, c.optim.eps,
                                        c.optim.weight_decay});
  const nlohmann::json config_json = c.to_json();
  int64_t step = 0;
  if (!run.fresh && !c.out_dir.empty() && checkpoint_exists(c.out_dir))
    step = load_checkpoint(c.out_dir, *model, &opt).next_step;
  dp.broadcast(model->trainable_tensors());  // identical by seed; made certain

  std::optional<JsonLog> log;
  if (dp.is_main()) log.emplace(c.out_dir.empty() ? "." : c.out_dir, run.json_stdout);
  const int64_t tokens_per_step =
      data.tokens_per_micro_batch() * c.optim.grad_accum * dp.world_size();
  const double flops_per_token = c.model.training_flops_per_token(c.seq_len);
  if (step == 0 && log) {
    nlohmann::json start = {{"event", "start"}, {"parameters", c.model.parameter_count()},
                            {"active_parameters", c.model.parameter_count(true)},
                            {"trainable_parameters", model->trainable_count()},
                            {"tokens_per_step", tokens_per_step}, {"device", run.device},
                            {"cpu", describe(cpu)}, {"world_size", dp.world_size()},
                            {"config", config_json}};
    start.update(data.describe());
    log->write(start);
  }

  RunResult result;
  std::optional<ProgressBar> bar;
  if (dp.is_main()) bar.emplace("train", static_cast<uint64_t>(c.optim.steps),
                                ProgressBar::Unit::kItems);
  if (bar) bar->update(static_cast<uint64_t>(step));
  const auto start = Clock::now();
  int64_t steps_this_run = 0;
  CheckpointInfo last{step, 0};
  auto checkpoint = [&](double loss) {
    if (c.out_dir.empty() || !dp.is_main()) return;
    last = {step, loss};
    save_checkpoint(c.out_dir, *model, opt, last, config_json);
  };
  auto write_evaluation = [&](int64_t at) {
    nlohmann::json record = {{"step", at}};
    record.update(evaluate(*model, data, device, autocast, objective));
    result.val_loss = record["val_loss"].get<double>();
    log->write(record);
  };
  if (step == 0 && log && c.eval_every > 0) write_evaluation(0);  // the starting point
  while (step < c.optim.steps) {
    const double lr = learning_rate_at(step, c.optim.lr, c.optim.min_lr, c.optim.warmup_steps,
                                       c.optim.steps);
    opt.set_lr(lr);
    opt.zero_grad();
    torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().device(device));
    std::vector<std::pair<std::string, torch::Tensor>> term_sums;
    for (int64_t micro = 0; micro < c.optim.grad_accum; ++micro) {
      // Micro-batch m of rank r is global micro-batch m * world + r: W ranks with A
      // micro-batches each see exactly the batches of one rank with W * A.
      const int64_t global_micro = micro * dp.world_size() + dp.rank();
      StepLoss l = batch_loss(*model, to_device(data.train(step, global_micro), device), autocast,
                              objective);
      (l.total / static_cast<double>(c.optim.grad_accum)).backward();
      loss_sum += l.lm.to(torch::kFloat32);
      add_terms(term_sums, l.terms);
    }
    dp.average_gradients(model->trainable_tensors());
    const double loss =
        dp.average(loss_sum.item<double>() / static_cast<double>(c.optim.grad_accum), device);
    // Clipping at infinity still returns the norm: a non-finite gradient stops the run too.
    const double max_norm = c.optim.grad_clip > 0 ? c.optim.grad_clip
                                                  : std::numeric_limits<double>::infinity();
    const double grad_norm = clip_gradient_norm(model->trainable_tensors(), max_norm);
    if (!std::isfinite(loss) || !std::isfinite(grad_norm)) {
      throw_error(ErrorCode::kInternal,
                  "loss " + std::to_string(loss) + ", gradient norm " +
                      std::to_string(grad_norm) + " at step " + std::to_string(step) +
                      ": stopped without saving (last checkpoint: step " +
                      std::to_string(last.next_step) + " in " + c.out_dir + ")");
    }
    opt.step();
    model->after_optimizer_step();
    ++step, ++steps_this_run;

    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    result.tokens_per_second = static_cast<double>(steps_this_run * tokens_per_step) / secs;
    result.mfu = peak > 0 ? result.tokens_per_second * flops_per_token / peak : 0;
    result.last_loss = loss;
    if (bar) {
      bar->set_detail(status_line(loss, result.tokens_per_second, result.mfu));
      bar->update(static_cast<uint64_t>(step));
    }
    if (log && (step % c.log_every == 0 || step == c.optim.steps)) {
      nlohmann::json record = {{"step", step},
                               {"loss", loss},
                               {"lr", lr},
                               {"grad_norm", grad_norm},
                               {"tokens", step * tokens_per_step},
                               {"tokens_per_s", result.tokens_per_second},
                               {"mfu", result.mfu},
                               {"elapsed_s", secs}};
      // This rank's micro-batches (the loss above is averaged over ranks).
      for (const auto& [name, sum] : term_sums)
        record[name] = sum.item<double>() / static_cast<double>(c.optim.grad_accum);
      log->write(record);
    }
    if (log && ((c.eval_every > 0 && step % c.eval_every == 0) || step == c.optim.steps))
      write_evaluation(step);
    const bool stopping = run.stop_after > 0 && steps_this_run >= run.stop_after;
    if ((c.checkpoint_every > 0 && step % c.checkpoint_every == 0) || step == c.optim.steps ||
        stopping)
      checkpoint(loss);
    if (stopping) break;
  }
  // A run resumed from its last step trains nothing; evaluate it so the caller reports the
  // model's real held-out loss (scripts/gpu_recovery resumes a GPU run to write its adapter).
  if (steps_this_run == 0 && step > 0 && log) write_evaluation(step);
  if (bar) bar->finish();
  result.steps_done = step;
  return result;
}

}  // namespace afm::train
