#include "model/dense_decoder.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "backend/cpu/gemm.h"
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
  // The query heads' rows (of attn_q, or of a fused attn_qkv with the K/V heads' too).
  const bool fused = !file.find_tensor("blk.0.attn_q.weight") && file.find_tensor("blk.0.attn_qkv.weight");
  const std::string q_name = fused ? "blk.0.attn_qkv.weight" : "blk.0.attn_q.weight";
  const gguf::TensorInfo& q = file.get_tensor(q_name);
  const int64_t q_rows = (hp.n_head + (fused ? 2 * hp.n_head_kv : 0)) * hp.head_dim;
  if (q.shape.size() != 2 || q.shape[1] != static_cast<uint64_t>(q_rows)) {
    throw_error(ErrorCode::kFormat, file.path() + ": " + q_name + " does not have " +
                                        std::to_string(hp.n_head) + " heads x " +
                                        std::to_string(hp.head_dim) + " rows" +
                                        (fused ? " plus 2 x " + std::to_string(hp.n_head_kv) +
                                                     " K/V heads" : ""));
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

// Activation buffers for up to n_tokens tokens in all, with the batch's bookkeeping.
struct DenseDecoder::Buffers {
  Buffers(const HParams& hp, const AttentionConfig& attn, int64_t n_tokens, int64_t n_ctx,
          int n_threads)
      : x(n_tokens * hp.n_embd), layer(attn, hp.n_ff, n_tokens, n_ctx, n_threads) {
    tokens.reserve(n_tokens);
  }
  std::vector<float> x;
  LayerScratch layer;
  std::vector<int32_t> tokens;     // the batch's tokens, item after item
  std::vector<SequenceRows> seqs;  // the rows of each item still being computed
  std::vector<size_t> item_of;     // seqs[j] belongs to items[item_of[j]]
  std::vector<float> logits;       // a batch's logits before they go to each item
};

// KV cache (the layers that own K/V) plus activation buffers for n_batch tokens.
class DenseDecoder::State : public SequenceState {
 public:
  State(const HParams& hp, const AttentionConfig& attn, std::vector<KvLayerSpec> kv,
        const StateOptions& o, int n_threads)
      : SequenceState(o),
        cache(std::move(kv), hp.n_head_kv, hp.head_dim, o.kv_type),
        full_prefill(o.full_prefill),
        own(hp, attn, o.n_batch, o.n_ctx, n_threads) {}

  size_t kv_bytes() const override { return cache.bytes(); }
  size_t kv_bytes_per_token() const override { return cache.bytes_per_token(); }
  void advance(int64_t tokens) { n_past_ += tokens; }

  KvCache cache;
  bool full_prefill;
  Buffers own;                  // for forward() on this sequence alone
  std::vector<LayerLora> lora;  // per layer; empty without an adapter
  LoraTarget output_lora;
  // Fused-projection models: the per-part pairs cut from an adapter's attn_qkv / ffn_up pairs
  // (a deque: lora's targets point into it).
  std::deque<LoraPair> lora_parts;
};

class DenseDecoder::Workspace : public BatchWorkspace {
 public:
  Workspace(const HParams& hp, const AttentionConfig& attn, const BatchOptions& o)
      : BatchWorkspace(o), buffers(hp, attn, o.max_tokens, o.n_ctx, o.n_threads) {}
  Buffers buffers;
};

DenseDecoder::DenseDecoder(std::shared_ptr<const gguf::File> file, const DenseOptions& options)
    : Model(file, read_hparams(*file)),
      options_(options),
      block1_layers_(read_block1_layers(*file, hparams(), options.kv_share)),
      window_(read_optional_count(*file, hparams().arch + ".attention.sliding_window",
                                  options.default_window)),
      attention_scale_(read_optional_float(*file, hparams().arch + ".attention.scale",
                                           options.attention_scale)),
      attn_softcap_(read_optional_float(*file, hparams().arch + ".attn_logit_softcapping", 0)),
      final_softcap_(read_optional_float(*file, hparams().arch + ".final_logit_softcapping", 0)),
      rope_(options.rope_layout, hparams().rope_dims, hparams().rope_theta,
            hparams().rope_freq_scale),
      rope_local_(options.rope_layout, hparams().rope_dims,
                  options.rope_local_base > 0 ? options.rope_local_base : hparams().rope_theta,
                  options.rope_local_base > 0 ? 1.0f : hparams().rope_freq_scale) {
  for (const auto& [value, key] : {std::pair{attention_scale_, ".attention.scale"},
                                   std::pair{attn_softcap_, ".attn_logit_softcapping"},
                                   std::pair{final_softcap_, ".final_logit_softcapping"}}) {
    if (!(value >= 0) || !std::isfinite(value)) {
      throw_error(ErrorCode::kFormat, file->path() + ": " + hparams().arch + key + " = " +
                                          std::to_string(value) + " is not a finite value >= 0");
    }
  }
  const HParams& hp = hparams();
  const WeightLoader w(*file, interleaved_weights());
  token_embd_ = w.table("token_embd.weight", hp.n_vocab, hp.n_embd);
  output_ = w.has("output.weight") ? w.matrix("output.weight", hp.n_vocab, hp.n_embd)
                                   : w.as_matrix(token_embd_);
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
  if (options_.fused_projections) {  // phi3: rows q | k | v of one tensor
    const std::string name = p + "attn_qkv.weight";
    const ops::Matrix qkv = w.matrix(name, q_dim + 2 * kv_dim, hp.n_embd);
    l.attn.wq = row_slice(qkv, 0, q_dim, name);
    l.attn.wk = row_slice(qkv, q_dim, kv_dim, name);
    l.attn.wv = row_slice(qkv, q_dim + kv_dim, kv_dim, name);
  } else {
    l.attn.wq = w.matrix(p + "attn_q.weight", q_dim, hp.n_embd);
    if (owns_kv) {
      l.attn.wk = w.matrix(p + "attn_k.weight", kv_dim, hp.n_embd);
      l.attn.wv = w.matrix(p + "attn_v.weight", kv_dim, hp.n_embd);
    } else if (w.has(p + "attn_k.weight") || w.has(p + "attn_v.weight")) {
      throw_error(ErrorCode::kFormat, file().path() + ": layer " + std::to_string(i) +
                                          " shares K/V (kv_share.block1_layers = " +
                                          std::to_string(block1_layers_) + ") but has attn_k/attn_v");
    }
  }
  l.attn.wo = w.matrix(p + "attn_output.weight", hp.n_embd, q_dim);
  l.attn.q_bias = w.optional_vector(p + "attn_q.bias", q_dim);
  if (owns_kv) {
    l.attn.k_bias = w.optional_vector(p + "attn_k.bias", kv_dim);
    l.attn.v_bias = w.optional_vector(p + "attn_v.bias", kv_dim);
    l.attn.k_scale = read_scale(w, p + "attn_k_scale.weight");
    l.attn.v_scale = read_scale(w, p + "attn_v_scale.weight");
  }
  if (options_.qk_norm != QkNorm::kNone) {
    l.attn.q_norm = w.vector(p + "attn_q_norm.weight", hp.head_dim);
    if (owns_kv) l.attn.k_norm = w.vector(p + "attn_k_norm.weight", hp.head_dim);
  }
  l.ffn.norm = w.vector(p + "ffn_norm.weight", hp.n_embd);
  l.ffn.activation = options_.activation;
  if (options_.sandwich_norms) {
    l.attn.post_norm = w.vector(p + "post_attention_norm.weight", hp.n_embd);
    l.ffn.post_norm = w.vector(p + "post_ffw_norm.weight", hp.n_embd);
  }
  if (options_.fused_projections) {  // phi3: rows gate | up of ffn_up
    const std::string name = p + "ffn_up.weight";
    const ops::Matrix gate_up = w.matrix(name, 2 * hp.n_ff, hp.n_embd);
    l.ffn.gate = row_slice(gate_up, 0, hp.n_ff, name);
    l.ffn.up = row_slice(gate_up, hp.n_ff, hp.n_ff, name);
  } else {
    l.ffn.gate = w.matrix(p + "ffn_gate.weight", hp.n_ff, hp.n_embd);
    l.ffn.up = w.matrix(p + "ffn_up.weight", hp.n_ff, hp.n_embd);
  }
  l.ffn.down = w.matrix(p + "ffn_down.weight", hp.n_embd, hp.n_ff);
  return l;
}

AttentionConfig DenseDecoder::attention_config() const {
  const HParams& hp = hparams();
  AttentionConfig c{hp.n_embd, hp.n_head, hp.n_head_kv, hp.head_dim, hp.rms_eps, hp.qk_norm_eps};
  c.rope = &rope_;
  c.qk_norm = options_.qk_norm;
  c.window = window_;
  c.scale = attention_scale_;
  c.softcap = attn_softcap_;
  return c;
}

bool DenseDecoder::is_local_layer(int64_t i) const {
  return window_ > 0 && (options_.swa_pattern == 0 || (i + 1) % options_.swa_pattern != 0);
}

AttentionConfig DenseDecoder::layer_attention_config(const AttentionConfig& base, int64_t i) const {
  AttentionConfig c = base;
  const bool local = is_local_layer(i);
  c.window = local ? window_ : 0;
  if (local && options_.rope_local_base > 0) c.rope = &rope_local_;
  if (options_.nope_every > 0 && (i + 1) % options_.nope_every == 0) c.rope = nullptr;
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
    const std::string prefix = "blk." + std::to_string(i) + ".";
    s.lora.push_back(resolve_layer_lora(adapter, scale, prefix));
    if (options_.fused_projections) split_fused_lora(s, adapter, scale, prefix, s.lora.back());
    check_lora_shapes(s.lora.back(), prefix);
  }
  if (output_.data != token_embd_.data) s.output_lora = resolve_lora(adapter, scale, "output.weight");
  const int64_t q_dim = hp.n_head * hp.head_dim;
  const int64_t widest = std::max({hp.n_embd, q_dim, hp.n_ff});
  s.own.layer.lora.reserve(s.n_batch(), widest, adapter.max_rank(), threads);
}

