#include "train/draft_model.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "base/error.h"

namespace afm::train {
namespace {

[[noreturn]] void bad(const std::string& option, const std::string& why) {
  throw_error(ErrorCode::kInvalidArgument, "draft " + option + ": " + why);
}

int64_t scaled_ff(const ModelConfig& base, int64_t width) {
  if (width == base.embedding_length) return base.feed_forward_length;
  const int64_t ff = base.feed_forward_length * width / base.embedding_length;
  return std::max<int64_t>(32, (ff + 16) / 32 * 32);
}

}  // namespace

ModelConfig draft_config(const ModelConfig& base, const DraftShape& s) {
  ModelConfig c = base;
  c.arch = !s.arch.empty() ? s.arch : (base.arch == "afm-server" ? "afm-device" : base.arch);
  if (c.arch != "llama" && c.arch != "afm-device")
    bad("--arch " + c.arch, "a draft is llama or afm-device (dense decoders the runtime runs)");
  if (s.layers < 1) bad("--layers", "must be at least 1, got " + std::to_string(s.layers));
  if (s.width < 0 || s.heads < 0 || s.kv_heads < 0 || s.ff < 0)
    bad("shape", "--width, --heads, --kv-heads and --ff must be positive (0: derived)");
  c.block_count = s.layers;
  c.embedding_length = s.width > 0 ? s.width : base.embedding_length;
  c.head_count = s.heads > 0 ? s.heads : base.head_count;
  const bool base_heads =
      c.embedding_length == base.embedding_length && c.head_count == base.head_count;
  c.head_dim = base_heads ? base.effective_head_dim() : 0;
  if (!base_heads && c.embedding_length % c.head_count != 0)
    bad("--heads " + std::to_string(c.head_count),
        "does not divide the width " + std::to_string(c.embedding_length));
  c.head_count_kv = s.kv_heads > 0                           ? s.kv_heads
                    : c.head_count % base.head_count_kv == 0 ? base.head_count_kv
                                                             : c.head_count;
  if (c.head_count % c.head_count_kv != 0)
    bad("--kv-heads " + std::to_string(c.head_count_kv),
        "does not divide --heads " + std::to_string(c.head_count));
  c.feed_forward_length = s.ff > 0 ? s.ff : scaled_ff(base, c.embedding_length);
  c.block1_layers = c.arch == "afm-device" ? s.layers : 0;
  // afm-server fields do not apply to a dense draft.
  c.tracks = 1, c.track_block_depth = 1, c.expert_count = 0, c.expert_used_count = 0;
  c.expert_feed_forward_length = 0;
  try {
    return ModelConfig::from_json(c.to_json());
  } catch (const Error& e) {
    bad("shape", e.what());
  }
}

int64_t initialise_draft(LanguageModel& draft, const LanguageModel& base, DraftInit how) {
  if (how == DraftInit::kRandom) return 0;
  std::unordered_map<std::string, torch::Tensor> from;
  for (const NamedParameter& p : base.gguf_parameters()) from.emplace(p.gguf_name, p.tensor);
  // A layer's tensors mean the same thing only in the same architecture at the same width.
  const bool same_layers = draft.config().arch == base.config().arch &&
                           draft.config().embedding_length == base.config().embedding_length;
  torch::NoGradGuard no_grad;
  int64_t copied = 0;
  for (const NamedParameter& p : draft.gguf_parameters()) {
    const bool layer = p.gguf_name.rfind("blk.", 0) == 0;
    if (layer && (how != DraftInit::kBase || !same_layers)) continue;
    const auto it = from.find(p.gguf_name);
    if (it == from.end() || !it->second.sizes().equals(p.tensor.sizes())) continue;
    p.tensor.copy_(it->second);
    ++copied;
  }
  return copied;
}

}  // namespace afm::train
