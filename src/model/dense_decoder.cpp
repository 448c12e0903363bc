#include "model/dense_decoder.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "model/kv_cache.h"
#include "model/weights.h"
#include "ops/activation.h"
#include "ops/embedding.h"
#include "ops/matmul.h"
#include "ops/norm.h"

namespace afm::model {
namespace {

HParams read_hparams(const gguf::File& file) {
  HParams hp = read_decoder_hparams(file, file.architecture());
  const gguf::TensorInfo& embd = file.get_tensor("token_embd.weight");
  if (embd.shape.size() != 2 || embd.shape[0] != static_cast<uint64_t>(hp.n_embd)) {
    throw_error(ErrorCode::kFormat, file.path() + ": token_embd.weight does not match " +
                                        "embedding_length " + std::to_string(hp.n_embd));
  }
  hp.n_vocab = static_cast<int64_t>(embd.shape[1]);
  // Anything sized from metadata alone must be bounded by what the file holds before it is
  // allocated: each layer has several tensors, and the head size must match attn_q's rows.
  if (static_cast<uint64_t>(hp.n_layer) > file.tensors().size()) {
    throw_error(ErrorCode::kFormat, file.path() + ": block_count " + std::to_string(hp.n_layer) +
                                        " exceeds the file's " +
                                        std::to_string(file.tensors().size()) + " tensors");
  }
  const gguf::TensorInfo& q = file.get_tensor("blk.0.attn_q.weight");
  if (q.shape.size() != 2 || q.shape[1] != static_cast<uint64_t>(hp.n_head * hp.head_dim)) {
    throw_error(ErrorCode::kFormat, file.path() + ": blk.0.attn_q.weight does not have " +
                                        std::to_string(hp.n_head) + " heads x " +
                                        std::to_string(hp.head_dim) + " rows");
  }
  return hp;
}

int64_t read_block1_layers(const gguf::File& file, const HParams& hp, bool kv_share) {
  if (!kv_share) return hp.n_layer;
  const std::string key = hp.arch + ".kv_share.block1_layers";
  const int64_t b1 = read_count(file, key);
  if (b1 > hp.n_layer) {
    throw_error(ErrorCode::kFormat, file.path() + ": " + key + " = " + std::to_string(b1) +
                                        " exceeds block_count " + std::to_string(hp.n_layer));
  }
  return b1;
}

// Learned fake-int8 scale: a 1-value f32 tensor that must be finite and > 0.
float read_scale(const WeightLoader& w, const std::string& name) {
  const std::vector<float> v = w.optional_vector(name, 1);
  if (v.empty()) return 0;
  if (!(v[0] > 0) || !std::isfinite(v[0])) {
    throw_error(ErrorCode::kFormat, name + " = " + std::to_string(v[0]) + " is not a positive scale");
  }
  return v[0];
}

}  // namespace

// KV cache (the layers that own K/V) plus activation buffers for n_batch tokens.
class DenseDecoder::State : public SequenceState {
 public:
  State(const HParams& hp, const AttentionConfig& attn, std::vector<KvLayerSpec> kv,
        const StateOptions& o, int n_threads)
      : SequenceState(o),
        cache(std::move(kv), hp.n_head_kv, hp.head_dim, o.kv_type),
        n_batch(o.n_batch),
        full_prefill(o.full_prefill),
        x(o.n_batch * hp.n_embd),
        layer(attn, hp.n_ff, o.n_batch, o.n_ctx, n_threads) {}

  size_t kv_bytes() const override { return cache.bytes(); }
  size_t kv_bytes_per_token() const override { return cache.bytes_per_token(); }
  void advance(int64_t tokens) { n_past_ += tokens; }

