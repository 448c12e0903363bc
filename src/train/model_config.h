// The shape of a model the trainer builds and exports: one configuration format shared with the
// runtime. Field names follow the GGUF keys of docs/gguf.md, so `{"arch": "afm-device",
// "block_count": 12, ...}` means what `afm-device.block_count` means in a GGUF file, and
// to_gguf_metadata() writes exactly those keys.
//
// Contract: from_json() validates every field and throws afm::Error(kInvalidArgument) naming the
// field (as a JSON pointer) and the rule it breaks; unknown fields are errors, not ignored.
// No torch dependency: the runtime-side tools may read these files too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace afm::train {

// "llama" (dense; runs in llama.cpp too), "afm-device" (KV-cache sharing), "afm-server"
// (Parallel-Track MoE with local/global attention).
struct ModelConfig {
  std::string arch = "afm-device";
  int64_t vocab_size = 0;
  int64_t context_length = 1024;
  int64_t embedding_length = 256;
  int64_t block_count = 4;  // layers (per track for afm-server)
  int64_t feed_forward_length = 768;
  int64_t head_count = 4;
  int64_t head_count_kv = 4;
  int64_t head_dim = 0;  // 0: embedding_length / head_count
  double rope_freq_base = 10000.0;
  double rms_epsilon = 1e-5;
  double qk_norm_epsilon = 1e-5;

  // afm-device: layers 0 .. block1_layers-1 own K/V; the rest reuse layer block1_layers-1's.
  int64_t block1_layers = 0;  // 0: round(0.625 * block_count), the report's split

  // afm-server
  int64_t tracks = 1;
  int64_t track_block_depth = 1;
  int64_t expert_count = 0;
  int64_t expert_used_count = 0;
  int64_t expert_feed_forward_length = 0;
  int64_t moe_every = 2;
  int64_t sliding_window = 4096;
  int64_t global_every = 4;
  double router_aux_loss = 0.01;  // training only: load-balancing loss coefficient

  static ModelConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;

  int64_t effective_head_dim() const;
  int64_t effective_block1_layers() const;
  bool is_global_layer(int64_t n) const;  // afm-server: (n + 1) % global_every == 0
  bool is_moe_layer(int64_t n) const;     // afm-server: experts and (n + 1) % moe_every == 0

  // Parameters (tied embedding counted once); `active` counts top-k experts only.
  int64_t parameter_count(bool active_only = false) const;
  // Training FLOPs per token at sequence length `seq` (forward + backward): 6 x active matrix
  // parameters (head included) + the attention score and mix products (12 x layers x query
  // width x keys attended on average).
  double training_flops_per_token(int64_t seq) const;
};

}  // namespace afm::train
