#include "model/pt_moe_decoder.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/gemm.h"
#include "base/error.h"
#include "base/thread_team.h"
#include "model/kv_cache.h"
#include "model/weights.h"
#include "ops/embedding.h"

namespace afm::model {
namespace {

constexpr const char* kArch = "afm-server";

[[noreturn]] void bad(const gguf::File& f, const std::string& what) {
  throw_error(ErrorCode::kFormat, f.path() + ": " + what);
}

HParams read_pt_moe_hparams(const gguf::File& file) {
  HParams hp = read_decoder_hparams(file, kArch);
  const gguf::TensorInfo& embd = file.get_tensor("token_embd.weight");
  if (embd.shape.size() != 2 || embd.shape[0] != static_cast<uint64_t>(hp.n_embd)) {
    bad(file, "token_embd.weight does not match embedding_length " + std::to_string(hp.n_embd));
  }
  hp.n_vocab = static_cast<int64_t>(embd.shape[1]);
  return hp;
}

PtMoeParams read_params(const gguf::File& file, const HParams& hp) {
  const std::string p = std::string(kArch) + ".";
  PtMoeParams pt;
  pt.tracks = read_count(file, p + "tracks");
  pt.block_depth = read_count(file, p + "track_block_depth");
  pt.n_expert = file.has(p + "expert_count") ? static_cast<int64_t>(file.get_u64(p + "expert_count")) : 0;
  pt.moe_every = read_optional_count(file, p + "moe_every", 2);
  pt.global_every = read_optional_count(file, p + "attention.global_every", 4);
  pt.sliding_window = read_optional_count(file, p + "attention.sliding_window", 4096);
  const std::string merge = file.has(p + "track_merge") ? file.get_string(p + "track_merge") : "mean";
  if (merge != "mean") {
    throw_error(ErrorCode::kUnsupported,
                file.path() + ": track_merge '" + merge + "' is not supported (mean)");
  }
  // Bound every count by the tensors the file holds before anything is sized from it.
  const uint64_t n_tensors = file.tensors().size();
  if (static_cast<uint64_t>(pt.tracks) * hp.n_layer > n_tensors) {
    bad(file, std::to_string(pt.tracks) + " tracks x " + std::to_string(hp.n_layer) +
                  " layers exceed the file's " + std::to_string(n_tensors) + " tensors");
  }
  if (hp.n_layer % pt.block_depth != 0) {
    bad(file, "block_count " + std::to_string(hp.n_layer) + " is not a multiple of " +
                  "track_block_depth " + std::to_string(pt.block_depth));
  }
  if (pt.n_expert > 0) {
    pt.n_expert_used = read_count(file, p + "expert_used_count");
    pt.n_ff_exp = read_count(file, p + "expert_feed_forward_length");
    if (pt.n_expert_used > pt.n_expert || pt.n_expert > (1 << 16)) {
      bad(file, "expert_used_count " + std::to_string(pt.n_expert_used) + " / expert_count " +
                    std::to_string(pt.n_expert) + " are inconsistent");
    }
  }
  return pt;
}

std::string layer_prefix(int64_t track, int64_t layer) {
  return "trk." + std::to_string(track) + ".blk." + std::to_string(layer) + ".";
}

float read_kv_scale(const WeightLoader& w, const std::string& name) {
  const std::vector<float> v = w.optional_vector(name, 1);
  if (v.empty()) return 0;
  if (!(v[0] > 0) || !std::isfinite(v[0])) {
    throw_error(ErrorCode::kFormat, name + " = " + std::to_string(v[0]) + " is not a positive scale");
  }
  return v[0];
}

}  // namespace

// One track's activations; caches for all T x L layers live in the State's KvCache.
class PtMoeDecoder::TrackState {
 public:
  TrackState(const AttentionConfig& a, int64_t n_ff, const PtMoeParams& pt, int64_t n_tokens,
             int64_t n_ctx, int n_threads)
      : x(n_tokens * a.n_embd),
        layer(a, n_ff, n_tokens, n_ctx, n_threads),
        moe(n_tokens, a.n_embd, std::max<int64_t>(pt.n_expert, 1), std::max<int64_t>(pt.n_expert_used, 1)) {}
  std::vector<float> x;
  LayerScratch layer;
  MoeScratch moe;
};

// Activation buffers for up to n_tokens tokens in all, with the batch's bookkeeping.
struct PtMoeDecoder::Buffers {
  Buffers(const PtMoeDecoder& m, int64_t n_tokens, int64_t n_ctx, int n_threads)
      : x(n_tokens * m.hparams().n_embd) {
    const int64_t n_ff = std::max(m.hparams().n_ff, m.pt_.n_ff_exp);
    for (int64_t t = 0; t < m.pt_.tracks; ++t) {
      tracks.push_back(std::make_unique<TrackState>(m.attention_config(0), n_ff, m.pt_, n_tokens,
                                                    n_ctx, n_threads));
    }
    tokens.reserve(n_tokens);
  }
  std::vector<float> x;  // the merged state between track blocks
  std::vector<std::unique_ptr<TrackState>> tracks;
  std::vector<int32_t> tokens;     // the batch's tokens, item after item
  std::vector<SequenceRows> seqs;  // each item's rows (no adapter fields: set per track)
  std::vector<size_t> item_of;     // seqs[j] belongs to items[item_of[j]]
  int64_t rows = 0;
  int64_t per_token_rows = 0;      // leading rows of short items (LayerScratch::per_token_rows)
  std::vector<float> logits;  // a batch's logits before they go to each item
};

class PtMoeDecoder::State : public SequenceState {
 public:
  State(const PtMoeDecoder& m, const StateOptions& o)
      : SequenceState(o),
        cache(cache_specs(m, o), m.hparams().n_head_kv, m.hparams().head_dim, o.kv_type),
        sequential_tracks(o.sequential_tracks),
        own(m, o.n_batch, o.n_ctx, o.n_threads),
        window_(m.pt_.sliding_window) {
    for (const KvLayerSpec& spec : cache_specs(m, o)) {
      if (spec.ring) ring_capacity_ = ring_capacity_ == 0 ? spec.capacity : std::min(ring_capacity_, spec.capacity);
    }
  }
  size_t kv_bytes() const override { return cache.bytes(); }
  int64_t min_exact_truncate() const override {
    const int64_t oldest = n_past_ - ring_capacity_;  // the oldest position the rings still hold
    if (ring_capacity_ == 0 || oldest <= 0) return 0;
    return oldest + window_ - 1;  // its window starts at the oldest position held
  }
  size_t kv_bytes_per_token() const override { return cache.bytes_per_token(); }
  void advance(int64_t n) { n_past_ += n; }

