#include "hf/arch.h"

#include <algorithm>
#include <map>
#include <regex>

#include "base/error.h"

namespace afm::hf {

namespace {
std::vector<ArchSpec>& registry() {
  static std::vector<ArchSpec> archs;
  return archs;
}

// "LlamaForCausalLM, ...; model_type: afm7, llama, ..." for error messages.
std::string known_archs() {
  std::string names, types;
  for (const ArchSpec& a : registry()) {
    if (!a.hf_name.empty()) names += (names.empty() ? "" : ", ") + a.hf_name;
    types += (types.empty() ? "" : ", ") + a.model_type;
  }
  return names + "; model_type: " + types;
}

const ArchSpec& find_by(std::string ArchSpec::*field, const std::string& value,
                        const std::string& what) {
  if (!value.empty()) {
    for (const ArchSpec& a : registry()) {
      if (a.*field == value) return a;
    }
  }
  throw_error(ErrorCode::kUnsupported,
              "unsupported " + what + " '" + value + "' (supported: " + known_archs() + ")");
}
}  // namespace

void register_arch(ArchSpec spec) {
  std::vector<ArchSpec>& archs = registry();
  archs.push_back(std::move(spec));
  std::sort(archs.begin(), archs.end(),
            [](const ArchSpec& a, const ArchSpec& b) { return a.model_type < b.model_type; });
}

const ArchSpec& find_arch(const HfConfig& config) {
  if (config.has("architectures")) {
    return find_by(&ArchSpec::hf_name, config.architecture(), "architecture");
  }
  if (config.has("model_type")) {
    return find_by(&ArchSpec::model_type, config.get_string("model_type", ""), "model_type");
  }
  throw_error(ErrorCode::kFormat,
              config.path() + ": neither 'architectures' nor 'model_type' is set");
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

void write_sliding_window(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  if (!c.has("sliding_window")) return;  // has(): present and not null
  const uint64_t window = c.get_uint("sliding_window");
  if (window == 0) throw_error(ErrorCode::kFormat, c.path() + ": sliding_window must be > 0 (or null)");
  w.set(arch + ".attention.sliding_window", gguf::Value(static_cast<uint32_t>(window)));
}

std::vector<std::string> required_tensors(const HfConfig& c, bool tied,
                                          std::initializer_list<const char*> layer_parts) {
  std::vector<std::string> names = {"token_embd.weight", "output_norm.weight"};
  if (!tied) names.push_back("output.weight");
  const uint64_t layers = c.get_uint("num_hidden_layers");
  for (uint64_t i = 0; i < layers; ++i) {
    for (const char* part : layer_parts) {
      names.push_back("blk." + std::to_string(i) + "." + part + ".weight");
    }
  }
  return names;
}

std::vector<std::string> llama_family_required_tensors(const HfConfig& c) {
  return required_tensors(c, c.get_bool("tie_word_embeddings", false),
                          {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_up", "ffn_down"});
}

}  // namespace afm::hf
