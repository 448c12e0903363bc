// Phi3ForCausalLM -> GGUF "phi3", tensors as llama.cpp's converter writes them: qkv_proj stays
// fused as attn_qkv (rows q | k | v), gate_up_proj as ffn_up (rows gate | up); rotate-half
// RoPE in llama.cpp, so no row permutation. `sliding_window` (Phi-3 mini 4k: 2047) becomes
// phi3.attention.sliding_window. LongRoPE (rope_scaling type longrope / su, the 128k variants)
// and partial rotary embeddings are refused by name.
#include <map>
#include <regex>

#include "base/error.h"
#include "hf/arch.h"

namespace afm::hf {
namespace {

void write_phi3_hparams(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  if (c.get_float("partial_rotary_factor", 1.0) != 1.0) {
    throw_error(ErrorCode::kUnsupported,
                c.path() + ": partial_rotary_factor other than 1 is not supported for phi3");
  }
  write_llama_family_hparams(c, arch, w);  // refuses rope_scaling types other than linear/yarn
  write_sliding_window(c, arch, w);
}

std::vector<TensorPlan> phi3_plan(const HfConfig&, const std::string& name) {
  static const std::map<std::string, std::string> kFused = {
      {"self_attn.qkv_proj.weight", "attn_qkv.weight"},
      {"mlp.gate_up_proj.weight", "ffn_up.weight"},
  };
  static const std::regex kLayerName(R"(model\.layers\.(\d+)\.(.+))");
  std::smatch m;
  if (std::regex_match(name, m, kLayerName)) {
    if (auto it = kFused.find(m[2]); it != kFused.end()) {
      return {TensorPlan{"blk." + m[1].str() + "." + it->second}};
    }
  }
  std::optional<TensorPlan> p = plan_llama_family_tensor(name);
  if (!p) return {};
  return {*p};
}

std::vector<std::string> required(const HfConfig& c) {
  return required_tensors(c, c.get_bool("tie_word_embeddings", false),
                          {"attn_norm", "attn_qkv", "attn_output", "ffn_norm", "ffn_up", "ffn_down"});
}

}  // namespace

AFM_REGISTER_HF_ARCH(phi3, ArchSpec{"Phi3ForCausalLM", "phi3", "phi3", write_phi3_hparams,
                                    phi3_plan, required});

}  // namespace afm::hf