  KvCache cache;
  int64_t n_batch;
  bool full_prefill;
  std::vector<float> x;
  LayerScratch layer;
  std::vector<LayerLora> lora;  // per layer; empty without an adapter
  LoraTarget output_lora;
};

DenseDecoder::DenseDecoder(std::shared_ptr<const gguf::File> file, const DenseOptions& options)
    : Model(file, read_hparams(*file)),
      options_(options),
      block1_layers_(read_block1_layers(*file, hparams(), options.kv_share)),
      rope_(options.rope_layout, hparams().rope_dims, hparams().rope_theta,
            hparams().rope_freq_scale) {
  const HParams& hp = hparams();
  const WeightLoader w(*file);
  token_embd_ = w.matrix("token_embd.weight", hp.n_vocab, hp.n_embd);
  output_ = w.has("output.weight") ? w.matrix("output.weight", hp.n_vocab, hp.n_embd) : token_embd_;
  output_norm_ = w.vector("output_norm.weight", hp.n_embd);
  layers_.reserve(hp.n_layer);
  for (int64_t i = 0; i < hp.n_layer; ++i) layers_.push_back(load_layer(w, i));
}

DenseDecoder::Layer DenseDecoder::load_layer(const WeightLoader& w, int64_t i) const {
  const HParams& hp = hparams();
  const int64_t q_dim = hp.n_head * hp.head_dim, kv_dim = hp.n_head_kv * hp.head_dim;
  const std::string p = "blk." + std::to_string(i) + ".";
  const bool owns_kv = i < block1_layers_;
  Layer l;
  l.kv_layer = owns_kv ? i : block1_layers_ - 1;
  l.attn.norm = w.vector(p + "attn_norm.weight", hp.n_embd);
  l.attn.wq = w.matrix(p + "attn_q.weight", q_dim, hp.n_embd);
  l.attn.wo = w.matrix(p + "attn_output.weight", hp.n_embd, q_dim);
  l.attn.q_bias = w.optional_vector(p + "attn_q.bias", q_dim);
  if (owns_kv) {
    l.attn.wk = w.matrix(p + "attn_k.weight", kv_dim, hp.n_embd);
    l.attn.wv = w.matrix(p + "attn_v.weight", kv_dim, hp.n_embd);
    l.attn.k_bias = w.optional_vector(p + "attn_k.bias", kv_dim);
    l.attn.v_bias = w.optional_vector(p + "attn_v.bias", kv_dim);
    l.attn.k_scale = read_scale(w, p + "attn_k_scale.weight");
    l.attn.v_scale = read_scale(w, p + "attn_v_scale.weight");
  } else if (w.has(p + "attn_k.weight") || w.has(p + "attn_v.weight")) {
    throw_error(ErrorCode::kFormat, file().path() + ": layer " + std::to_string(i) +
                                        " shares K/V (kv_share.block1_layers = " +
                                        std::to_string(block1_layers_) + ") but has attn_k/attn_v");
  }
  if (options_.qk_norm != QkNorm::kNone) {
    l.attn.q_norm = w.vector(p + "attn_q_norm.weight", hp.head_dim);
    if (owns_kv) l.attn.k_norm = w.vector(p + "attn_k_norm.weight", hp.head_dim);
  }
  l.ffn.norm = w.vector(p + "ffn_norm.weight", hp.n_embd);
  l.ffn.gate = w.matrix(p + "ffn_gate.weight", hp.n_ff, hp.n_embd);
  l.ffn.up = w.matrix(p + "ffn_up.weight", hp.n_ff, hp.n_embd);
  l.ffn.down = w.matrix(p + "ffn_down.weight", hp.n_embd, hp.n_ff);
  return l;
}

AttentionConfig DenseDecoder::attention_config() const {
  const HParams& hp = hparams();
  AttentionConfig c{hp.n_embd, hp.n_head, hp.n_head_kv, hp.head_dim, hp.rms_eps, hp.qk_norm_eps};
  c.rope = &rope_;
  c.qk_norm = options_.qk_norm;
  return c;
}

std::unique_ptr<SequenceState> DenseDecoder::new_state(const StateOptions& options) const {
  AFM_CHECK(options.n_ctx > 0 && options.n_batch > 0);
  std::vector<KvLayerSpec> kv(block1_layers_, KvLayerSpec{options.n_ctx});
  for (int64_t i = 0; i < block1_layers_; ++i) {
    kv[i].k_scale = layers_[i].attn.k_scale;
    kv[i].v_scale = layers_[i].attn.v_scale;
  }
  auto state = std::make_unique<State>(hparams(), attention_config(), std::move(kv), options,
                                       options.n_threads);
  if (options.adapter) attach_lora(*state, *options.adapter, options.adapter_scale, options.n_threads);
  return state;
}

void DenseDecoder::attach_lora(State& s, const LoraAdapter& adapter, float scale,
                               int threads) const {
  const HParams& hp = hparams();
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    s.lora.push_back(resolve_layer_lora(adapter, scale, "blk." + std::to_string(i) + "."));
  }
  if (output_.data != token_embd_.data) s.output_lora = resolve_lora(adapter, scale, "output.weight");
  const int64_t q_dim = hp.n_head * hp.head_dim;
  const int64_t widest = std::max({hp.n_embd, q_dim, hp.n_ff});
  s.layer.lora.reserve(s.n_batch, widest, adapter.max_rank(), threads);
}

