#include "tiny_config.h"

namespace afm::train::testing {

ModelConfig tiny_config(const std::string& arch) {
  ModelConfig c;
  c.arch = arch;
  c.vocab_size = 96;
  c.context_length = 64;
  c.embedding_length = 64;
  c.block_count = 4;
  c.feed_forward_length = 96;
  c.head_count = 4;
  c.head_count_kv = 2;
  c.rms_epsilon = 1e-5;
  c.qk_norm_epsilon = 1e-4;
  if (arch == "afm-device") c.block1_layers = 3;
  if (arch == "afm-server") {
    c.tracks = 2, c.track_block_depth = 2, c.expert_count = 4, c.expert_used_count = 2;
    c.expert_feed_forward_length = 32, c.moe_every = 2, c.sliding_window = 5,
    c.global_every = 3;
  }
  return c;
}

}  // namespace afm::train::testing
