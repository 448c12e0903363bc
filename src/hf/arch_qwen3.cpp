// Qwen3ForCausalLM -> GGUF "qwen3" (NEOX-style RoPE in llama.cpp: no q/k permutation).
#include "hf/arch.h"

namespace afm::hf {
namespace {

std::vector<TensorPlan> qwen3_plan(const HfConfig&, const std::string& name) {
  std::optional<TensorPlan> p = plan_llama_family_tensor(name);
  if (!p) return {};
  return {*p};
}

}  // namespace

AFM_REGISTER_HF_ARCH(qwen3,
                     ArchSpec{"Qwen3ForCausalLM", "qwen3", "qwen3", write_llama_family_hparams,
                              qwen3_plan, llama_family_required_tensors});

}  // namespace afm::hf
