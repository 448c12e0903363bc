#include "train/model_config.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "train/json_fields.h"

namespace afm::train {
namespace {

[[noreturn]] void invalid(const std::string& field, const std::string& rule) {
  throw_error(ErrorCode::kInvalidArgument, "model config /" + field + ": " + rule);
}

template <typename T>
void read(const nlohmann::json& j, const char* name, T& out) {
  read_json_field(j, "", name, out, "model config");
}

void require_positive(int64_t v, const char* name) {
  if (v <= 0) invalid(name, "must be > 0 (got " + std::to_string(v) + ")");
}

void validate(const ModelConfig& c) {
  if (c.arch != "llama" && c.arch != "afm-device" && c.arch != "afm-server")
    invalid("arch", "must be llama, afm-device or afm-server (got \"" + c.arch + "\")");
  require_positive(c.vocab_size, "vocab_size");
  require_positive(c.context_length, "context_length");
  require_positive(c.embedding_length, "embedding_length");
  require_positive(c.block_count, "block_count");
  require_positive(c.feed_forward_length, "feed_forward_length");
  require_positive(c.head_count, "head_count");
  require_positive(c.head_count_kv, "head_count_kv");
  if (c.head_count % c.head_count_kv != 0) invalid("head_count_kv", "must divide head_count");
  if (c.head_dim < 0) invalid("head_dim", "must be >= 0");
  if (c.head_dim == 0 && c.embedding_length % c.head_count != 0)
    invalid("head_dim", "embedding_length is not a multiple of head_count: set head_dim");
  if (c.effective_head_dim() % 2 != 0) invalid("head_dim", "must be even (RoPE rotates pairs)");
  if (!(c.rope_freq_base > 0)) invalid("rope_freq_base", "must be > 0");
  if (!(c.rms_epsilon > 0)) invalid("rms_epsilon", "must be > 0");
  if (!(c.qk_norm_epsilon > 0)) invalid("qk_norm_epsilon", "must be > 0");
  if (c.arch == "afm-device") {
    int64_t b1 = c.effective_block1_layers();
    if (b1 < 1 || b1 > c.block_count) invalid("block1_layers", "must be in 1 .. block_count");
  }
  if (c.arch != "afm-server") return;
  require_positive(c.tracks, "tracks");
  require_positive(c.track_block_depth, "track_block_depth");
  if (c.block_count % c.track_block_depth != 0)
    invalid("track_block_depth", "must divide block_count");
  require_positive(c.moe_every, "moe_every");
  require_positive(c.global_every, "global_every");
  require_positive(c.sliding_window, "sliding_window");
  if (c.expert_count < 0) invalid("expert_count", "must be >= 0");
  if (c.expert_count > 0) {
    if (c.expert_used_count < 1 || c.expert_used_count > c.expert_count)
      invalid("expert_used_count", "must be in 1 .. expert_count");
    require_positive(c.expert_feed_forward_length, "expert_feed_forward_length");
  }
  if (c.router_aux_loss < 0) invalid("router_aux_loss", "must be >= 0");
}

const char* const kFields[] = {
    "arch", "vocab_size", "context_length", "embedding_length", "block_count",
    "feed_forward_length", "head_count", "head_count_kv", "head_dim", "rope_freq_base",
    "rms_epsilon", "qk_norm_epsilon", "block1_layers", "tracks", "track_block_depth",
    "expert_count", "expert_used_count", "expert_feed_forward_length", "moe_every",
    "sliding_window", "global_every", "router_aux_loss"};

}  // namespace

ModelConfig ModelConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw_error(ErrorCode::kInvalidArgument, "model config: must be an object");
  for (const auto& [key, value] : j.items()) {
    if (std::find(std::begin(kFields), std::end(kFields), key) == std::end(kFields))
      invalid(key, "unknown field");
  }
  ModelConfig c;
  read(j, "arch", c.arch);
  read(j, "vocab_size", c.vocab_size);
  read(j, "context_length", c.context_length);
  read(j, "embedding_length", c.embedding_length);
  read(j, "block_count", c.block_count);
  read(j, "feed_forward_length", c.feed_forward_length);
  read(j, "head_count", c.head_count);
  read(j, "head_count_kv", c.head_count_kv);
  read(j, "head_dim", c.head_dim);
  read(j, "rope_freq_base", c.rope_freq_base);
  read(j, "rms_epsilon", c.rms_epsilon);
  read(j, "qk_norm_epsilon", c.qk_norm_epsilon);
  read(j, "block1_layers", c.block1_layers);
  read(j, "tracks", c.tracks);
  read(j, "track_block_depth", c.track_block_depth);
  read(j, "expert_count", c.expert_count);
  read(j, "expert_used_count", c.expert_used_count);
  read(j, "expert_feed_forward_length", c.expert_feed_forward_length);
  read(j, "moe_every", c.moe_every);
  read(j, "sliding_window", c.sliding_window);
  read(j, "global_every", c.global_every);
  read(j, "router_aux_loss", c.router_aux_loss);
  validate(c);
  return c;
}