void DenseDecoder::forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
                           float* logits, Workers& pool) const {
  State& s = static_cast<State&>(state);
  const HParams& hp = hparams();
  const AttentionConfig attn = attention_config();
  const int64_t n = static_cast<int64_t>(tokens.size());
  AFM_CHECK(n > 0 && n <= s.n_batch && s.n_past() + n <= s.n_ctx());
  TokenSpan span{n, s.n_past()};
  for (int64_t t = 0; t < n; ++t) s.layer.positions[t] = static_cast<int32_t>(span.pos0 + t);
  ops::embed_tokens(token_embd_, tokens, s.x.data());
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    if (i == block1_layers_ && !s.full_prefill) {
      // Past the last layer that writes K/V, only positions that need logits matter.
      if (rows == LogitRows::kNone) break;
      if (rows == LogitRows::kLast && span.tokens > 1) {
        std::copy_n(s.x.data() + (n - 1) * hp.n_embd, hp.n_embd, s.x.data());
        span = {1, span.pos0 + n - 1};
        s.layer.positions[0] = static_cast<int32_t>(span.pos0);
      }
    }
    const LayerLora* lora = s.lora.empty() ? nullptr : &s.lora[i];
    attention_block(attn, layers_[i].attn, span, s.x.data(), s.layer, s.cache,
                    layers_[i].kv_layer, pool, lora ? &lora->attn : nullptr);
    ffn_block(layers_[i].ffn, hp.n_embd, hp.n_ff, hp.rms_eps, span, s.x.data(), s.layer, pool,
              lora ? &lora->ffn : nullptr);
  }
  s.advance(n);
  if (rows == LogitRows::kNone) return;
  const int64_t n_out = rows == LogitRows::kLast ? 1 : span.tokens;
  float* hidden = s.layer.h.data();
  rms_norm_rows(s.x.data() + (span.tokens - n_out) * hp.n_embd, output_norm_, hp.rms_eps, n_out,
                hp.n_embd, hidden, pool);
  ops::Activations final_hidden(hidden, n_out, hp.n_embd, s.layer.act);
  ops::matmul(final_hidden, output_, logits, pool);
  if (s.output_lora) lora_add(hidden, n_out, s.output_lora, 0, logits, s.layer.lora, pool);
}

std::string DenseDecoder::describe() const {
  const HParams& hp = hparams();
  std::string s = "dense decoder: " + std::to_string(hp.n_layer) + " layers, " +
                  std::to_string(hp.n_head) + " heads (" + std::to_string(hp.n_head_kv) +
                  " kv) x " + std::to_string(hp.head_dim) + ", ffn " + std::to_string(hp.n_ff);
  s += options_.rope_layout == ops::RopeLayout::kAdjacent ? ", rope adjacent pairs" : ", rope halves";
  s += ", theta " + std::to_string(static_cast<int64_t>(hp.rope_theta));
  if (options_.qk_norm == QkNorm::kBeforeRope) s += ", qk-norm before rope";
  if (options_.qk_norm == QkNorm::kAfterRope) s += ", qk-norm after rope";
  if (!layers_.empty() && !layers_[0].attn.q_bias.empty()) s += ", qkv bias";
  s += output_.data == token_embd_.data ? ", tied output" : ", separate output";
  if (options_.kv_share) {
    s += "\nkv sharing: block 1 = layers 0-" + std::to_string(block1_layers_ - 1) +
         " (own K/V), block 2 = layers " + std::to_string(block1_layers_) + "-" +
         std::to_string(hp.n_layer - 1) + " (read layer " + std::to_string(block1_layers_ - 1) +
         "'s K/V); cache holds " + std::to_string(block1_layers_) + " of " +
         std::to_string(hp.n_layer) + " layers";
  }
  if (!layers_.empty() && layers_[0].attn.k_scale > 0) s += "\nlearned int8 K/V scales";
  return s;
}

ModelLayout DenseDecoder::layout() const {
  ModelLayout m;
  m.kv_layers = block1_layers_;
  for (int64_t i = 0; i < hparams().n_layer; ++i) {
    m.layers.push_back({i < block1_layers_ ? "causal" : "shared-kv", "dense", layers_[i].kv_layer});
  }
  return m;
}

std::unique_ptr<Model> load_dense_decoder(std::shared_ptr<const gguf::File> file,
                                          const DenseOptions& options) {
  return std::make_unique<DenseDecoder>(std::move(file), options);
}

}  // namespace afm::model