  static std::vector<KvLayerSpec> cache_specs(const PtMoeDecoder& m, const StateOptions& o) {
    std::vector<KvLayerSpec> specs;
    for (int64_t t = 0; t < m.pt_.tracks; ++t) {
      for (int64_t n = 0; n < m.hparams().n_layer; ++n) {
        const Layer& l = m.layers_[t * m.hparams().n_layer + n];
        const int64_t cap = m.cache_capacity(n, o.n_ctx, o.n_batch);
        specs.push_back({cap, cap < o.n_ctx, l.attn.k_scale, l.attn.v_scale});
      }
    }
    return specs;
  }

  KvCache cache;
  bool sequential_tracks;
  Buffers own;                  // for forward() on this sequence alone
  std::vector<LayerLora> lora;  // track-major like layers_; empty without an adapter

 private:
  int64_t window_ = 0, ring_capacity_ = 0;  // 0: no ring layer
};

class PtMoeDecoder::Workspace : public BatchWorkspace {
 public:
  Workspace(const PtMoeDecoder& m, const BatchOptions& o)
      : BatchWorkspace(o), buffers(m, o.max_tokens, o.n_ctx, o.n_threads) {}
  Buffers buffers;
};

PtMoeDecoder::PtMoeDecoder(std::shared_ptr<const gguf::File> file)
    : Model(file, read_pt_moe_hparams(*file)),
      pt_(read_params(*file, hparams())),
      rope_(ops::RopeLayout::kAdjacent, hparams().rope_dims, hparams().rope_theta,
            hparams().rope_freq_scale) {
  const HParams& hp = hparams();
  const WeightLoader w(*file, interleaved_weights());
  token_embd_ = w.matrix("token_embd.weight", hp.n_vocab, hp.n_embd);  // also the output head
  output_norm_ = w.vector("output_norm.weight", hp.n_embd);
  for (int64_t t = 0; t < pt_.tracks; ++t) {
    for (int64_t n = 0; n < hp.n_layer; ++n) layers_.push_back(load_layer(w, t, n));
  }
}

PtMoeDecoder::Layer PtMoeDecoder::load_layer(const WeightLoader& w, int64_t track,
                                             int64_t n) const {
  const HParams& hp = hparams();
  const int64_t q_dim = hp.n_head * hp.head_dim, kv_dim = hp.n_head_kv * hp.head_dim;
  const std::string p = layer_prefix(track, n);
  Layer l;
  l.attn.norm = w.vector(p + "attn_norm.weight", hp.n_embd);
  l.attn.wq = w.matrix(p + "attn_q.weight", q_dim, hp.n_embd);
  l.attn.wk = w.matrix(p + "attn_k.weight", kv_dim, hp.n_embd);
  l.attn.wv = w.matrix(p + "attn_v.weight", kv_dim, hp.n_embd);
  l.attn.wo = w.matrix(p + "attn_output.weight", hp.n_embd, q_dim);
  l.attn.q_norm = w.vector(p + "attn_q_norm.weight", hp.head_dim);
  l.attn.k_norm = w.vector(p + "attn_k_norm.weight", hp.head_dim);
  l.attn.k_scale = read_kv_scale(w, p + "attn_k_scale.weight");
  l.attn.v_scale = read_kv_scale(w, p + "attn_v_scale.weight");
  if (is_moe(n)) {
    l.moe.norm = w.vector(p + "ffn_norm.weight", hp.n_embd);
    l.moe.n_expert = pt_.n_expert;
    l.moe.n_used = pt_.n_expert_used;
    l.moe.n_ff_exp = pt_.n_ff_exp;
    l.moe.router = w.matrix(p + "ffn_gate_inp.weight", pt_.n_expert, hp.n_embd);
    l.moe.gate_exps = w.stacked_matrix(p + "ffn_gate_exps.weight", pt_.n_expert, pt_.n_ff_exp, hp.n_embd);
    l.moe.up_exps = w.stacked_matrix(p + "ffn_up_exps.weight", pt_.n_expert, pt_.n_ff_exp, hp.n_embd);
    l.moe.down_exps = w.stacked_matrix(p + "ffn_down_exps.weight", pt_.n_expert, hp.n_embd, pt_.n_ff_exp);
  } else {
    l.ffn.norm = w.vector(p + "ffn_norm.weight", hp.n_embd);
    l.ffn.gate = w.matrix(p + "ffn_gate.weight", hp.n_ff, hp.n_embd);
    l.ffn.up = w.matrix(p + "ffn_up.weight", hp.n_ff, hp.n_embd);
    l.ffn.down = w.matrix(p + "ffn_down.weight", hp.n_embd, hp.n_ff);
  }
  return l;
}

AttentionConfig PtMoeDecoder::attention_config(int64_t layer) const {
  const HParams& hp = hparams();
  AttentionConfig c{hp.n_embd, hp.n_head, hp.n_head_kv, hp.head_dim, hp.rms_eps, hp.qk_norm_eps};
  c.qk_norm = QkNorm::kAfterRope;
  if (!is_global(layer)) {
    c.rope = &rope_;
    c.window = pt_.sliding_window;
  }
  return c;
}

int64_t PtMoeDecoder::cache_capacity(int64_t layer, int64_t n_ctx, int64_t n_batch) const {
  if (is_global(layer)) return n_ctx;
  // A batch writes all its positions before attending: the ring must hold the window of its
  // first query plus the rest of the batch.
  return std::min(n_ctx, pt_.sliding_window + n_batch - 1);
}

std::unique_ptr<SequenceState> PtMoeDecoder::new_state(const StateOptions& options) const {
  AFM_CHECK(options.n_ctx > 0 && options.n_batch > 0);
  auto state = std::make_unique<State>(*this, options);
  if (options.adapter) attach_lora(*state, *options.adapter, options.adapter_scale, options.n_threads);
  return state;
}

void PtMoeDecoder::attach_lora(State& s, const LoraAdapter& adapter, float scale,
                               int threads) const {
  const HParams& hp = hparams();
  for (int64_t t = 0; t < pt_.tracks; ++t) {
    for (int64_t n = 0; n < hp.n_layer; ++n) {
      s.lora.push_back(resolve_layer_lora(adapter, scale, layer_prefix(t, n)));
    }
  }
  const int64_t q_dim = hp.n_head * hp.head_dim;
  const int64_t widest = std::max({hp.n_embd, q_dim, hp.n_ff, pt_.n_ff_exp, pt_.n_expert});
  // Sized here, before any team runs: members never resize shared buffers.
  for (auto& track : s.own.tracks) {
    track->layer.lora.reserve(s.n_batch(), widest, adapter.max_rank(), threads);
  }
}

void PtMoeDecoder::run_track_block(std::span<const BatchItem> items, Buffers& a,
                                   int64_t track, int64_t block, Workers& w) const {
  const HParams& hp = hparams();
  TrackState& ts = *a.tracks[track];
  const int64_t n_values = a.rows * hp.n_embd;
  parallel_for(w, n_values, [&](int64_t b, int64_t e) {
    std::copy(a.x.data() + b, a.x.data() + e, ts.x.data() + b);
  }, 8192);
  // Each sequence's rows with this track's adapter targets and scratch (a copy per track: the
  // tracks run concurrently).
  std::vector<SequenceRows> seqs(a.seqs);
  for (int64_t n = block * pt_.block_depth; n < (block + 1) * pt_.block_depth; ++n) {
    const int64_t index = track * hp.n_layer + n;
    const Layer& l = layers_[index];
    bool adapted = false;
    for (size_t i = 0; i < seqs.size(); ++i) {
      State& s = static_cast<State&>(*items[a.item_of[i]].state);
      const LayerLora* lora = s.lora.empty() ? nullptr : &s.lora[index];
      seqs[i].attn_lora = lora ? &lora->attn : nullptr;
      seqs[i].ffn_lora = lora ? &lora->ffn : nullptr;
      seqs[i].lora_scratch = &s.own.tracks[track]->layer.lora;
      adapted = adapted || lora != nullptr;
    }
    attention_block(attention_config(n), l.attn, seqs, a.rows, ts.x.data(), ts.layer, index, w);
    if (!is_moe(n)) {
      ffn_block(l.ffn, hp.n_embd, hp.n_ff, hp.rms_eps, seqs, a.rows, ts.x.data(), ts.layer, w);
    } else if (!adapted) {  // routing is per token: the whole batch at once
      moe_block(l.moe, hp.n_embd, hp.rms_eps, {a.rows, 0}, ts.x.data(), ts.layer, ts.moe, w);
    } else {  // each sequence with its own adapter's experts
      for (const SequenceRows& r : seqs) {
        moe_block(l.moe, hp.n_embd, hp.rms_eps, {r.tokens, r.pos0}, ts.x.data() + r.row0 * hp.n_embd,
                  ts.layer, ts.moe, w, r.ffn_lora, r.lora_scratch);
      }
    }
  }
}

void PtMoeDecoder::run_block(std::span<const BatchItem> items, Buffers& a, int64_t block,
                             bool sequential, Workers& pool) const {
  const int64_t n_tracks = pt_.tracks;
  if (sequential || n_tracks == 1 || pool.size() < n_tracks) {
    for (int64_t t = 0; t < n_tracks; ++t) run_track_block(items, a, t, block, pool);
  } else {
    std::vector<std::unique_ptr<TeamBarrier>> barriers;
    for (int64_t t = 0; t < n_tracks; ++t) {
      const Range team = split_range(pool.size(), static_cast<int>(t), static_cast<int>(n_tracks));
      barriers.push_back(std::make_unique<TeamBarrier>(static_cast<int>(team.end - team.begin)));
    }
    pool.run([&](int thread, int count) {
      const TeamSeat seat = team_seat(thread, count, n_tracks);
      ThreadTeam team(*barriers[seat.team], seat.member);
      run_track_block(items, a, seat.team, block, team);
    });
  }
  // Merge: the mean of the tracks' outputs.
  const int64_t n_values = a.rows * hparams().n_embd;
  const float inv = 1.0f / static_cast<float>(n_tracks);
  parallel_for(pool, n_values, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float sum = 0;
      for (int64_t t = 0; t < n_tracks; ++t) sum += a.tracks[t]->x[i];
      a.x[i] = sum * inv;
    }
  }, 8192);
}