nlohmann::json ModelConfig::to_json() const {
  nlohmann::json j = {{"arch", arch},
                      {"vocab_size", vocab_size},
                      {"context_length", context_length},
                      {"embedding_length", embedding_length},
                      {"block_count", block_count},
                      {"feed_forward_length", feed_forward_length},
                      {"head_count", head_count},
                      {"head_count_kv", head_count_kv},
                      {"head_dim", effective_head_dim()},
                      {"rope_freq_base", rope_freq_base},
                      {"rms_epsilon", rms_epsilon},
                      {"qk_norm_epsilon", qk_norm_epsilon}};
  if (arch == "afm-device") j["block1_layers"] = effective_block1_layers();
  if (arch == "afm-server") {
    j.update({{"tracks", tracks},
              {"track_block_depth", track_block_depth},
              {"expert_count", expert_count},
              {"expert_used_count", expert_used_count},
              {"expert_feed_forward_length", expert_feed_forward_length},
              {"moe_every", moe_every},
              {"sliding_window", sliding_window},
              {"global_every", global_every},
              {"router_aux_loss", router_aux_loss}});
  }
  return j;
}

int64_t ModelConfig::effective_head_dim() const {
  return head_dim > 0 ? head_dim : embedding_length / std::max<int64_t>(head_count, 1);
}

int64_t ModelConfig::effective_block1_layers() const {
  if (block1_layers > 0) return block1_layers;
  return std::max<int64_t>(1, std::llround(0.625 * static_cast<double>(block_count)));
}

bool ModelConfig::is_global_layer(int64_t n) const {
  return arch == "afm-server" && (n + 1) % global_every == 0;
}

bool ModelConfig::is_moe_layer(int64_t n) const {
  return arch == "afm-server" && expert_count > 0 && (n + 1) % moe_every == 0;
}

int64_t ModelConfig::parameter_count(bool active_only) const {
  const int64_t d = embedding_length, hd = effective_head_dim();
  const int64_t q = head_count * hd, kv = head_count_kv * hd;
  const bool qk_norm = arch != "llama";
  int64_t total = vocab_size * d + d;  // tied embedding + output_norm
  const int64_t tracks_n = arch == "afm-server" ? tracks : 1;
  for (int64_t n = 0; n < block_count; ++n) {
    const bool owns_kv = arch != "afm-device" || n < effective_block1_layers();
    int64_t layer = 2 * d + d * q + q * d + (qk_norm ? hd : 0);
    if (owns_kv) layer += 2 * d * kv + (qk_norm ? hd : 0);
    if (is_moe_layer(n)) {
      const int64_t experts = active_only ? expert_used_count : expert_count;
      layer += d * expert_count + experts * 3 * d * expert_feed_forward_length;
    } else {
      layer += 3 * d * feed_forward_length;
    }
    total += tracks_n * layer;
  }
  return total;
}

double ModelConfig::training_flops_per_token(int64_t seq) const {
  const double matrix = static_cast<double>(parameter_count(true)) - embedding_length *
                        (1.0 + (arch == "afm-server" ? tracks : 1) * 2.0 * block_count);
  const double width = static_cast<double>(head_count * effective_head_dim());
  const double tracks_n = arch == "afm-server" ? tracks : 1;
  double attention = 0;  // causal: a query attends (keys + 1) / 2 of `seq` on average
  for (int64_t n = 0; n < block_count; ++n) {
    double keys = (seq + 1) / 2.0;
    if (arch == "afm-server" && !is_global_layer(n) && sliding_window < seq) {
      const double w = static_cast<double>(sliding_window);
      keys = (w * (w + 1) / 2 + (seq - w) * w) / seq;
    }
    attention += tracks_n * 12.0 * width * keys;
  }
  return 6.0 * matrix + attention;
}

}  // namespace afm::train
