#include "train/server_model.h"

namespace afm::train {

ServerModel::ServerModel(ModelConfig config) : LanguageModel(std::move(config)) {
  add_embedding_and_output_norm();
  tracks_.resize(config_.tracks);
  for (int64_t t = 0; t < config_.tracks; ++t) {
    for (int64_t n = 0; n < config_.block_count; ++n) {
      const std::string prefix = "trk." + std::to_string(t) + ".blk." + std::to_string(n) + ".";
      Layer layer;
      layer.attn = add_attention(prefix, /*with_kv=*/true, /*qk_norm=*/true);
      if (config_.is_moe_layer(n)) {
        layer.experts = add_experts(prefix);
      } else {
        layer.ffn = add_ffn(prefix);
      }
      tracks_[t].push_back(layer);
    }
  }
  aux_loss_ = torch::zeros({});
}

ServerModel::Experts ServerModel::add_experts(const std::string& prefix) {
  const int64_t d = config_.embedding_length, f = config_.expert_feed_forward_length;
  const int64_t e = config_.expert_count;
  Experts x;
  x.norm = add(prefix + "ffn_norm.weight", ones({d}), false);
  x.router = add_weight(prefix + "ffn_gate_inp.weight", normal({e, d}, 0.02), true);
  x.gate = add_weight(prefix + "ffn_gate_exps.weight", normal({e, f, d}, 0.02), true);
  x.up = add_weight(prefix + "ffn_up_exps.weight", normal({e, f, d}, 0.02), true);
  x.down = add_weight(prefix + "ffn_down_exps.weight", normal({e, d, f}, residual_std()), true);
  return x;
}

// Top-k routing with renormalised weights; each expert runs once on the tokens routed to it.
// Adds the switch-transformer balance loss E * sum_e (share of picks to e) * (mean prob of e).
torch::Tensor ServerModel::experts_forward(const torch::Tensor& xn, const Experts& e) {
  const int64_t d = xn.size(-1), k = config_.expert_used_count, n_exp = config_.expert_count;
  torch::Tensor x = xn.reshape({-1, d});
  torch::Tensor probs = torch::softmax(e.router(x).to(torch::kFloat32), -1);  // (N, E)
  auto [top_p, top_i] = probs.topk(k, -1);
  torch::Tensor weights = top_p / top_p.sum(-1, true);  // (N, k)
  torch::Tensor out = torch::zeros({x.size(0), d}, x.options().dtype(torch::kFloat32));
  for (int64_t j = 0; j < n_exp; ++j) {
    torch::Tensor picked = top_i == j;  // (N, k)
    torch::Tensor rows = picked.any(-1).nonzero().squeeze(1);
    if (rows.numel() == 0) continue;
    torch::Tensor w = (weights * picked).sum(-1).index_select(0, rows).unsqueeze(1);
    torch::Tensor y = swiglu(x.index_select(0, rows), e.gate.expert(j), e.up.expert(j), e.down.expert(j));
    out.index_add_(0, rows, y.to(torch::kFloat32) * w);
  }
  if (config_.router_aux_loss > 0) {
    torch::Tensor share = torch::one_hot(top_i, n_exp).sum(std::vector<int64_t>{0, 1}).to(torch::kFloat32) /
                          static_cast<double>(x.size(0) * k);
    aux_loss_ = aux_loss_ + config_.router_aux_loss * n_exp * (share * probs.mean(0)).sum();
  }
  return out.reshape(xn.sizes());
}

torch::Tensor ServerModel::layer_forward(const torch::Tensor& x, const Layer& l, int64_t n,
                                         const RopeTable& rope,
                                         const torch::Tensor& same_segment) {
  const bool global = config_.is_global_layer(n);
  const AttentionSpec spec = attention_spec(global ? nullptr : &rope,
                                            global ? 0 : config_.sliding_window, same_segment);
  torch::Tensor xn = rms_normalize(x, l.attn.norm, config_.rms_epsilon);
  torch::Tensor h = x + attend(xn, l.attn, spec, project_key_values(xn, l.attn, spec));
  if (config_.is_moe_layer(n))
    return h + experts_forward(rms_normalize(h, l.experts.norm, config_.rms_epsilon), l.experts);
  return h + swiglu(rms_normalize(h, l.ffn.norm, config_.rms_epsilon), l.ffn.gate, l.ffn.up,
                    l.ffn.down);
}

torch::Tensor ServerModel::hidden(const torch::Tensor& tokens, const Packing& packing) {
  if (!rope_.cos.defined() || rope_.cos.device() != tokens.device()) {
    rope_ = make_rope_table(config_.context_length, config_.effective_head_dim(),
                            config_.rope_freq_base, tokens.device());
  }
  const RopeTable rope = packing.packed() ? rope_at(rope_, packing.positions) : rope_;
  const torch::Tensor same_segment =
      packing.packed() ? same_segment_mask(packing.segments) : torch::Tensor();
  aux_loss_ = torch::zeros({}, torch::TensorOptions().device(tokens.device()));
  torch::Tensor x = embed(tokens);
  const int64_t depth = config_.track_block_depth;
  for (int64_t b = 0; b < config_.block_count / depth; ++b) {
    torch::Tensor merged;
    for (int64_t t = 0; t < config_.tracks; ++t) {
      torch::Tensor y = x;
      for (int64_t n = b * depth; n < (b + 1) * depth; ++n) y = layer_forward(y, tracks_[t][n], n, rope, same_segment);
      merged = merged.defined() ? merged + y : y;
    }
    x = merged / static_cast<double>(config_.tracks);
  }
  return x;
}

}  // namespace afm::train
