#include "hf/arch.h"

#include <map>
#include <regex>

#include "base/error.h"

namespace afm::hf {

namespace {
std::map<std::string, ArchSpec>& registry() {
  static std::map<std::string, ArchSpec> archs;
  return archs;
}
}  // namespace

void register_arch(ArchSpec spec) { registry()[spec.hf_name] = std::move(spec); }

const ArchSpec& find_arch(const std::string& hf_name) {
  auto it = registry().find(hf_name);
  if (it == registry().end()) {
    std::string known;
    for (const auto& [name, spec] : registry()) known += (known.empty() ? "" : ", ") + name;
    throw_error(ErrorCode::kUnsupported,
                "unsupported architecture '" + hf_name + "' (supported: " + known + ")");
  }
  return it->second;
}

void write_llama_family_hparams(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  const uint64_t n_head = c.get_uint("num_attention_heads");
  const uint64_t n_embd = c.get_uint("hidden_size");
  if (n_head == 0 || n_embd % n_head != 0) {
    throw_error(ErrorCode::kFormat,
                c.path() + ": hidden_size is not a multiple of num_attention_heads");
  }
  const uint64_t head_dim = c.get_uint("head_dim", n_embd / n_head);
  auto u32 = [&](const std::string& key, uint64_t v) {
    w.set(arch + "." + key, gguf::Value(static_cast<uint32_t>(v)));
  };
  u32("vocab_size", c.get_uint("vocab_size"));
  u32("context_length", c.get_uint("max_position_embeddings", 4096));
  u32("embedding_length", n_embd);
  u32("block_count", c.get_uint("num_hidden_layers"));
  u32("feed_forward_length", c.get_uint("intermediate_size"));
  u32("attention.head_count", n_head);
  u32("attention.head_count_kv", c.get_uint("num_key_value_heads", n_head));
  w.set(arch + ".rope.freq_base",
        gguf::Value(static_cast<float>(c.get_float("rope_theta", 10000.0))));
  w.set(arch + ".attention.layer_norm_rms_epsilon",
        gguf::Value(static_cast<float>(c.get_float("rms_norm_eps", 1e-6))));
  u32("rope.dimension_count", head_dim);
  if (head_dim != n_embd / n_head) {
    u32("attention.key_length", head_dim);
    u32("attention.value_length", head_dim);
  }
  if (c.has("rope_scaling")) {
    const nlohmann::json& s = c.json()["rope_scaling"];
    std::string type = s.value("rope_type", s.value("type", std::string()));
    double factor = s.value("factor", 1.0);
    if (type == "linear") {
      w.set(arch + ".rope.scaling.type", gguf::Value("linear"));
      w.set(arch + ".rope.scaling.factor", gguf::Value(static_cast<float>(factor)));
    } else if (type == "yarn") {
      w.set(arch + ".rope.scaling.type", gguf::Value("yarn"));
      w.set(arch + ".rope.scaling.factor", gguf::Value(static_cast<float>(factor)));
      w.set(arch + ".rope.scaling.original_context_length",
            gguf::Value(static_cast<uint32_t>(s.value("original_max_position_embeddings", 4096))));
    } else if (type != "default" && !type.empty()) {
      throw_error(ErrorCode::kUnsupported,
                  c.path() + ": rope_scaling type '" + type + "' is not supported (linear, yarn)");
    }
  }
}

std::optional<TensorPlan> plan_llama_family_tensor(const std::string& name) {
  static const std::map<std::string, std::string> kGlobal = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
  };
  static const std::map<std::string, std::string> kLayer = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.q_proj.bias", "attn_q.bias"},
      {"self_attn.k_proj.bias", "attn_k.bias"},
      {"self_attn.v_proj.bias", "attn_v.bias"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},
      {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
  };
  if (auto it = kGlobal.find(name); it != kGlobal.end()) return TensorPlan{it->second};
  static const std::regex kLayerName(R"(model\.layers\.(\d+)\.(.+))");
  std::smatch m;
  if (std::regex_match(name, m, kLayerName)) {
    if (m[2] == "self_attn.rotary_emb.inv_freq") return std::nullopt;  // recomputed at load
    if (auto it = kLayer.find(m[2]); it != kLayer.end()) {
      return TensorPlan{"blk." + m[1].str() + "." + it->second};
    }
  }
  throw_error(ErrorCode::kUnsupported, "unexpected tensor '" + name + "' for this architecture");
}

}  // namespace afm::hf
