// A pretraining run's configuration file (JSON): the model (ModelConfig), the data, the
// optimiser and schedule, evaluation, checkpoints. docs/training.md shows a full example.
//
// Contract: load_train_config() throws afm::Error naming the file and the field (JSON pointer)
// on any missing, mistyped, out-of-range or unknown field. Relative paths inside the file are
// resolved against the file's folder.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "train/model_config.h"

namespace afm::train {

struct OptimConfig {
  double lr = 3e-4;        // peak learning rate
  double min_lr = 3e-5;    // end of the cosine
  int64_t warmup_steps = 100;
  int64_t steps = 1000;    // optimiser steps
  int64_t batch_size = 8;  // sequences per micro-batch (per process)
  int64_t grad_accum = 1;  // micro-batches per optimiser step
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;  // global L2 norm; 0 disables
};

struct TrainConfig {
  ModelConfig model;
  std::string shards;      // folder written by `afm data shards`
  int64_t seq_len = 512;
  OptimConfig optim;
  int64_t eval_every = 100;
  int64_t eval_batches = 8;
  int64_t log_every = 10;
  std::string out_dir;     // checkpoints and log.jsonl
  int64_t checkpoint_every = 200;
  uint64_t seed = 1234;

  nlohmann::json to_json() const;
};

TrainConfig train_config_from_json(const nlohmann::json& j, const std::string& base_dir);
TrainConfig load_train_config(const std::string& path);

}  // namespace afm::train
