#include "train/block_expansion.h"

#include <algorithm>
#include <map>
#include <string>

#include "base/error.h"

namespace afm::train {
namespace {

// "blk.7.attn_q.weight" -> {7, "attn_q.weight"}; {-1, name} for tensors outside the layers.
std::pair<int64_t, std::string> split_layer_name(const std::string& name) {
  const std::string prefix = "blk.";
  if (name.rfind(prefix, 0) != 0) return {-1, name};
  const size_t dot = name.find('.', prefix.size());
  return {std::stoll(name.substr(prefix.size(), dot - prefix.size())), name.substr(dot + 1)};
}

bool is_output_projection(const std::string& suffix) {
  return suffix == "attn_output.weight" || suffix == "ffn_down.weight";
}

void check_layers(const ModelConfig& base, std::vector<int64_t>& layers) {
  if (base.arch != "llama" && base.arch != "afm-device") {
    throw_error(ErrorCode::kUnsupported, "block expansion supports llama and afm-device models, not " + base.arch);
  }
  if (layers.empty()) throw_error(ErrorCode::kInvalidArgument, "block expansion needs at least one layer to copy");
  std::sort(layers.begin(), layers.end());
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i] < 0 || layers[i] >= base.block_count) {
      throw_error(ErrorCode::kInvalidArgument, "layer " + std::to_string(layers[i]) + " is not in 0 .. " +
                                                   std::to_string(base.block_count - 1));
    }
    if (i > 0 && layers[i] == layers[i - 1]) {
      throw_error(ErrorCode::kInvalidArgument, "layer " + std::to_string(layers[i]) + " is listed twice");
    }
  }
}

}  // namespace

ExpansionPlan plan_block_expansion(const ModelConfig& base, std::vector<int64_t> copied_layers) {
  check_layers(base, copied_layers);
  ExpansionPlan plan;
  plan.config = base;
  const int64_t block1 = base.effective_block1_layers();
  int64_t new_block1 = 0;
  size_t next_copy = 0;
  for (int64_t l = 0; l < base.block_count; ++l) {
    if (next_copy < copied_layers.size() && copied_layers[next_copy] == l) {
      plan.source_layer.push_back(l);
      plan.identity_copy.push_back(true);
      ++next_copy;
    }
    plan.source_layer.push_back(l);
    plan.identity_copy.push_back(false);
    if (l == block1 - 1) new_block1 = static_cast<int64_t>(plan.source_layer.size());
  }
  plan.config.block_count = static_cast<int64_t>(plan.source_layer.size());
  if (base.arch == "afm-device") plan.config.block1_layers = new_block1;
  return plan;
}

std::shared_ptr<LanguageModel> expand_blocks(const LanguageModel& base,
                                             const std::vector<int64_t>& copied_layers) {
  if (base.has_lora() || base.has_qat()) {
    throw_error(ErrorCode::kInvalidArgument, "block expansion needs a model without LoRA or QAT state");
  }
  const ExpansionPlan plan = plan_block_expansion(base.config(), copied_layers);
  std::map<std::string, torch::Tensor> source;
  for (const NamedParameter& p : base.gguf_parameters()) source[p.gguf_name] = p.tensor;

  std::shared_ptr<LanguageModel> grown = make_language_model(plan.config, 0);
  torch::NoGradGuard no_grad;
  for (const NamedParameter& p : grown->gguf_parameters()) {
    const auto [layer, suffix] = split_layer_name(p.gguf_name);
    std::string from = p.gguf_name;
    bool zero = false;
    if (layer >= 0) {
      from = "blk." + std::to_string(plan.source_layer[layer]) + "." + suffix;
      zero = plan.identity_copy[layer] && is_output_projection(suffix);
    }
    const auto it = source.find(from);
    if (it == source.end() || !it->second.sizes().equals(p.tensor.sizes())) {
      throw_error(ErrorCode::kInternal, "block expansion: no base tensor " + from + " shaped like " + p.gguf_name);
    }
    if (zero) {
      p.tensor.zero_();
    } else {
      p.tensor.copy_(it->second);
    }
  }
  return grown;
}

}  // namespace afm::train
