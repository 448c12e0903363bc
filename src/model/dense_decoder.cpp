#include "model/dense_decoder.h"

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

void add_bias(float* x, const std::vector<float>& bias, int64_t rows) {
  if (bias.empty()) return;
  const int64_t n = static_cast<int64_t>(bias.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) x[r * n + i] += bias[i];
}

void add_into(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace

// KV cache plus activation buffers sized for n_batch tokens, allocated once.
class DenseDecoder::State : public SequenceState {
 public:
  State(const HParams& hp, const StateOptions& o)
      : SequenceState(o.n_ctx),
        cache(hp.n_layer, hp.n_head_kv, hp.head_dim, o.n_ctx, o.kv_type),
        n_batch(o.n_batch),
        x(o.n_batch * hp.n_embd),
        h(o.n_batch * hp.n_embd),
        q(o.n_batch * hp.n_head * hp.head_dim),
        k(o.n_batch * hp.n_head_kv * hp.head_dim),
        v(o.n_batch * hp.n_head_kv * hp.head_dim),
        attn(o.n_batch * hp.n_head * hp.head_dim),
        gate(o.n_batch * hp.n_ff),
        up(o.n_batch * hp.n_ff),
        positions(o.n_batch) {}

  size_t kv_bytes() const override { return cache.bytes(); }
  size_t kv_bytes_per_token() const override { return cache.bytes_per_token(); }
  void advance(int64_t tokens) { n_past_ += tokens; }

  KvCache cache;
  int64_t n_batch;
  std::vector<float> x, h, q, k, v, attn, gate, up, scores;
  std::vector<int32_t> positions;
  ops::ActivationScratch act;
};

DenseDecoder::DenseDecoder(std::shared_ptr<const gguf::File> file, const DenseOptions& options)
    : Model(file, read_hparams(*file)),
      options_(options),
      rope_(options.rope_layout, hparams().rope_dims, hparams().rope_theta,
            hparams().rope_freq_scale) {
  const HParams& hp = hparams();
  const WeightLoader w(*file);
  const int64_t q_dim = hp.n_head * hp.head_dim, kv_dim = hp.n_head_kv * hp.head_dim;
  token_embd_ = w.matrix("token_embd.weight", hp.n_vocab, hp.n_embd);
  output_ = w.has("output.weight") ? w.matrix("output.weight", hp.n_vocab, hp.n_embd) : token_embd_;
  output_norm_ = w.vector("output_norm.weight", hp.n_embd);
  layers_.resize(hp.n_layer);
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    Layer& l = layers_[i];
    l.attn_norm = w.vector(p + "attn_norm.weight", hp.n_embd);
    l.ffn_norm = w.vector(p + "ffn_norm.weight", hp.n_embd);
    l.wq = w.matrix(p + "attn_q.weight", q_dim, hp.n_embd);
    l.wk = w.matrix(p + "attn_k.weight", kv_dim, hp.n_embd);
    l.wv = w.matrix(p + "attn_v.weight", kv_dim, hp.n_embd);
    l.wo = w.matrix(p + "attn_output.weight", hp.n_embd, q_dim);
    l.gate = w.matrix(p + "ffn_gate.weight", hp.n_ff, hp.n_embd);
    l.up = w.matrix(p + "ffn_up.weight", hp.n_ff, hp.n_embd);
    l.down = w.matrix(p + "ffn_down.weight", hp.n_embd, hp.n_ff);
    l.q_bias = w.optional_vector(p + "attn_q.bias", q_dim);
    l.k_bias = w.optional_vector(p + "attn_k.bias", kv_dim);
    l.v_bias = w.optional_vector(p + "attn_v.bias", kv_dim);
    if (options.qk_norm) {
      l.q_norm = w.vector(p + "attn_q_norm.weight", hp.head_dim);
      l.k_norm = w.vector(p + "attn_k_norm.weight", hp.head_dim);
    }
  }
}

std::unique_ptr<SequenceState> DenseDecoder::new_state(const StateOptions& options) const {
  AFM_CHECK(options.n_ctx > 0 && options.n_batch > 0);
  return std::make_unique<State>(hparams(), options);
}

