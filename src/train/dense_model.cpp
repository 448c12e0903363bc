#include "train/dense_model.h"

namespace afm::train {

DenseModel::DenseModel(ModelConfig config) : LanguageModel(std::move(config)) {
  const bool device = config_.arch == "afm-device";
  kv_owner_count_ = device ? config_.effective_block1_layers() : config_.block_count;
  add_embedding_and_output_norm();
  for (int64_t n = 0; n < config_.block_count; ++n) {
    const std::string prefix = "blk." + std::to_string(n) + ".";
    Layer layer;
    layer.attn = add_attention(prefix, n < kv_owner_count_, /*qk_norm=*/device);
    layer.ffn = add_ffn(prefix);
    layers_.push_back(layer);
  }
}

const RopeTable& DenseModel::rope_for(const torch::Device& device) {
  if (!rope_.cos.defined() || rope_.cos.device() != device) {
    rope_ = make_rope_table(config_.context_length, config_.effective_head_dim(),
                            config_.rope_freq_base, device);
  }
  return rope_;
}

torch::Tensor DenseModel::hidden(const torch::Tensor& tokens, const Packing& packing) {
  const RopeTable& table = rope_for(tokens.device());
  const RopeTable packed_rope = packing.packed() ? rope_at(table, packing.positions) : RopeTable{};
  const AttentionSpec spec =
      packing.packed()
          ? attention_spec(&packed_rope, 0, same_segment_mask(packing.segments))
          : attention_spec(&table, 0);
  torch::Tensor x = embed(tokens);
  KeyValues shared;  // K/V of the last layer that owns them (Block 2 reads these)
  for (int64_t n = 0; n < config_.block_count; ++n) {
    const Layer& l = layers_[n];
    torch::Tensor xn = rms_normalize(x, l.attn.norm, config_.rms_epsilon);
    if (n < kv_owner_count_) shared = project_key_values(xn, l.attn, spec);
    x = x + attend(xn, l.attn, spec, shared);
    x = x + swiglu(rms_normalize(x, l.ffn.norm, config_.rms_epsilon), l.ffn.gate, l.ffn.up,
                   l.ffn.down);
  }
  return x;
}

}  // namespace afm::train
