// The two residual sub-blocks every decoder in afm is made of, shared by the dense
// architectures, afm-device and afm-server:
//   attention: x += Wo · attend(q, K, V),  q/k/v from RMSNorm(x), optional biases, RoPE or none
//              (NoPE), optional per-head QK-RMSNorm before or after RoPE, optional learned
//              fake-int8 K/V, full causal or sliding-window; K/V come from this layer or, for
//              KV-sharing layers, from another layer's cache; optional attention-logit
//              soft-capping and a post-norm of the block's output (Gemma's sandwich norms).
//   ffn:       x += down(act(gate · RMSNorm(x)) * up · RMSNorm(x)), act = silu or gelu-tanh,
//              with the same optional post-norm.
//
// Every step runs through the Workers (never serial code writing shared buffers), so a block
// runs unchanged on a whole ThreadPool or on a ThreadTeam (one track of afm-server).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "model/kv_cache.h"
#include "model/lora_apply.h"
#include "ops/activation.h"
#include "ops/matmul.h"
#include "ops/matrix.h"
#include "ops/rope.h"

namespace afm::model {

enum class QkNorm { kNone, kBeforeRope, kAfterRope };

struct AttentionWeights {
  std::vector<float> norm, q_norm, k_norm, q_bias, k_bias, v_bias;
  std::vector<float> post_norm;  // RMSNorm of the block's output before the residual (empty: none)
  ops::Matrix wq, wk, wv, wo;  // wk, wv empty when the layer reads another layer's K/V
  float k_scale = 0, v_scale = 0;  // learned fake-int8 scales (0: none)
  bool has_kv() const { return !wk.empty(); }
};

struct FfnWeights {
  std::vector<float> norm;
  std::vector<float> post_norm;  // as AttentionWeights::post_norm
  ops::Matrix gate, up, down;
  ops::FfnActivation activation = ops::FfnActivation::kSilu;
};

struct AttentionConfig {
  int64_t n_embd, n_head, n_head_kv, head_dim;
  float rms_eps, qk_eps;
  const ops::Rope* rope = nullptr;  // null: no positional embedding
  QkNorm qk_norm = QkNorm::kNone;
  int64_t window = 0;  // 0: full causal attention
  float scale = 0;     // q·k scale (0: 1 / sqrt(head_dim))
  float softcap = 0;   // > 0: attention logits soft-capped (ops::AttentionShape::softcap)
};

// Consecutive positions pos0 .. pos0 + tokens - 1 being processed.
struct TokenSpan {
  int64_t tokens, pos0;
};

// One sequence's rows inside a batch of several sequences (Model::forward_batch): rows
// [row0, row0 + tokens) of the activations are its positions pos0 .. pos0 + tokens - 1, its
// K/V live in `cache`, and attn_lora / ffn_lora (null: none) are its adapter's targets for
// the layer being run, applied with its own `lora_scratch`.
struct SequenceRows {
  int64_t row0 = 0, tokens = 0, pos0 = 0;
  KvCache* cache = nullptr;
  const AttentionLora* attn_lora = nullptr;
  const FfnLora* ffn_lora = nullptr;
  LoraScratch* lora_scratch = nullptr;
};

// Activation buffers for up to n_batch tokens, sized once (a ThreadTeam never resizes).
struct LayerScratch {
  LayerScratch(const AttentionConfig& a, int64_t n_ff, int64_t n_batch, int64_t n_ctx,
               int n_threads);
  std::vector<float> h, q, k, v, attn, gate, up, scores;
  std::vector<int32_t> positions;
  // Leading rows whose products must equal a one-sequence pass exactly (ops::Activations::
  // set_per_token_rows): the rows of batched sequences that alone would have had fewer than
  // cpu::kPerTokenPathBelow tokens. 0 outside batches.
  int64_t per_token_rows = 0;
  ops::ActivationScratch act;
  LoraScratch lora;  // sized only when the sequence has an adapter
};

// x: (tokens, n_embd), updated in place. A layer with K/V writes them to cache layer
// `kv_layer` first; every layer then attends to `kv_layer`'s cached positions.
// `lora` (null: none) adds the sequence's adapter to each adapted projection, unmerged
// (model/lora_apply.h); s.lora must then be reserved.
void attention_block(const AttentionConfig& c, const AttentionWeights& w, TokenSpan span,
                     float* x, LayerScratch& s, KvCache& cache, int64_t kv_layer, Workers& pool,
                     const AttentionLora* lora = nullptr);
void ffn_block(const FfnWeights& w, int64_t n_embd, int64_t n_ff, float eps, TokenSpan span,
               float* x, LayerScratch& s, Workers& pool, const FfnLora* lora = nullptr);

// The same blocks over the rows of several sequences at once: every projection is one matrix
// product over all `rows` rows (each weight is read once for the whole batch); K/V writes,
// attention and adapters are per sequence. `seqs` are sorted by row0 and cover [0, rows);
// s.positions holds each row's position and s must be sized for `rows` tokens.
void attention_block(const AttentionConfig& c, const AttentionWeights& w,
                     std::span<const SequenceRows> seqs, int64_t rows, float* x, LayerScratch& s,
                     int64_t kv_layer, Workers& pool);
void ffn_block(const FfnWeights& w, int64_t n_embd, int64_t n_ff, float eps,
               std::span<const SequenceRows> seqs, int64_t rows, float* x, LayerScratch& s,
               Workers& pool);

// Parallel helpers used by the blocks (rows split across the workers).
void rms_norm_rows(const float* x, const std::vector<float>& weight, float eps, int64_t rows,
                   int64_t n, float* y, Workers& pool);
void add_rows(float* x, const float* y, int64_t n, Workers& pool);  // x += y

}  // namespace afm::model
