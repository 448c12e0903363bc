// The training loop on a tiny learnable stream, on the CPU: the loss falls, a resumed run
// continues exactly where an uninterrupted one would (one resumed at its end only evaluates),
// a NaN stops the run without touching the last checkpoint, and bad configs and shards are
// typed errors naming the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "shard_fixture.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace afm::train {
namespace {

namespace fs = std::filesystem;

class Trainer : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("afm_trainer_test_" + std::to_string(getpid()));
    fs::remove_all(root_);
    testing::write_tiny_shards((root_ / "shards").string(), 64, 20000, 2000);
  }
  void TearDown() override { fs::remove_all(root_); }

  TrainConfig config(const std::string& arch, const std::string& run) const {
    nlohmann::json model = {{"arch", arch}, {"vocab_size", 64}, {"context_length", 64},
                            {"embedding_length", 32}, {"block_count", 2},
                            {"feed_forward_length", 64}, {"head_count", 2},
                            {"head_count_kv", 1}};
    if (arch == "afm-server")
      model.update({{"tracks", 2}, {"track_block_depth", 1}, {"expert_count", 4},
                    {"expert_used_count", 2}, {"expert_feed_forward_length", 16},
                    {"sliding_window", 8}, {"global_every", 2}});
    nlohmann::json j = {
        {"model", model},
        {"data", {{"shards", (root_ / "shards").string()}, {"seq_len", 32}}},
        {"optim", {{"lr", 1e-2}, {"min_lr", 1e-3}, {"warmup_steps", 5}, {"steps", 40},
                   {"batch_size", 8}, {"grad_accum", 2}}},
        {"eval", {{"every", 20}, {"batches", 2}}},
        {"log", {{"every", 1}}},
        {"checkpoint", {{"dir", (root_ / run).string()}, {"every", 10}}},
        {"seed", 5}};
    return train_config_from_json(j, "");
  }

  std::vector<double> losses(const std::string& run) const {
    std::vector<double> out;
    std::ifstream in(root_ / run / "log.jsonl");
    for (std::string line; std::getline(in, line);) {
      auto j = nlohmann::json::parse(line);
      if (j.contains("loss")) out.push_back(j["loss"].get<double>());
    }
    return out;
  }

  fs::path root_;
};

TEST_F(Trainer, LossFallsOnALearnableStreamForEveryArchitecture) {
  for (const std::string arch : {"llama", "afm-device", "afm-server"}) {
    const RunResult r = run_pretraining(config(arch, arch), {.threads = 2});
    const std::vector<double> l = losses(arch);
    ASSERT_EQ(l.size(), 40u) << arch;
    EXPECT_LT(l.back(), 0.5 * l.front()) << arch;
    EXPECT_LT(r.val_loss, 0.6 * l.front()) << arch;
    EXPECT_TRUE(fs::exists(root_ / arch / "checkpoint.pt")) << arch;
  }
}

TEST_F(Trainer, LossFallsInFloat32AndUnderBf16Autocast) {
  for (const CpuBf16 mode : {CpuBf16::kOff, CpuBf16::kOn}) {
    const std::string run = mode == CpuBf16::kOn ? "bf16" : "f32";
    RunOptions options{.threads = 2};
    options.cpu_bf16 = mode;
    const RunResult r = run_pretraining(config("afm-device", run), options);
    const std::vector<double> l = losses(run);
    ASSERT_EQ(l.size(), 40u) << run;
    EXPECT_LT(l.back(), 0.5 * l.front()) << run;
    EXPECT_LT(r.val_loss, 0.6 * l.front()) << run;
  }
}

TEST_F(Trainer, AResumedRunGivesTheSameLossesAsAnUninterruptedOne) {
  run_pretraining(config("afm-device", "straight"), {.threads = 2});
  run_pretraining(config("afm-device", "resumed"), {.stop_after = 13, .threads = 2});
  auto model = make_language_model(config("afm-device", "resumed").model, 5);
  EXPECT_EQ(load_checkpoint((root_ / "resumed").string(), *model, nullptr).next_step, 13);
  run_pretraining(config("afm-device", "resumed"), {.threads = 2});
  const std::vector<double> a = losses("straight"), b = losses("resumed");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "step " << i + 1;
}

TEST_F(Trainer, ResumingAFinishedRunTrainsNothingAndReportsItsHeldOutLoss) {
  const RunResult first = run_pretraining(config("afm-device", "done"), {.threads = 2});
  const RunResult again = run_pretraining(config("afm-device", "done"), {.threads = 2});
  EXPECT_EQ(again.steps_done, 40);
  EXPECT_EQ(losses("done").size(), 40u);  // no step trained twice
  EXPECT_GT(again.val_loss, 0.0);
  EXPECT_NEAR(again.val_loss, first.val_loss, 1e-4 * first.val_loss);
}

TEST_F(Trainer, ANanLossStopsTheRunAndKeepsTheLastGoodCheckpoint) {
  // A learning rate of 1e8 makes the weights overflow after one update.
  nlohmann::json j = config("llama", "nan").to_json();
  j["optim"].update({{"lr", 1e8}, {"min_lr", 0}, {"warmup_steps", 0}, {"grad_clip", 0}});
  j["checkpoint"]["every"] = 1;
  const TrainConfig c = train_config_from_json(j, "");
  try {
    run_pretraining(c, {.threads = 2});
    FAIL() << "a non-finite loss did not stop the run";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stopped without saving"), std::string::npos)
        << e.what();
  }
  auto model = make_language_model(c.model, c.seed);
  const CheckpointInfo info = load_checkpoint(c.out_dir, *model, nullptr);
  EXPECT_GE(info.next_step, 1);
  EXPECT_TRUE(std::isfinite(info.loss));
  for (const NamedParameter& p : model->gguf_parameters())
    EXPECT_TRUE(torch::isfinite(p.tensor).all().item<bool>()) << p.gguf_name;
}

TEST_F(Trainer, BadConfigsAndShardsAreTypedErrorsNamingTheProblem) {
  nlohmann::json j = config("llama", "x").to_json();
  j["optim"]["lr"] = -1;
  EXPECT_THROW(train_config_from_json(j, ""), Error);
  try {
    train_config_from_json(j, "");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/optim/lr"), std::string::npos) << e.what();
  }
  j = config("llama", "x").to_json();
  j["model"]["colour"] = "blue";
  try {
    train_config_from_json(j, "");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("colour"), std::string::npos) << e.what();
  }
  TrainConfig c = config("llama", "x");
  c.model.vocab_size = 65;
  EXPECT_THROW(run_pretraining(c, {}), Error);  // shards say 64
  std::ofstream(root_ / "shards" / "train-00000.bin", std::ios::binary) << "AFMTOK01 broken";
  try {
    run_pretraining(config("llama", "y"), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train-00000.bin"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_train_config((root_ / "missing.json").string()), Error);
}

}  // namespace
}  // namespace afm::train
