// Rotary position embedding, both layouts in use:
//   kAdjacent: rotates pairs (2i, 2i+1)        (llama.cpp NORM; Llama GGUFs, mlx traditional)
//   kHalves:   rotates pairs (i, i + dims / 2)  (llama.cpp NEOX; HF rotate_half; Qwen)
// Pair i turns by angle pos * freq_scale / theta^(2i / dims), with the frequencies computed in
// float as Hugging Face does.
#pragma once

#include <cstdint>
#include <vector>

namespace afm::ops {

enum class RopeLayout { kAdjacent, kHalves };

class Rope {
 public:
  // dims: rotated dimensions per head (<= head_dim; the rest pass through).
  Rope(RopeLayout layout, int64_t dims, float theta, float freq_scale);

  // x: (tokens, n_heads, head_dim), rotated in place; positions: (tokens).
  void apply(float* x, int64_t tokens, int64_t n_heads, int64_t head_dim,
             const int32_t* positions) const;

 private:
  RopeLayout layout_;
  int64_t dims_;
  std::vector<float> inv_freq_;  // (dims / 2), freq_scale folded in
};

}  // namespace afm::ops
