// Qwen2ForCausalLM -> GGUF "qwen2" (NEOX-style RoPE in llama.cpp: no q/k permutation).
#include "hf/arch.h"

namespace afm::hf {
namespace {

std::optional<TensorPlan> plan(const HfConfig&, const std::string& name) {
  return plan_llama_family_tensor(name);
}

}  // namespace

AFM_REGISTER_HF_ARCH(qwen2,
                     ArchSpec{"Qwen2ForCausalLM", "qwen2", write_llama_family_hparams, plan});

}  // namespace afm::hf