void PtMoeDecoder::forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
                           float* logits, Workers& pool) const {
  State& s = static_cast<State&>(state);
  const int64_t n = static_cast<int64_t>(tokens.size());
  AFM_CHECK(n > 0 && n <= s.n_batch() && s.n_past() + n <= s.n_ctx());
  const BatchItem one{&s, tokens, rows, logits};
  run({&one, 1}, s.own, pool);
}

std::unique_ptr<BatchWorkspace> PtMoeDecoder::new_batch_workspace(const BatchOptions& o) const {
  AFM_CHECK(o.max_tokens > 0 && o.n_ctx > 0 && o.n_threads > 0);
  return std::make_unique<Workspace>(*this, o);
}

void PtMoeDecoder::forward_batch(std::span<const BatchItem> items, BatchWorkspace& workspace,
                                 Workers& pool) const {
  auto* ws = dynamic_cast<Workspace*>(&workspace);
  if (ws == nullptr) {
    throw_error(ErrorCode::kInvalidArgument, "the batch workspace was made by another model kind");
  }
  check_batch(items, ws->options());
  run(items, ws->buffers, pool);
}

void PtMoeDecoder::run(std::span<const BatchItem> items, Buffers& a, Workers& pool) const {
  const HParams& hp = hparams();
  a.tokens.clear();
  a.seqs.clear();
  a.item_of.clear();
  a.rows = 0;
  a.per_token_rows = 0;
  bool sequential = false;
  // Short items first (see DenseDecoder::run): their products take the per-token path.
  for (const bool short_items : {true, false}) {
    for (size_t i = 0; i < items.size(); ++i) {
      const BatchItem& b = items[i];
      State& s = static_cast<State&>(*b.state);
      const int64_t n = static_cast<int64_t>(b.tokens.size());
      if (per_token_path(b.rows, n) != short_items) continue;
      a.tokens.insert(a.tokens.end(), b.tokens.begin(), b.tokens.end());
      a.seqs.push_back({a.rows, n, s.n_past(), &s.cache});
      a.item_of.push_back(i);
      for (auto& track : a.tracks) {
        for (int64_t t = 0; t < n; ++t) {
          track->layer.positions[a.rows + t] = static_cast<int32_t>(s.n_past() + t);
        }
      }
      a.rows += n;
      if (short_items) a.per_token_rows = a.rows;
      sequential = sequential || s.sequential_tracks;
    }
  }
  for (auto& track : a.tracks) track->layer.per_token_rows = a.per_token_rows;
  ops::embed_tokens(token_embd_, a.tokens, a.x.data());
  for (int64_t b = 0; b < hp.n_layer / pt_.block_depth; ++b) run_block(items, a, b, sequential, pool);
  for (const BatchItem& b : items) {
    static_cast<State&>(*b.state).advance(static_cast<int64_t>(b.tokens.size()));
  }
  write_logits(items, a, pool);
}