void DenseDecoder::attention_block(State& s, const Layer& l, int64_t index, int64_t tokens,
                                   ThreadPool& pool) const {
  const HParams& hp = hparams();
  const int64_t pos0 = s.n_past();
  ops::rms_norm(s.x.data(), l.attn_norm.data(), hp.rms_eps, tokens, hp.n_embd, s.h.data());
  ops::Activations in(s.h.data(), tokens, hp.n_embd, s.act);
  ops::matmul_group(in, {{&l.wq, s.q.data()}, {&l.wk, s.k.data()}, {&l.wv, s.v.data()}}, pool);
  add_bias(s.q.data(), l.q_bias, tokens);
  add_bias(s.k.data(), l.k_bias, tokens);
  add_bias(s.v.data(), l.v_bias, tokens);
  if (options_.qk_norm) {
    ops::rms_norm(s.q.data(), l.q_norm.data(), hp.rms_eps, tokens * hp.n_head, hp.head_dim, s.q.data());
    ops::rms_norm(s.k.data(), l.k_norm.data(), hp.rms_eps, tokens * hp.n_head_kv, hp.head_dim,
                  s.k.data());
  }
  rope_.apply(s.q.data(), tokens, hp.n_head, hp.head_dim, s.positions.data());
  rope_.apply(s.k.data(), tokens, hp.n_head_kv, hp.head_dim, s.positions.data());
  s.cache.write(index, pos0, tokens, s.k.data(), s.v.data());
  const ops::AttentionShape shape{hp.n_head, hp.n_head_kv, hp.head_dim};
  ops::attention(s.q.data(), tokens, pos0, s.cache.layer(index), shape,
                 1.0f / std::sqrt(static_cast<float>(hp.head_dim)), s.attn.data(), s.scores, pool);
  ops::Activations attn(s.attn.data(), tokens, hp.n_head * hp.head_dim, s.act);
  ops::matmul(attn, l.wo, s.h.data(), pool);
  add_into(s.x.data(), s.h.data(), tokens * hp.n_embd);
}

void DenseDecoder::ffn_block(State& s, const Layer& l, int64_t tokens, ThreadPool& pool) const {
  const HParams& hp = hparams();
  ops::rms_norm(s.x.data(), l.ffn_norm.data(), hp.rms_eps, tokens, hp.n_embd, s.h.data());
  ops::Activations in(s.h.data(), tokens, hp.n_embd, s.act);
  ops::matmul_group(in, {{&l.gate, s.gate.data()}, {&l.up, s.up.data()}}, pool);
  ops::swiglu_inplace(s.gate.data(), s.up.data(), tokens * hp.n_ff, pool);
  ops::Activations act(s.gate.data(), tokens, hp.n_ff, s.act);
  ops::matmul(act, l.down, s.h.data(), pool);
  add_into(s.x.data(), s.h.data(), tokens * hp.n_embd);
}

void DenseDecoder::forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
                           float* logits, ThreadPool& pool) const {
  State& s = static_cast<State&>(state);
  const HParams& hp = hparams();
  const int64_t n = static_cast<int64_t>(tokens.size());
  AFM_CHECK(n > 0 && n <= s.n_batch && s.n_past() + n <= s.n_ctx());
  for (int64_t t = 0; t < n; ++t) s.positions[t] = static_cast<int32_t>(s.n_past() + t);
  ops::embed_tokens(token_embd_, tokens, s.x.data());
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    attention_block(s, layers_[i], i, n, pool);
    ffn_block(s, layers_[i], n, pool);
  }
  const int64_t n_out = rows == LogitRows::kLast ? 1 : n;
  ops::rms_norm(s.x.data() + (n - n_out) * hp.n_embd, output_norm_.data(), hp.rms_eps, n_out,
                hp.n_embd, s.h.data());
  ops::Activations final_hidden(s.h.data(), n_out, hp.n_embd, s.act);
  ops::matmul(final_hidden, output_, logits, pool);
  s.advance(n);
}

std::string DenseDecoder::describe() const {
  const HParams& hp = hparams();
  std::string s = "dense decoder: " + std::to_string(hp.n_layer) + " layers, " +
                  std::to_string(hp.n_head) + " heads (" + std::to_string(hp.n_head_kv) +
                  " kv) x " + std::to_string(hp.head_dim) + ", ffn " + std::to_string(hp.n_ff);
  s += options_.rope_layout == ops::RopeLayout::kAdjacent ? ", rope adjacent pairs" : ", rope halves";
  s += ", theta " + std::to_string(static_cast<int64_t>(hp.rope_theta));
  if (options_.qk_norm) s += ", qk-norm";
  if (!layers_.empty() && !layers_[0].q_bias.empty()) s += ", qkv bias";
  s += output_.data == token_embd_.data ? ", tied output" : ", separate output";
  return s;
}

std::unique_ptr<Model> load_dense_decoder(std::shared_ptr<const gguf::File> file,
                                          const DenseOptions& options) {
  return std::make_unique<DenseDecoder>(std::move(file), options);
}

}  // namespace afm::model
