// LlamaForCausalLM -> GGUF "llama". llama.cpp applies RoPE to consecutive pairs for llama, so
// q_proj/k_proj rows are permuted from HF's rotate-half layout, as llama.cpp's converter does.
#include <cstring>

#include "hf/arch.h"

namespace afm::hf {
namespace {

std::vector<TensorPlan> plan(const HfConfig& c, const std::string& name) {
  std::optional<TensorPlan> p = plan_llama_family_tensor(name);
  if (!p) return {};
  const std::string& g = p->gguf_name;
  auto ends_with = [&](const char* s) { return g.size() >= std::strlen(s) && g.ends_with(s); };
  if (ends_with("attn_q.weight") || ends_with("attn_q.bias")) {
    p->permute_rows_for_rope = true;
    p->permute_heads = c.get_uint("num_attention_heads");
  } else if (ends_with("attn_k.weight") || ends_with("attn_k.bias")) {
    p->permute_rows_for_rope = true;
    p->permute_heads = c.get_uint("num_key_value_heads", c.get_uint("num_attention_heads"));
  }
  return {*p};
}

}  // namespace

AFM_REGISTER_HF_ARCH(llama,
                     ArchSpec{"LlamaForCausalLM", "llama", "llama", write_llama_family_hparams,
                              plan, llama_family_required_tensors});

}  // namespace afm::hf
