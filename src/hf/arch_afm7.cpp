// afm7 (Apple's on-device model as mlx-lm saves it: config "model_type": "afm7", weights named
// by mlx's tree_flatten) -> GGUF "afm-device" (docs/gguf.md, "afm architectures").
//
// Block 1 is model.layers.i -> blk.i; Block 2 is model.kv_reuse_layers.j -> blk.(B1 + j) with
// B1 = num_layers - num_kv_reuse_layers. The fused qkv_proj is split by rows into attn_q /
// attn_k / attn_v; the 0-dim quant_{key,value}_scale become f32 tensors of shape [1]. afm7
// rotates consecutive pairs already, so q/k rows are not permuted. Embeddings are tied.
#include <map>
#include <regex>

#include "base/error.h"
#include "hf/arch.h"

namespace afm::hf {
namespace {

// mlx's nn.RMSNorm default epsilon, which afm7's q_norm / k_norm use whatever rms_norm_eps is.
constexpr float kQkNormEps = 1e-5f;
// Written as {arch}.context_length when config.json has no max_position_embeddings (afm7's
// ModelArgs has no such field; RoPE itself does not bound the length).
constexpr uint64_t kDefaultContext = 4096;

struct Shape {
  uint64_t n_embd, n_head, n_head_kv, head_dim, n_layer, block1;
};

// The model shape from config.json (afm7's ModelArgs names); Error(kFormat) naming the
// inconsistent key.
Shape read_shape(const HfConfig& c) {
  Shape s{};
  s.n_embd = c.get_uint("hidden_dim");
  s.n_head = c.get_uint("num_heads");
  s.n_head_kv = c.get_uint("num_kv_heads");
  s.n_layer = c.get_uint("num_layers");
  const uint64_t reuse = c.get_uint("num_kv_reuse_layers");
  auto fail = [&](const std::string& what) {
    throw_error(ErrorCode::kFormat, c.path() + ": " + what);
  };
  if (s.n_head == 0 || s.n_embd % s.n_head != 0 || (s.n_embd / s.n_head) % 2 != 0) {
    fail("hidden_dim must be num_heads times an even head size");
  }
  if (s.n_head_kv == 0 || s.n_head % s.n_head_kv != 0) {
    fail("num_heads must be a multiple of num_kv_heads");
  }
  if (reuse >= s.n_layer) fail("num_kv_reuse_layers must be less than num_layers");
  s.head_dim = s.n_embd / s.n_head;
  s.block1 = s.n_layer - reuse;
  return s;
}

void write_afm7_hparams(const HfConfig& c, const std::string& arch, gguf::Writer& w) {
  if (c.has("quantization") || c.has("quantization_config")) {
    throw_error(ErrorCode::kUnsupported,
                c.path() +
                    ": mlx-quantized weights are not supported; convert a float model "
                    "(mlx_lm.convert --dequantize)");
  }
  const Shape s = read_shape(c);
  const double ff_scale = c.get_float("hidden_dim_scale_factor", 3.25);
  // afm7's MLP width is Python's int(hidden_dim * hidden_dim_scale_factor): truncation.
  const double ff = static_cast<double>(s.n_embd) * ff_scale;
  if (!(ff >= 1) || ff > 4294967295.0) {
    throw_error(ErrorCode::kFormat, c.path() + ": hidden_dim_scale_factor gives no valid width");
  }
  auto u32 = [&](const std::string& key, uint64_t v) {
    w.set(arch + "." + key, gguf::Value(static_cast<uint32_t>(v)));
  };
  auto f32 = [&](const std::string& key, double v) {
    w.set(arch + "." + key, gguf::Value(static_cast<float>(v)));
  };
  u32("vocab_size", c.get_uint("vocab_size"));
  u32("context_length", c.get_uint("max_position_embeddings", kDefaultContext));
  u32("embedding_length", s.n_embd);
  u32("block_count", s.n_layer);
  u32("feed_forward_length", static_cast<uint64_t>(ff));
  u32("attention.head_count", s.n_head);
  u32("attention.head_count_kv", s.n_head_kv);
  f32("rope.freq_base", c.get_float("rope_theta", 50000.0));
  u32("rope.dimension_count", s.head_dim);
  f32("attention.layer_norm_rms_epsilon", c.get_float("rms_norm_eps", 1e-5));
  f32("attention.qk_norm_epsilon", kQkNormEps);
  u32("kv_share.block1_layers", s.block1);
}

// Tensors of a layer of either block, by the name after "self_attn." / the layer prefix.
const std::map<std::string, std::string>& common_layer_names() {
  static const std::map<std::string, std::string> names = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},
      {"self_attn.out_proj.weight", "attn_output.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
  };
  return names;
}

// A Block-1 layer's tensors (it owns K/V); empty when `rest` is not one.
std::vector<TensorPlan> plan_block1(const Shape& s, const std::string& blk,
                                    const std::string& rest) {
  if (rest == "self_attn.qkv_proj.weight") {  // rows [q; k; v]
    const uint64_t q_rows = s.n_head * s.head_dim, kv_rows = s.n_head_kv * s.head_dim;
    return {TensorPlan{blk + "attn_q.weight", false, 0, 0, q_rows},
            TensorPlan{blk + "attn_k.weight", false, 0, q_rows, kv_rows},
            TensorPlan{blk + "attn_v.weight", false, 0, q_rows + kv_rows, kv_rows}};
  }
  if (rest == "self_attn.k_norm.weight") return {TensorPlan{blk + "attn_k_norm.weight"}};
  if (rest == "self_attn.quant_key_scale") return {TensorPlan{blk + "attn_k_scale.weight"}};
  if (rest == "self_attn.quant_value_scale") return {TensorPlan{blk + "attn_v_scale.weight"}};
  return {};
}

std::vector<TensorPlan> afm7_plan(const HfConfig& c, const std::string& name) {
  if (name == "model.embedding.weight") return {TensorPlan{"token_embd.weight"}};
  if (name == "model.output_norm.weight") return {TensorPlan{"output_norm.weight"}};
  const Shape s = read_shape(c);
  static const std::regex kLayerName(R"(model\.(layers|kv_reuse_layers)\.(\d{1,9})\.(.+))");
  std::smatch m;
  if (std::regex_match(name, m, kLayerName)) {
    const bool block1 = m[1] == "layers";
    const uint64_t j = std::stoull(m[2].str());
    const uint64_t layer = block1 ? j : s.block1 + j;
    if (j >= (block1 ? s.block1 : s.n_layer - s.block1)) {
      throw_error(ErrorCode::kFormat, c.path() + ": tensor '" + name +
                                          "' is beyond the layers num_layers and "
                                          "num_kv_reuse_layers declare");
    }
    const std::string blk = "blk." + std::to_string(layer) + ".";
    const std::string rest = m[3].str();
    if (auto it = common_layer_names().find(rest); it != common_layer_names().end()) {
      return {TensorPlan{blk + it->second}};
    }
    if (!block1 && rest == "self_attn.q_proj.weight") return {TensorPlan{blk + "attn_q.weight"}};
    if (block1) {
      if (std::vector<TensorPlan> p = plan_block1(s, blk, rest); !p.empty()) return p;
    }
  }
  throw_error(ErrorCode::kUnsupported, "unexpected tensor '" + name + "' for this architecture");
}

// Every tensor but the optional K/V scales: Block 2 layers have no attn_k / attn_v / k_norm.
std::vector<std::string> required_tensors(const HfConfig& c) {
  const Shape s = read_shape(c);
  std::vector<std::string> names = {"token_embd.weight", "output_norm.weight"};
  for (uint64_t i = 0; i < s.n_layer; ++i) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    std::vector<const char*> parts = {"attn_norm", "attn_q",   "attn_q_norm", "attn_output",
                                      "ffn_norm",  "ffn_gate", "ffn_up",      "ffn_down"};
    if (i < s.block1) parts.insert(parts.end(), {"attn_k", "attn_v", "attn_k_norm"});
    for (const char* part : parts) names.push_back(blk + part + ".weight");
  }
  return names;
}

}  // namespace

AFM_REGISTER_HF_ARCH(afm7, ArchSpec{"", "afm7", "afm-device", write_afm7_hparams, afm7_plan,
                                    required_tensors});

}  // namespace afm::hf
