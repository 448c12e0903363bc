// Gemma2ForCausalLM -> GGUF "gemma2" and Gemma3ForCausalLM (model_type gemma3_text) -> "gemma3",
// tensors and keys as llama.cpp's converter writes them: every *norm.weight shifted by +1
// (Gemma's RMSNorm multiplies by 1 + w), post_attention_layernorm -> post_attention_norm,
// pre_feedforward_layernorm -> ffn_norm, post_feedforward_layernorm -> post_ffw_norm, the
// head tied to the embedding. afm also writes {arch}.attention.scale =
// query_pre_attn_scalar^-1/2 (llama.cpp derives it from the model size; the two agree on the
// published models) and gemma3.rope.freq_base_swa = rope_local_base_freq.
// Refused by name: an activation other than gelu_pytorch_tanh, a layer_types list other than
// the fixed pattern (Gemma 2: sliding, full, ...; Gemma 3: five sliding, one full), and
// rope_scaling types write_llama_family_hparams refuses.
#include <cmath>
#include <map>
#include <regex>

#include "base/error.h"
#include "hf/arch.h"

namespace afm::hf {
namespace {

void check_layer_types(const HfConfig& c, uint64_t pattern) {
  if (!c.has("layer_types")) return;
  const nlohmann::json& types = c.json()["layer_types"];
  const uint64_t layers = c.get_uint("num_hidden_layers");
  bool ok = types.is_array() && types.size() == layers;
  for (uint64_t i = 0; ok && i < layers; ++i) {
    const char* want = (i + 1) % pattern != 0 ? "sliding_attention" : "full_attention";
    ok = types[i].is_string() && types[i].get<std::string>() == want;
  }
  if (!ok) {
    throw_error(ErrorCode::kUnsupported,
                c.path() + ": layer_types must be sliding attention in all but every " +
                    std::to_string(pattern) + "th layer (the pattern llama.cpp and afm run)");
  }
}

void write_common(const HfConfig& c, const std::string& arch, gguf::Writer& w, uint64_t pattern) {
  const std::string act = c.get_string("hidden_activation", c.get_string("hidden_act", "gelu_pytorch_tanh"));
  if (act != "gelu_pytorch_tanh") {
    throw_error(ErrorCode::kUnsupported,
                c.path() + ": hidden_activation '" + act + "' is not supported (gelu_pytorch_tanh)");
  }
  check_layer_types(c, pattern);
  write_llama_family_hparams(c, arch, w);
  const uint64_t n_embd = c.get_uint("hidden_size"), n_head = c.get_uint("num_attention_heads");
  const double scalar = c.get_float("query_pre_attn_scalar",
                                    static_cast<double>(c.get_uint("head_dim", n_embd / n_head)));
  if (!(scalar > 0)) throw_error(ErrorCode::kFormat, c.path() + ": query_pre_attn_scalar must be > 0");
  w.set(arch + ".attention.scale", gguf::Value(static_cast<float>(1.0 / std::sqrt(scalar))));
  write_sliding_window(c, arch, w);
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    if (c.has(key)) w.set(arch + "." + key, gguf::Value(static_cast<float>(c.get_float(key, 0))));
  }
}

void write_gemma2(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  write_common(c, arch, w, 2);
}

void write_gemma3(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  if (c.has("attn_logit_softcapping")) {
    throw_error(ErrorCode::kUnsupported, c.path() + ": attn_logit_softcapping is not a Gemma 3 setting");
  }
  write_common(c, arch, w, 6);
  w.set(arch + ".rope.freq_base_swa",
        gguf::Value(static_cast<float>(c.get_float("rope_local_base_freq", 10000.0))));
}

std::vector<TensorPlan> gemma_plan(const HfConfig&, const std::string& name) {
  static const std::map<std::string, std::string> kGemma = {
      {"post_attention_layernorm.weight", "post_attention_norm.weight"},
      {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
      {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
  };
  static const std::regex kLayerName(R"(model\.layers\.(\d+)\.(.+))");
  std::smatch m;
  std::optional<TensorPlan> p;
  if (std::regex_match(name, m, kLayerName) && kGemma.count(m[2])) {
    p = TensorPlan{"blk." + m[1].str() + "." + kGemma.at(m[2])};
  } else {
    p = plan_llama_family_tensor(name);
  }
  if (!p) return {};
  if (name.ends_with("norm.weight")) p->add = 1.0f;
  return {*p};
}

// Gemma always ties its head to the embedding (its configs usually leave
// tie_word_embeddings out, at its true default; llama.cpp never reads an lm_head).
std::vector<std::string> required_gemma2(const HfConfig& c) {
  return required_tensors(c, true, {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                                    "post_attention_norm", "ffn_norm", "ffn_gate", "ffn_up",
                                    "ffn_down", "post_ffw_norm"});
}

std::vector<std::string> required_gemma3(const HfConfig& c) {
  return required_tensors(c, true, {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                                    "attn_q_norm", "attn_k_norm", "post_attention_norm",
                                    "ffn_norm", "ffn_gate", "ffn_up", "ffn_down", "post_ffw_norm"});
}

}  // namespace

AFM_REGISTER_HF_ARCH(gemma2, ArchSpec{"Gemma2ForCausalLM", "gemma2", "gemma2", write_gemma2,
                                      gemma_plan, required_gemma2});
AFM_REGISTER_HF_ARCH(gemma3, ArchSpec{"Gemma3ForCausalLM", "gemma3_text", "gemma3", write_gemma3,
                                      gemma_plan, required_gemma3});

}  // namespace afm::hf