void DenseDecoder::forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
                           float* logits, Workers& pool) const {
  State& s = static_cast<State&>(state);
  const int64_t n = static_cast<int64_t>(tokens.size());
  AFM_CHECK(n > 0 && n <= s.n_batch() && s.n_past() + n <= s.n_ctx());
  const BatchItem one{&s, tokens, rows, logits};
  run({&one, 1}, s.own, pool);
}

namespace {

// Rows [row0, row0 + rows) of a fused target's output as a target of its own: the same A, a
// row range of B (parts owns the new pair).
LoraTarget lora_part(const LoraTarget& fused, int64_t row0, int64_t rows,
                     std::deque<LoraPair>& parts) {
  if (!fused) return {};
  AFM_CHECK(fused.pair->n_stack == 1);
  LoraPair p;
  p.a = fused.pair->a;
  p.b = row_slice(fused.pair->b, row0, rows, "lora_b");
  p.rank = fused.pair->rank;
  p.in = fused.pair->in;
  p.out = rows;
  transpose_lora_b(p);
  parts.push_back(std::move(p));
  return {&parts.back(), fused.scale};
}

}  // namespace

void DenseDecoder::check_lora_shapes(const LayerLora& l, const std::string& prefix) const {
  // Each target adds `out` values per row to a buffer as wide as its projection: a pair of
  // another shape must never reach the kernels (it would write past the buffer).
  const HParams& hp = hparams();
  const int64_t q_dim = hp.n_head * hp.head_dim, kv_dim = hp.n_head_kv * hp.head_dim;
  const struct {
    const LoraTarget& t;
    int64_t in, out;
    const char* name;
  } expected[] = {{l.attn.q, hp.n_embd, q_dim, "q"},       {l.attn.k, hp.n_embd, kv_dim, "k"},
                  {l.attn.v, hp.n_embd, kv_dim, "v"},      {l.attn.o, q_dim, hp.n_embd, "output"},
                  {l.ffn.gate, hp.n_embd, hp.n_ff, "gate"}, {l.ffn.up, hp.n_embd, hp.n_ff, "up"},
                  {l.ffn.down, hp.n_ff, hp.n_embd, "down"}};
  for (const auto& e : expected) {
    if (e.t && (e.t.pair->in != e.in || e.t.pair->out != e.out || e.t.pair->n_stack != 1)) {
      throw_error(ErrorCode::kFormat, "adapter for " + prefix + e.name + ": " +
                                          std::to_string(e.t.pair->in) + " -> " +
                                          std::to_string(e.t.pair->out) + " does not fit the "
                                          "projection's " + std::to_string(e.in) + " -> " +
                                          std::to_string(e.out));
    }
  }
}

