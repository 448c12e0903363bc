#include "train/language_model.h"

#include <algorithm>
#include <cmath>

#include "train/dense_model.h"
#include "train/server_model.h"
#include "train/torch_ops.h"

namespace afm::train {

torch::Tensor LanguageModel::aux_loss() const {
  return torch::zeros({}, token_embd_.options());
}

torch::Tensor LanguageModel::add(const std::string& gguf_name, torch::Tensor init, bool decay) {
  std::string torch_name = gguf_name;
  std::replace(torch_name.begin(), torch_name.end(), '.', '_');
  torch::Tensor t = register_parameter(torch_name, std::move(init));
  params_.push_back({gguf_name, t, decay});
  return t;
}

torch::Tensor LanguageModel::normal(std::vector<int64_t> shape, double std) const {
  return torch::randn(shape, torch::kFloat32) * std;
}

torch::Tensor LanguageModel::ones(std::vector<int64_t> shape) const {
  return torch::ones(shape, torch::kFloat32);
}

void LanguageModel::add_embedding_and_output_norm() {
  token_embd_ = add("token_embd.weight",
                    normal({config_.vocab_size, config_.embedding_length}, 0.02), true);
  output_norm_ = add("output_norm.weight", ones({config_.embedding_length}), false);
}

torch::Tensor LanguageModel::embed(const torch::Tensor& tokens) const {
  return torch::embedding(token_embd_, tokens);
}

torch::Tensor LanguageModel::head(const torch::Tensor& x) const {
  return torch::matmul(rms_normalize(x, output_norm_, config_.rms_epsilon), token_embd_.t())
      .to(torch::kFloat32);
}

double LanguageModel::residual_std() const {
  const int64_t layers = config_.block_count * (config_.arch == "afm-server" ? config_.tracks : 1);
  return 0.02 / std::sqrt(2.0 * static_cast<double>(layers));
}

AttentionParams LanguageModel::add_attention(const std::string& prefix, bool with_kv,
                                             bool qk_norm) {
  const int64_t d = config_.embedding_length, hd = config_.effective_head_dim();
  const int64_t q = config_.head_count * hd, kv = config_.head_count_kv * hd;
  AttentionParams p;
  p.norm = add(prefix + "attn_norm.weight", ones({d}), false);
  p.wq = add(prefix + "attn_q.weight", normal({q, d}, 0.02), true);
  if (with_kv) {
    p.wk = add(prefix + "attn_k.weight", normal({kv, d}, 0.02), true);
    p.wv = add(prefix + "attn_v.weight", normal({kv, d}, 0.02), true);
  }
  if (qk_norm) {
    p.q_norm = add(prefix + "attn_q_norm.weight", ones({hd}), false);
    if (with_kv) p.k_norm = add(prefix + "attn_k_norm.weight", ones({hd}), false);
  }
  p.wo = add(prefix + "attn_output.weight", normal({d, q}, residual_std()), true);
  return p;
}

FfnParams LanguageModel::add_ffn(const std::string& prefix) {
  const int64_t d = config_.embedding_length, f = config_.feed_forward_length;
  FfnParams p;
  p.norm = add(prefix + "ffn_norm.weight", ones({d}), false);
  p.gate = add(prefix + "ffn_gate.weight", normal({f, d}, 0.02), true);
  p.up = add(prefix + "ffn_up.weight", normal({f, d}, 0.02), true);
  p.down = add(prefix + "ffn_down.weight", normal({d, f}, residual_std()), true);
  return p;
}

AttentionSpec LanguageModel::attention_spec(const RopeTable* rope, int64_t window,
                                            const torch::Tensor& same_segment) const {
  AttentionSpec s;
  s.n_head = config_.head_count;
  s.n_head_kv = config_.head_count_kv;
  s.head_dim = config_.effective_head_dim();
  s.rope = rope;
  s.qk_norm_eps = config_.qk_norm_epsilon;
  s.window = window;
  s.same_segment = same_segment;
  return s;
}

std::shared_ptr<LanguageModel> make_language_model(const ModelConfig& config, uint64_t seed) {
  torch::manual_seed(seed);
  if (config.arch == "afm-server") return std::make_shared<ServerModel>(config);
  return std::make_shared<DenseModel>(config);
}

}  // namespace afm::train
