// A loaded model: immutable weights (viewed in place in the GGUF mmap) plus the forward pass of
// its architecture. One Model serves any number of sequences; each sequence keeps its own
// SequenceState (KV cache, scratch), created by new_state().
//
// Thread safety: a Model is read-only after load and may be shared across threads; a
// SequenceState is used by one forward() at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "gguf/reader.h"
#include "model/hparams.h"
#include "model/lora.h"
#include "ops/attention.h"
#include "ops/interleaved_weights.h"

namespace afm::model {

struct StateOptions {
  int64_t n_ctx = 0;    // positions the KV cache holds
  int64_t n_batch = 0;  // most tokens one forward() call receives
  ops::KvType kv_type = ops::KvType::kF16;
  int n_threads = 1;  // threads forward() will be given (sizes per-thread scratch)
  // Benchmarks only: run every layer on every position even where no K/V and no logits need
  // them (afm-device's Block 2 during prefill), to measure what skipping saves.
  bool full_prefill = false;
  // Benchmarks only: run the tracks of a Parallel-Track model one after another on the whole
  // pool instead of concurrently on teams of threads.
  bool sequential_tracks = false;
  // A LoRA adapter for this sequence only (null: the base model), loaded against this model's
  // file (LoraAdapter::load), and the user's scale (s = alpha / rank x adapter_scale). Applied
  // unmerged: sequences on different adapters share the base weights.
  std::shared_ptr<const LoraAdapter> adapter;
  float adapter_scale = 1.0f;
};

class SequenceState {
 public:
  virtual ~SequenceState() = default;
  int64_t n_past() const { return n_past_; }
  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_batch() const { return n_batch_; }  // most tokens one forward() may pass
  // The adapter this sequence runs with (null: none) and its user scale; fixed at creation, so
  // cached K/V never mixes adapters.
  const std::shared_ptr<const LoraAdapter>& adapter() const { return adapter_; }
  float adapter_scale() const { return adapter_scale_; }
  // Forgets positions >= n (n <= n_past): the next forward() continues from position n.
  // Exact for n == 0 and n >= min_exact_truncate() (checked).
  void truncate(int64_t n);
  // The smallest n > 0 that truncate(n) keeps exact: 0 for caches that keep every position;
  // for a sliding-window ring (afm-server's local layers) that has wrapped, the first position
  // whose window the ring still holds whole. A ring of window + n_batch - 1 slots can always
  // roll back n_batch positions: a speculative draft verified in one pass fits.
  virtual int64_t min_exact_truncate() const { return 0; }
  virtual size_t kv_bytes() const = 0;
  virtual size_t kv_bytes_per_token() const = 0;

 protected:
  SequenceState(const StateOptions& o)
      : n_ctx_(o.n_ctx), n_batch_(o.n_batch), adapter_(o.adapter), adapter_scale_(o.adapter_scale) {}
  int64_t n_past_ = 0;
  int64_t n_ctx_;
  int64_t n_batch_;
  std::shared_ptr<const LoraAdapter> adapter_;
  float adapter_scale_ = 1.0f;
};

// How an architecture arranges its layers, for `afm info` and tests (one entry per layer of one
// track; all tracks of a Parallel-Track model share the arrangement).
struct LayerPlan {
  std::string attention;  // "causal", "local" (sliding window + RoPE), "global" (NoPE), "shared-kv"
  std::string ffn;        // "dense" or "moe"
  int64_t kv_layer = 0;   // the layer whose K/V it attends to
};
struct ModelLayout {
  int64_t tracks = 1, track_block_depth = 0;  // depth 0: a single stack
  int64_t kv_layers = 0;                       // layers per track that cache K/V
  int64_t experts = 0, experts_used = 0, sliding_window = 0;
  std::vector<LayerPlan> layers;
};

// Which positions of a forward() batch need logits (kNone: an intermediate prefill chunk).
// kAllExact: every position, each computed bit for bit as a one-token forward() after the
// previous ones would compute it (the kernels' per-token path, whatever the item's length), so
// speculative decoding can verify draft tokens in one pass and still sample exactly what
// one-at-a-time decoding samples. It reads each weight block once per few tokens instead of
// once for the whole item: meant for short items (a draft of a few tokens).
enum class LogitRows { kNone, kLast, kAll, kAllExact };

// Logit rows an item of n tokens gets under `rows` (0, 1 or n).
int64_t logit_rows(LogitRows rows, int64_t n);
// Whether the products of an item of n tokens (or of its n logit rows) take the kernels'
// per-token path: short items (fewer than cpu::kPerTokenPathBelow tokens, as they would alone)
// and kAllExact items. Batches put these rows first (ops::Activations::set_per_token_rows).
bool per_token_path(LogitRows rows, int64_t n);

// One sequence's share of a batched forward pass (Model::forward_batch): its tokens at
// positions state->n_past() ..., and where its logits go ((0, 1 or tokens.size(), n_vocab) per
// `rows`, as forward()).
struct BatchItem {
  SequenceState* state = nullptr;
  std::span<const int32_t> tokens;
  LogitRows rows = LogitRows::kLast;
  float* logits = nullptr;
};

// Sizes of the activation buffers a batched forward pass needs: at most max_tokens tokens in
// all, sequences of at most n_ctx positions, run by n_threads workers.
struct BatchOptions {
  int64_t max_tokens = 0;
  int64_t n_ctx = 0;
  int n_threads = 1;
};

// Activation buffers for forward_batch (Model::new_batch_workspace), reused from step to step.
// Thread safety: used by one forward_batch at a time.
class BatchWorkspace {
 public:
  virtual ~BatchWorkspace() = default;
  const BatchOptions& options() const { return options_; }