void DenseDecoder::split_fused_lora(State& s, const LoraAdapter& adapter, float scale,
                                    const std::string& prefix, LayerLora& l) const {
  const HParams& hp = hparams();
  const int64_t q_dim = hp.n_head * hp.head_dim, kv_dim = hp.n_head_kv * hp.head_dim;
  const LoraTarget qkv = resolve_lora(adapter, scale, prefix + "attn_qkv.weight");
  l.attn.q = lora_part(qkv, 0, q_dim, s.lora_parts);
  l.attn.k = lora_part(qkv, q_dim, kv_dim, s.lora_parts);
  l.attn.v = lora_part(qkv, q_dim + kv_dim, kv_dim, s.lora_parts);
  const LoraTarget gate_up = l.ffn.up;  // ffn_up holds gate | up rows here
  l.ffn.gate = lora_part(gate_up, 0, hp.n_ff, s.lora_parts);
  l.ffn.up = lora_part(gate_up, hp.n_ff, hp.n_ff, s.lora_parts);
}

std::unique_ptr<BatchWorkspace> DenseDecoder::new_batch_workspace(const BatchOptions& o) const {
  AFM_CHECK(o.max_tokens > 0 && o.n_ctx > 0 && o.n_threads > 0);
  return std::make_unique<Workspace>(hparams(), attention_config(), o);
}