void PtMoeDecoder::write_logits(std::span<const BatchItem> items, Buffers& a,
                                Workers& pool) const {
  const HParams& hp = hparams();
  LayerScratch& scratch = a.tracks[0]->layer;
  std::vector<int64_t> out_row(a.seqs.size(), -1);
  int64_t n_out = 0, per_token_out = 0;
  for (const bool short_outputs : {true, false}) {
    for (size_t j = 0; j < a.seqs.size(); ++j) {
      const BatchItem& b = items[a.item_of[j]];
      if (b.rows == LogitRows::kNone) continue;
      const SequenceRows& r = a.seqs[j];
      const int64_t n = logit_rows(b.rows, r.tokens);
      if (per_token_path(b.rows, n) != short_outputs) continue;
      rms_norm_rows(a.x.data() + (r.row0 + r.tokens - n) * hp.n_embd, output_norm_, hp.rms_eps,
                    n, hp.n_embd, scratch.h.data() + n_out * hp.n_embd, pool);
      out_row[j] = n_out;
      n_out += n;
      if (short_outputs) per_token_out = n_out;
    }
  }
  if (n_out == 0) return;
  const bool direct = items.size() == 1;
  if (!direct) a.logits.resize(static_cast<size_t>(n_out * hp.n_vocab));
  float* all = direct ? items[0].logits : a.logits.data();
  ops::Activations final_hidden(scratch.h.data(), n_out, hp.n_embd, scratch.act);
  final_hidden.set_per_token_rows(per_token_out);
  ops::matmul(final_hidden, token_embd_, all, pool);
  if (direct) return;
  for (size_t j = 0; j < a.seqs.size(); ++j) {
    if (out_row[j] < 0) continue;
    const BatchItem& b = items[a.item_of[j]];
    const int64_t n = logit_rows(b.rows, a.seqs[j].tokens);
    std::copy_n(all + out_row[j] * hp.n_vocab, n * hp.n_vocab, b.logits);
  }
}

