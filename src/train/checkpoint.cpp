#include "train/checkpoint.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/error.h"

namespace afm::train {
namespace fs = std::filesystem;

std::string checkpoint_path(const std::string& dir) {
  return (fs::path(dir) / "checkpoint.pt").string();
}

bool checkpoint_exists(const std::string& dir) { return fs::exists(checkpoint_path(dir)); }

void save_checkpoint(const std::string& dir, LanguageModel& model, const AdamW& opt,
                     const CheckpointInfo& info, const nlohmann::json& config) {
  const std::string path = checkpoint_path(dir);
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  try {
    fs::create_directories(dir);
    torch::serialize::OutputArchive archive;
    for (const NamedParameter& p : model.trainable_parameters())
      archive.write("param/" + p.gguf_name, p.tensor.detach().cpu());
    for (const NamedParameter& p : model.extra_state())
      archive.write("state/" + p.gguf_name, p.tensor.detach().cpu());
    if (const auto& qat = model.qat_spec()) {
      archive.write("qat/spec", torch::tensor({qat->weights_2bit ? 1.0 : 0.0,
                                               qat->embedding_4bit ? 1.0 : 0.0, qat->ema_decay},
                                              torch::kFloat64));
    }
    opt.save(archive);
    archive.write("next_step", torch::tensor(info.next_step, torch::kInt64));
    archive.write("loss", torch::tensor(info.loss, torch::kFloat64));
    archive.save_to(tmp);
    fs::rename(tmp, path);
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw_error(ErrorCode::kIo, "cannot write checkpoint " + path + ": " + e.what());
  }
  nlohmann::json meta = {{"next_step", info.next_step}, {"loss", info.loss}, {"config", config}};
  write_file_atomic((fs::path(dir) / "checkpoint.json").string(), meta.dump(2) + "\n");
}

nlohmann::json read_checkpoint_config(const std::string& dir) {
  const std::string path = (fs::path(dir) / "checkpoint.json").string();
  std::ifstream in(path);
  if (!in) throw_error(ErrorCode::kNotFound, "cannot open " + path);
  try {
    return nlohmann::json::parse(in).at("config");
  } catch (const nlohmann::json::exception& e) {
    throw_error(ErrorCode::kFormat, path + ": " + e.what());
  }
}

CheckpointInfo load_checkpoint(const std::string& dir, LanguageModel& model, AdamW* opt) {
  const std::string path = checkpoint_path(dir);
  torch::serialize::InputArchive archive;
  try {
    // Tensors land on the model's device, so the optimiser state sits next to its parameters.
    archive.load_from(path, model.trainable_parameters().front().tensor.device());
  } catch (const std::exception& e) {
    throw_error(ErrorCode::kFormat, "cannot read checkpoint " + path + ": " + e.what());
  }
  torch::NoGradGuard no_grad;
  auto restore = [&](const std::string& kind, const NamedParameter& p) {
    torch::Tensor t;
    if (!archive.try_read(kind + "/" + p.gguf_name, t))
      throw_error(ErrorCode::kFormat, path + ": no parameter " + p.gguf_name);
    if (t.sizes() != p.tensor.sizes())
      throw_error(ErrorCode::kFormat, path + ": parameter " + p.gguf_name + " has shape " +
                                          c10::str(t.sizes()) + ", the model expects " +
                                          c10::str(p.tensor.sizes()));
    p.tensor.copy_(t);
  };
  for (const NamedParameter& p : model.trainable_parameters()) restore("param", p);
  for (const NamedParameter& p : model.extra_state()) restore("state", p);
  if (opt != nullptr) {
    try {
      opt->load(archive);
    } catch (const Error& e) {
      throw_error(ErrorCode::kFormat, path + ": " + e.what());
    }
  }
  torch::Tensor step, loss;
  if (!archive.try_read("next_step", step) || !archive.try_read("loss", loss))
    throw_error(ErrorCode::kFormat, path + ": no step counter");
  return {step.item<int64_t>(), loss.item<double>()};
}

std::optional<QatSpec> read_checkpoint_qat(const std::string& dir) {
  const std::string path = checkpoint_path(dir);
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const std::exception& e) {
    throw_error(ErrorCode::kFormat, "cannot read checkpoint " + path + ": " + e.what());
  }
  torch::Tensor spec;
  if (!archive.try_read("qat/spec", spec)) return std::nullopt;
  if (spec.numel() != 3) throw_error(ErrorCode::kFormat, path + ": malformed qat/spec");
  const auto v = spec.to(torch::kFloat64).contiguous();
  const double* d = v.data_ptr<double>();
  return QatSpec{d[0] != 0, d[1] != 0, d[2]};
}

}  // namespace afm::train
