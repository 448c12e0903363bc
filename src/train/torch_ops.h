// The building blocks the training models share, written against the libtorch API common to
// Debian's libtorch 1.13 and PyTorch 2.x. They compute the functions docs/gguf.md defines, so an
// exported model runs the same in the runtime (tests/train/export_parity_test.cpp checks it).
//
// Shapes: B batch, T positions, H query heads, G kv heads, D head_dim, d embedding width.
// Norms and softmax run in float32 whatever the input dtype; matrix products follow the
// caller's autocast state (bf16 on CUDA during training).
#pragma once

#include <torch/torch.h>

namespace afm::train {

// x / sqrt(mean(x^2) + eps) * weight over the last axis, in float32.
torch::Tensor rms_normalize(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// x (rows, in) times w (out, in) transposed: (rows, out).
torch::Tensor project(const torch::Tensor& x, const torch::Tensor& w);

// cos and sin of pos / theta^(2i / D) for pos < T, i < D/2: each (T, D/2), float32.
struct RopeTable {
  torch::Tensor cos, sin;
};
RopeTable make_rope_table(int64_t positions, int64_t head_dim, double theta,
                          const torch::Device& device);

// Rotates consecutive pairs (2i, 2i+1) of x (B, H, T, D) by the table's angles (llama.cpp's
// NORM layout, mlx traditional=True). A (T', D/2) table (T' >= T) gives row i position i; a
// (B, 1, T, D/2) table (rope_at()) gives each row its own positions.
torch::Tensor rope_pairs(const torch::Tensor& x, const RopeTable& table);

// Several documents packed into one row (SFT): per position, the document it belongs to and its
// position inside that document, both (B, T) int64. Attention never crosses documents and RoPE
// counts from each document's start, so a packed row computes what its documents would
// alone. Undefined tensors: one document per row starting at position 0.
struct Packing {
  torch::Tensor segments, positions;
  bool packed() const { return segments.defined(); }
};

// The table's angles at `positions` (B, T): a (B, 1, T, D/2) table for rope_pairs().
RopeTable rope_at(const RopeTable& table, const torch::Tensor& positions);

// (B, 1, T, T) bool: query i and key j are in the same document.
torch::Tensor same_segment_mask(const torch::Tensor& segments);

// Causal grouped-query attention: q (B, H, T, D), k and v (B, G, T, D), query head h reads kv
// head h / (H / G). window > 0 limits a query at position p to keys p-window+1 .. p.
// same_segment (optional, same_segment_mask()) further limits queries to their own document.
// Scores are scaled by D^-0.5. Returns (B, H, T, D).
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, int64_t window,
                               const torch::Tensor& same_segment = {});

// down(silu(gate x) * up x) with gate, up (F, d) and down (d, F).
torch::Tensor swiglu(const torch::Tensor& x, const torch::Tensor& gate, const torch::Tensor& up,
                     const torch::Tensor& down);

// Switches bf16 autocast on for `device`'s tensors (CUDA or CPU) for the guard's lifetime
// (no-op when disabled), over the API differences between libtorch versions.
class AutocastGuard {
 public:
  explicit AutocastGuard(bool enabled, c10::DeviceType device = c10::DeviceType::CUDA);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_;
  c10::DeviceType device_;
  bool previous_ = false;
};

}  // namespace afm::train