void DenseDecoder::forward_batch(std::span<const BatchItem> items, BatchWorkspace& workspace,
                                 Workers& pool) const {
  auto* ws = dynamic_cast<Workspace*>(&workspace);
  if (ws == nullptr) {
    throw_error(ErrorCode::kInvalidArgument, "the batch workspace was made by another model kind");
  }
  check_batch(items, ws->options());
  run(items, ws->buffers, pool);
}

void DenseDecoder::run(std::span<const BatchItem> items, Buffers& a, Workers& pool) const {
  const HParams& hp = hparams();
  const AttentionConfig attn = attention_config();
  a.tokens.clear();
  a.seqs.clear();
  a.item_of.clear();
  int64_t rows = 0;
  bool full_prefill = true;
  // Short items (decode steps, exact verification: per_token_path) first, so that their
  // products can take the per-token path they take alone.
  a.layer.per_token_rows = 0;
  for (const bool short_items : {true, false}) {
    for (size_t i = 0; i < items.size(); ++i) {
      State& s = static_cast<State&>(*items[i].state);
      const int64_t n = static_cast<int64_t>(items[i].tokens.size());
      if (per_token_path(items[i].rows, n) != short_items) continue;
      a.tokens.insert(a.tokens.end(), items[i].tokens.begin(), items[i].tokens.end());
      a.seqs.push_back({rows, n, s.n_past(), &s.cache, nullptr, nullptr, &s.own.layer.lora});
      a.item_of.push_back(i);
      for (int64_t t = 0; t < n; ++t) {
        a.layer.positions[rows + t] = static_cast<int32_t>(s.n_past() + t);
      }
      rows += n;
      if (short_items) a.layer.per_token_rows = rows;
      full_prefill = full_prefill && s.full_prefill;
    }
  }
  ops::embed_tokens(token_embd_, a.tokens, a.x.data());
  if (options_.scale_embeddings) {  // Gemma: x sqrt(n_embd), as the model computes it in f32
    const float scale = std::sqrt(static_cast<float>(hp.n_embd));
    float* x = a.x.data();
    parallel_for(pool, rows * hp.n_embd, [&](int64_t begin, int64_t end) {
      for (int64_t j = begin; j < end; ++j) x[j] *= scale;
    }, 8192);
  }
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    // Past the last layer that writes K/V, only positions that need logits matter.
    if (i == block1_layers_ && !full_prefill) rows = keep_logit_rows(items, a);
    if (rows == 0) break;
    for (size_t j = 0; j < a.seqs.size(); ++j) {
      const State& s = static_cast<const State&>(*items[a.item_of[j]].state);
      const LayerLora* lora = s.lora.empty() ? nullptr : &s.lora[i];
      a.seqs[j].attn_lora = lora ? &lora->attn : nullptr;
      a.seqs[j].ffn_lora = lora ? &lora->ffn : nullptr;
    }
    attention_block(layer_attention_config(attn, i), layers_[i].attn, a.seqs, rows, a.x.data(), a.layer,
                    layers_[i].kv_layer, pool);
    ffn_block(layers_[i].ffn, hp.n_embd, hp.n_ff, hp.rms_eps, a.seqs, rows, a.x.data(), a.layer,
              pool);
  }
  for (const BatchItem& b : items) {
    static_cast<State&>(*b.state).advance(static_cast<int64_t>(b.tokens.size()));
  }
  write_logits(items, rows, a, pool);
}