ModelLayout PtMoeDecoder::layout() const {
  ModelLayout m;
  m.tracks = pt_.tracks;
  m.track_block_depth = pt_.block_depth;
  m.kv_layers = hparams().n_layer;
  m.experts = pt_.n_expert;
  m.experts_used = pt_.n_expert_used;
  m.sliding_window = pt_.sliding_window;
  for (int64_t n = 0; n < hparams().n_layer; ++n) {
    m.layers.push_back({is_global(n) ? "global" : "local", is_moe(n) ? "moe" : "dense", n});
  }
  return m;
}

std::string PtMoeDecoder::describe() const {
  const HParams& hp = hparams();
  std::string s = "parallel-track moe: " + std::to_string(pt_.tracks) + " tracks x " +
                  std::to_string(hp.n_layer) + " layers, track blocks of " +
                  std::to_string(pt_.block_depth) + " (" + std::to_string(hp.n_layer / pt_.block_depth) +
                  " merges by mean per step)";
  s += "\nlayers: " + std::to_string(hp.n_head) + " heads (" + std::to_string(hp.n_head_kv) +
       " kv) x " + std::to_string(hp.head_dim) + ", qk-norm after rope, tied output";
  s += "\nattention: 1 global layer (full causal, NoPE) in every " +
       std::to_string(pt_.global_every) + ", the others local (sliding window " +
       std::to_string(pt_.sliding_window) + ", rope adjacent pairs, theta " +
       std::to_string(static_cast<int64_t>(hp.rope_theta)) + ")";
  if (pt_.n_expert > 0) {
    s += "\nmoe: 1 layer in every " + std::to_string(pt_.moe_every) + ", " +
         std::to_string(pt_.n_expert) + " experts, top-" + std::to_string(pt_.n_expert_used) +
         ", expert ffn " + std::to_string(pt_.n_ff_exp) + "; dense ffn " + std::to_string(hp.n_ff);
  } else {
    s += "\nmoe: none; dense ffn " + std::to_string(hp.n_ff);
  }
  return s;
}

}  // namespace afm::model
