#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <cstdlib>
#include <filesystem>

#include "afm/model.h"
#include "framework/loaded_model.h"
#include "framework/speculator.h"
#include "model/context.h"
#include "model/lora.h"

namespace afm {

SystemLanguageModel::SystemLanguageModel(const std::string& gguf_path, ModelOptions options)
    : options_(options) {
  try {
    model_ = LoadedModel::load(gguf_path);
    if (!model_->chat_template()) error_ = gguf_path + ": " + model_->unavailable_reason();
    if (!options_.draft_model.empty()) {
      SpeculationConfig speculation;
      speculation.draft = LoadedModel::load(options_.draft_model);
      check_speculation(speculation, *model_);
      draft_ = speculation.draft;
    }
  } catch (const std::exception& e) {
    model_.reset();
    draft_.reset();
    error_ = e.what();
  }
}

SystemLanguageModel::SystemLanguageModel(const SystemLanguageModel& base,
                                         const std::string& adapter_path, float adapter_scale)
    : model_(base.model_), draft_(base.draft_), options_(base.options_), error_(base.error_) {
  adapter_scale_ = adapter_scale;
  if (!model_ || !error_.empty()) return;
  try {
    if (!std::isfinite(adapter_scale)) {
      throw std::invalid_argument("adapter scale must be finite, got " + std::to_string(adapter_scale));
    }
    adapter_ = model::LoraAdapter::load(adapter_path, model_->weights()->file());
  } catch (const std::exception& e) {
    adapter_.reset();
    error_ = e.what();
  }
}

namespace {

// The folder of the file that holds this code: the installed libafm.so, or a program that
// linked the framework statically.
std::filesystem::path code_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&code_folder), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path() : file.parent_path();
}

}  // namespace

SystemLanguageModel SystemLanguageModel::default_model(ModelOptions options) {
  if (const char* env = std::getenv("AFM_MODEL"); env && *env) {
    return SystemLanguageModel(env, options);
  }
  const std::filesystem::path relative = "models/afm-device-21m.gguf";
  std::error_code ec;
  for (std::filesystem::path dir = std::filesystem::current_path(ec); !dir.empty();
       dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / relative, ec)) return SystemLanguageModel((dir / relative).string(), options);
    if (dir == dir.parent_path()) break;
  }
  // An installed library: PREFIX/lib[/multiarch]/libafm.so -> PREFIX/share/afm/models, or the
  // Python extension: VENV/lib/pythonX.Y/site-packages/afm/ -> VENV/share/afm/models (the
  // folders above the library's, at most four up).
  std::filesystem::path dir = code_folder();
  for (int up = 0; up < 4 && !dir.empty() && dir != dir.parent_path(); ++up) {
    dir = dir.parent_path();
    const std::filesystem::path installed = dir / "share/afm" / relative;
    if (std::filesystem::exists(installed, ec)) return SystemLanguageModel(installed.string(), options);
  }
  return SystemLanguageModel(relative.string(), options);  // unavailable, naming the file
}

Availability SystemLanguageModel::availability() const {
  if (model_ && error_.empty()) return {true, {}};
  return {false, error_};
}

int64_t SystemLanguageModel::context_size() const {
  if (!model_) return 0;
  return model::default_n_ctx(model_->weights()->hparams(), std::max<int64_t>(options_.context_size, 0));
}

}  // namespace afm