int64_t DenseDecoder::keep_logit_rows(std::span<const BatchItem> items, Buffers& a) const {
  const int64_t n_embd = hparams().n_embd;
  // The kept rows are gathered into h (free between layers) with the short sequences first
  // again, then copied back.
  const std::vector<SequenceRows> old = a.seqs;
  const std::vector<size_t> old_item = a.item_of;
  std::vector<int32_t> positions(a.layer.positions.begin(), a.layer.positions.end());
  a.seqs.clear();
  a.item_of.clear();
  int64_t rows = 0;
  a.layer.per_token_rows = 0;
  for (const bool short_items : {true, false}) {
    for (size_t j = 0; j < old.size(); ++j) {
      SequenceRows r = old[j];
      const LogitRows want = items[old_item[j]].rows;
      const int64_t keep = logit_rows(want, r.tokens);
      if (keep == 0 || per_token_path(want, keep) != short_items) continue;
      const int64_t from = r.row0 + r.tokens - keep;
      std::copy_n(a.x.data() + from * n_embd, keep * n_embd, a.layer.h.data() + rows * n_embd);
      std::copy_n(positions.data() + from, keep, a.layer.positions.data() + rows);
      r.pos0 += r.tokens - keep;
      r.row0 = rows;
      r.tokens = keep;
      a.seqs.push_back(r);
      a.item_of.push_back(old_item[j]);
      rows += keep;
      if (short_items) a.layer.per_token_rows = rows;
    }
  }
  std::copy_n(a.layer.h.data(), rows * n_embd, a.x.data());
  return rows;
}

