// LlamaForCausalLM and MistralForCausalLM -> GGUF "llama" (as llama.cpp's converter writes
// both), SmolLM3ForCausalLM -> "smollm3" (Llama tensors; NoPE in every 4th layer). llama.cpp applies RoPE to consecutive pairs for llama, so q_proj/k_proj rows are
// permuted from HF's rotate-half layout, as llama.cpp's converter does. Mistral's
// `sliding_window` (v0.1: 4096; later versions: null) becomes llama.attention.sliding_window,
// which afm's engine honours (llama.cpp ignores it for this architecture and attends to the
// whole context, so the two differ once a context passes the window).
#include <cstring>

#include "base/error.h"
#include "hf/arch.h"

namespace afm::hf {
namespace {

std::vector<TensorPlan> llama_plan(const HfConfig& c, const std::string& name) {
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

void write_mistral_hparams(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  write_llama_family_hparams(c, arch, w);
  write_sliding_window(c, arch, w);
}

// SmolLM3: its no_rope_layers list must be the every-4th-layer pattern llama.cpp hard-codes
// for the smollm3 architecture (and afm too); sliding windows are refused.
void write_smollm3_hparams(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  const uint64_t layers = c.get_uint("num_hidden_layers");
  if (c.has("no_rope_layers")) {
    const nlohmann::json& list = c.json()["no_rope_layers"];
    bool standard = list.is_array() && list.size() == layers;
    for (uint64_t i = 0; standard && i < layers; ++i) {
      standard = list[i].is_number_integer() && list[i].get<int64_t>() == ((i + 1) % 4 != 0 ? 1 : 0);
    }
    if (!standard) {
      throw_error(ErrorCode::kUnsupported,
                  c.path() + ": no_rope_layers other than RoPE off in every 4th layer is not "
                  "supported (llama.cpp's smollm3 fixes that pattern)");
    }
  } else if (c.get_uint("no_rope_layer_interval", 4) != 4) {
    throw_error(ErrorCode::kUnsupported,
                c.path() + ": no_rope_layer_interval other than 4 is not supported");
  }
  if (c.get_bool("use_sliding_window", false)) {
    throw_error(ErrorCode::kUnsupported,
                c.path() + ": use_sliding_window = true is not supported for smollm3");
  }
  write_llama_family_hparams(c, arch, w);
}

}  // namespace

AFM_REGISTER_HF_ARCH(smollm3,
                     ArchSpec{"SmolLM3ForCausalLM", "smollm3", "smollm3", write_smollm3_hparams,
                              llama_plan, llama_family_required_tensors});

AFM_REGISTER_HF_ARCH(mistral,
                     ArchSpec{"MistralForCausalLM", "mistral", "llama", write_mistral_hparams,
                              llama_plan, llama_family_required_tensors});

AFM_REGISTER_HF_ARCH(llama,
                     ArchSpec{"LlamaForCausalLM", "llama", "llama", write_llama_family_hparams,
                              llama_plan, llama_family_required_tensors});

}  // namespace afm::hf
