// A language model on this machine (Swift: SystemLanguageModel): a GGUF file afm runs
// (afm-device, afm-server, Llama, Qwen2/3) with a chat template afm implements.
//
// Constructing never throws: availability() reports why a model cannot be used (missing
// file, bad format, unsupported chat template). Cheap to copy (shared, immutable weights);
// safe to share between threads and sessions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace afm {
namespace model {
class LoraAdapter;
}

class LoadedModel;

struct ModelOptions {
  int64_t context_size = 0;  // tokens per session; 0: the model's training context, at most 4096
  int threads = 0;           // per session; 0: the physical cores available to this process
  // A draft model (GGUF with this model's vocabulary) for speculative decoding: responses are
  // the same, produced with fewer forward passes of this model (docs/speculative.md). "": none.
  // A draft that fails to load or has another vocabulary makes availability() false.
  std::string draft_model;
};

struct Availability {
  bool available = false;
  std::string reason;  // why not, when !available
};

class SystemLanguageModel {
 public:
  explicit SystemLanguageModel(const std::string& gguf_path, ModelOptions options = {});
  // The shipped default model: $AFM_MODEL if set, else models/afm-device-21m.gguf found in
  // the working directory or its parents, else the installed copy (PREFIX/share/afm/models,
  // found from the library's own location, so any install prefix works; a Python wheel puts
  // it in the environment's share/afm/models).
  static SystemLanguageModel default_model(ModelOptions options = {});
  // The same base model with a LoRA adapter (Swift: SystemLanguageModel(adapter:)): a GGUF
  // adapter file (docs/adapters.md), checked against the base (architecture, tensors, shapes
  // and, when the file names one, the base's SHA-256). Sessions on it run the adapter
  // unmerged; the base weights stay shared with `base` and every other adapter. Never throws:
  // a missing or mismatched adapter makes availability() false with the loader's message.
  SystemLanguageModel(const SystemLanguageModel& base, const std::string& adapter_path,
                      float adapter_scale = 1.0f);

  Availability availability() const;
  bool is_available() const { return availability().available; }
  int64_t context_size() const;
  const ModelOptions& options() const { return options_; }
  // Internal: the loaded model, or nullptr when unavailable.
  std::shared_ptr<const LoadedModel> loaded() const { return model_; }
  // Internal: the adapter sessions run (nullptr: the base model) and its scale.
  std::shared_ptr<const model::LoraAdapter> adapter() const { return adapter_; }
  float adapter_scale() const { return adapter_scale_; }
  // Internal: the draft model of ModelOptions::draft_model (nullptr: none).
  std::shared_ptr<const LoadedModel> draft() const { return draft_; }

 private:
  std::shared_ptr<const LoadedModel> model_, draft_;
  std::shared_ptr<const model::LoraAdapter> adapter_;
  float adapter_scale_ = 1.0f;
  ModelOptions options_;
  std::string error_;
};

}  // namespace afm