void DenseDecoder::write_logits(std::span<const BatchItem> items, int64_t rows, Buffers& a,
                                Workers& pool) const {
  const HParams& hp = hparams();
  // The wanted rows (the last, or all, of each item) gathered into h through the final norm.
  float* hidden = a.layer.h.data();
  int64_t n_out = 0, per_token_out = 0;  // the head's rows, and the leading per-token ones
  std::vector<int64_t> out_row(a.seqs.size(), -1);
  for (const bool short_outputs : {true, false}) {  // as the layers order their rows
    for (size_t j = 0; j < a.seqs.size() && rows > 0; ++j) {
      const SequenceRows& r = a.seqs[j];
      const LogitRows want = items[a.item_of[j]].rows;
      if (want == LogitRows::kNone) continue;
      const int64_t n = logit_rows(want, r.tokens);
      if (per_token_path(want, n) != short_outputs) continue;
      rms_norm_rows(a.x.data() + (r.row0 + r.tokens - n) * hp.n_embd, output_norm_, hp.rms_eps,
                    n, hp.n_embd, hidden + n_out * hp.n_embd, pool);
      out_row[j] = n_out;
      n_out += n;
      if (short_outputs) per_token_out = n_out;
    }
  }
  if (n_out == 0) return;
  // A single sequence's logits go straight to its buffer; a batch's are split afterwards.
  const bool direct = a.seqs.size() == 1;
  if (!direct) a.logits.resize(static_cast<size_t>(n_out * hp.n_vocab));
  float* all = direct ? items[a.item_of[0]].logits : a.logits.data();
  ops::Activations final_hidden(hidden, n_out, hp.n_embd, a.layer.act);
  final_hidden.set_per_token_rows(per_token_out);
  ops::matmul(final_hidden, output_, all, pool);
  for (size_t j = 0; j < a.seqs.size(); ++j) {
    if (out_row[j] < 0) continue;
    const BatchItem& b = items[a.item_of[j]];
    State& s = static_cast<State&>(*b.state);
    const int64_t n = logit_rows(b.rows, a.seqs[j].tokens);
    float* logits = all + out_row[j] * hp.n_vocab;
    if (s.output_lora) {
      lora_add(hidden + out_row[j] * hp.n_embd, n, s.output_lora, 0, logits, s.own.layer.lora, pool);
    }
    if (final_softcap_ > 0) {  // Gemma 2: logits soft-capped
      const float cap = final_softcap_;
      parallel_for(pool, n * hp.n_vocab, [&](int64_t begin, int64_t end) {
        for (int64_t v = begin; v < end; ++v) logits[v] = cap * std::tanh(logits[v] / cap);
      }, 8192);
    }
    if (!direct) std::copy_n(logits, n * hp.n_vocab, b.logits);
  }
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
  if (window_ > 0) {
    s += ", sliding window " + std::to_string(window_);
    if (options_.swa_pattern > 0) s += " in all but every " + std::to_string(options_.swa_pattern) + "th layer";
  }
  if (options_.sandwich_norms) s += ", post-norms";
  if (options_.activation == ops::FfnActivation::kGeluTanh) s += ", geglu";
  if (attn_softcap_ > 0) s += ", attention softcap " + std::to_string(attn_softcap_);
  if (final_softcap_ > 0) s += ", final softcap " + std::to_string(final_softcap_);
  if (options_.nope_every > 0) {
    s += ", no positional embedding in every " + std::to_string(options_.nope_every) + "th layer";
  }
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
  m.sliding_window = window_;
  for (int64_t i = 0; i < hparams().n_layer; ++i) {
    const char* attention = i >= block1_layers_ ? "shared-kv" : is_local_layer(i) ? "local" : "causal";
    m.layers.push_back({attention, "dense", layers_[i].kv_layer});
  }
  return m;
}

std::unique_ptr<Model> load_dense_decoder(std::shared_ptr<const gguf::File> file,
                                          const DenseOptions& options) {
  return std::make_unique<DenseDecoder>(std::move(file), options);
}

}  // namespace afm::model
