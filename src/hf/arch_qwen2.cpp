// Qwen2ForCausalLM -> GGUF "qwen2" (NEOX-style RoPE in llama.cpp: no q/k permutation).
#include "hf/arch.h"

namespace afm::hf {
namespace {

std::vector<TensorPlan> plan(const HfConfig&, const std::string& name) {
  std::optional<TensorPlan> p = plan_llama_family_tensor(name);
  if (!p) return {};
  return {*p};
}

}  // namespace

AFM_REGISTER_HF_ARCH(qwen2,
                     ArchSpec{"Qwen2ForCausalLM", "qwen2", "qwen2", write_llama_family_hparams,
                              plan, llama_family_required_tensors});

}  // namespace afm::hf
