#include "train/train_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "train/json_fields.h"

namespace afm::train {
namespace {

[[noreturn]] void invalid_setting(const std::string& where, const std::string& rule) {
  throw_error(ErrorCode::kInvalidArgument, "train config " + where + ": " + rule);
}

void reject_unknown(const nlohmann::json& j, const std::string& where,
                    const std::set<std::string>& known) {
  if (!j.is_object()) invalid_setting(where, "must be an object");
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) invalid_setting(where + "/" + key, "unknown field");
}

template <typename T>
void read_setting(const nlohmann::json& j, const std::string& where, const char* name, T& out) {
  read_json_field(j, where, name, out, "train config");
}

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

OptimConfig read_optim(const nlohmann::json& j) {
  reject_unknown(j, "/optim", {"lr", "min_lr", "warmup_steps", "steps", "batch_size",
                               "grad_accum", "weight_decay", "beta1", "beta2", "eps",
                               "grad_clip"});
  OptimConfig o;
  read_setting(j, "/optim", "lr", o.lr);
  read_setting(j, "/optim", "min_lr", o.min_lr);
  read_setting(j, "/optim", "warmup_steps", o.warmup_steps);
  read_setting(j, "/optim", "steps", o.steps);
  read_setting(j, "/optim", "batch_size", o.batch_size);
  read_setting(j, "/optim", "grad_accum", o.grad_accum);
  read_setting(j, "/optim", "weight_decay", o.weight_decay);
  read_setting(j, "/optim", "beta1", o.beta1);
  read_setting(j, "/optim", "beta2", o.beta2);
  read_setting(j, "/optim", "eps", o.eps);
  read_setting(j, "/optim", "grad_clip", o.grad_clip);
  if (!(o.lr > 0)) invalid_setting("/optim/lr", "must be > 0");
  if (o.min_lr < 0 || o.min_lr > o.lr) invalid_setting("/optim/min_lr", "must be in 0 .. lr");
  if (o.warmup_steps < 0) invalid_setting("/optim/warmup_steps", "must be >= 0");
  if (o.steps < 1) invalid_setting("/optim/steps", "must be >= 1");
  if (o.batch_size < 1) invalid_setting("/optim/batch_size", "must be >= 1");
  if (o.grad_accum < 1) invalid_setting("/optim/grad_accum", "must be >= 1");
  if (o.weight_decay < 0) invalid_setting("/optim/weight_decay", "must be >= 0");
  if (!(o.beta1 >= 0 && o.beta1 < 1)) invalid_setting("/optim/beta1", "must be in [0, 1)");
  if (!(o.beta2 >= 0 && o.beta2 < 1)) invalid_setting("/optim/beta2", "must be in [0, 1)");
  if (!(o.eps > 0)) invalid_setting("/optim/eps", "must be > 0");
  if (o.grad_clip < 0) invalid_setting("/optim/grad_clip", "must be >= 0");
  return o;
}

}  // namespace

TrainConfig train_config_from_json(const nlohmann::json& j, const std::string& base_dir) {
  reject_unknown(j, "", {"model", "data", "optim", "eval", "log", "checkpoint", "seed"});
  TrainConfig c;
  if (!j.contains("model")) invalid_setting("/model", "missing");
  try {
    c.model = ModelConfig::from_json(j.at("model"));
  } catch (const Error& e) {
    invalid_setting("/model", e.what());
  }
  if (!j.contains("data")) invalid_setting("/data", "missing");
  const auto& data = j.at("data");
  reject_unknown(data, "/data", {"shards", "seq_len"});
  read_setting(data, "/data", "shards", c.shards);
  read_setting(data, "/data", "seq_len", c.seq_len);
  if (c.shards.empty()) invalid_setting("/data/shards", "missing");
  c.shards = resolve(c.shards, base_dir);
  if (c.seq_len < 2 || c.seq_len > c.model.context_length)
    invalid_setting("/data/seq_len", "must be in 2 .. model context_length");
  if (j.contains("optim")) c.optim = read_optim(j.at("optim"));
  if (j.contains("eval")) {
    reject_unknown(j.at("eval"), "/eval", {"every", "batches"});
    read_setting(j.at("eval"), "/eval", "every", c.eval_every);
    read_setting(j.at("eval"), "/eval", "batches", c.eval_batches);
    if (c.eval_every < 0 || c.eval_batches < 1)
      invalid_setting("/eval", "every >= 0, batches >= 1");
  }
  if (j.contains("log")) {
    reject_unknown(j.at("log"), "/log", {"every"});
    read_setting(j.at("log"), "/log", "every", c.log_every);
    if (c.log_every < 1) invalid_setting("/log/every", "must be >= 1");
  }
  if (j.contains("checkpoint")) {
    reject_unknown(j.at("checkpoint"), "/checkpoint", {"dir", "every"});
    read_setting(j.at("checkpoint"), "/checkpoint", "dir", c.out_dir);
    read_setting(j.at("checkpoint"), "/checkpoint", "every", c.checkpoint_every);
    if (c.checkpoint_every < 0) invalid_setting("/checkpoint/every", "must be >= 0");
  }
  c.out_dir = resolve(c.out_dir, base_dir);
  read_setting(j, "", "seed", c.seed);
  return c;
}

TrainConfig load_train_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_error(ErrorCode::kIo, "cannot open train config " + path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw_error(ErrorCode::kFormat, path + ": not valid JSON: " + e.what());
  }
  try {
    return train_config_from_json(j, std::filesystem::path(path).parent_path().string());
  } catch (const Error& e) {
    throw_error(e.code(), path + ": " + e.what());
  }
}

nlohmann::json TrainConfig::to_json() const {
  return {{"model", model.to_json()},
          {"data", {{"shards", shards}, {"seq_len", seq_len}}},
          {"optim",
           {{"lr", optim.lr}, {"min_lr", optim.min_lr}, {"warmup_steps", optim.warmup_steps},
            {"steps", optim.steps}, {"batch_size", optim.batch_size},
            {"grad_accum", optim.grad_accum}, {"weight_decay", optim.weight_decay},
            {"beta1", optim.beta1}, {"beta2", optim.beta2}, {"eps", optim.eps},
            {"grad_clip", optim.grad_clip}}},
          {"eval", {{"every", eval_every}, {"batches", eval_batches}}},
          {"log", {{"every", log_every}}},
          {"checkpoint", {{"dir", out_dir}, {"every", checkpoint_every}}},
          {"seed", seed}};
}

}  // namespace afm::train
