// Qwen2ForCausalLM -> GGUF "qwen2" (NEOX-style RoPE in llama.cpp: no q/k permutation).
#include "base/error.h"
#include "hf/arch.h"

namespace afm::hf {
namespace {

std::vector<TensorPlan> qwen2_plan(const HfConfig&, const std::string& name) {
  std::optional<TensorPlan> p = plan_llama_family_tensor(name);
  if (!p) return {};
  return {*p};
}

// Qwen2's optional sliding window covers only the layers from max_window_layers on, which
// neither llama.cpp's qwen2 nor afm runs: refused rather than converted to something else.
void write_qwen2_hparams(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  if (c.has("use_sliding_window") && c.json()["use_sliding_window"].is_boolean() &&
      c.json()["use_sliding_window"].get<bool>()) {
    throw_error(ErrorCode::kUnsupported,
                c.path() + ": use_sliding_window = true is not supported for qwen2");
  }
  write_llama_family_hparams(c, arch, w);
}

}  // namespace

AFM_REGISTER_HF_ARCH(qwen2, ArchSpec{"Qwen2ForCausalLM", "qwen2", "qwen2", write_qwen2_hparams,
                                     qwen2_plan, llama_family_required_tensors});

}  // namespace afm::hf