 protected:
  explicit BatchWorkspace(const BatchOptions& o) : options_(o) {}

 private:
  BatchOptions options_;
};

// Error(kInvalidArgument) naming the problem unless `items` is a valid batch for `ws`: at least
// one item; each with tokens (at most its state's n_batch), a state of its own that the tokens
// fit and of at most ws's n_ctx positions, and logits where rows asks for them; at most
// ws's max_tokens tokens in all.
void check_batch(std::span<const BatchItem> items, const BatchOptions& ws);

class Model {
 public:
  virtual ~Model() = default;

  const HParams& hparams() const { return hparams_; }
  const gguf::File& file() const { return *file_; }

  virtual std::unique_ptr<SequenceState> new_state(const StateOptions& options) const = 0;

  // Runs tokens at positions state.n_past() ...; appends their K/V and advances n_past.
  // logits: (0, 1 or tokens.size(), n_vocab) per `rows`. tokens.size() <= the state's n_batch and
  // must fit the context (callers check; see Context). Token ids out of range: Error.
  virtual void forward(SequenceState& state, std::span<const int32_t> tokens, LogitRows rows,
                       float* logits, Workers& pool) const = 0;

  // Several sequences in one pass: each item as forward() would run it, but every weight is
  // read once for all of the batch's tokens (decode of N sequences is one N-column product per
  // matrix). Logits equal one-at-a-time forward() calls up to the rounding of differently
  // sized matrix products (tests/model/batch_forward_test.cpp). Items are validated with
  // check_batch first. Any mix of prefill chunks and single decode tokens, of adapters and of
  // lengths.
  virtual std::unique_ptr<BatchWorkspace> new_batch_workspace(const BatchOptions& options) const;
  virtual void forward_batch(std::span<const BatchItem> items, BatchWorkspace& workspace,
                             Workers& pool) const;

  // Bytes of the copies the loader made of its matrices: interleaved, float groups, astc6x6 lane
  // forms and verbatim copies (0 without any; ops/interleaved_weights.h).
  size_t interleaved_bytes() const { return interleaved_.bytes(); }

  // One line per architecture feature for `afm info` ("rope: halves, theta 1e6", ...).
  virtual std::string describe() const = 0;
  virtual ModelLayout layout() const = 0;

 protected:
  Model(std::shared_ptr<const gguf::File> file, HParams hparams)
      : file_(std::move(file)), hparams_(std::move(hparams)) {}
  // Where a model's loader puts the interleaved copies of its matrices (WeightLoader).
  ops::InterleavedWeights* interleaved_weights() { return &interleaved_; }

 private:
  std::shared_ptr<const gguf::File> file_;
  HParams hparams_;
  ops::InterleavedWeights interleaved_;
};

}  // namespace afm::model
