// The draft model of speculative decoding (draft.h): a small model of a base's vocabulary that
// proposes tokens the base then verifies. Its shape is derived from the base's; its start can be
// copied from the base's weights.
//
// Contract: draft_config() throws afm::Error(kInvalidArgument) naming the option (--arch,
// --layers, --width, --heads, --kv-heads, --ff) whose value the base cannot take or the model
// config rejects. initialise_draft() only copies tensors whose GGUF name and shape match.
#pragma once

#include <cstdint>
#include <string>

#include "train/language_model.h"
#include "train/model_config.h"

namespace afm::train {

struct DraftShape {
  std::string arch;  // llama | afm-device; empty: the base's if dense, else afm-device
  int64_t layers = 2;
  int64_t width = 0;     // 0: the base's embedding_length
  int64_t heads = 0;     // 0: the base's head_count
  int64_t kv_heads = 0;  // 0: the base's head_count_kv if it divides heads, else heads
  int64_t ff = 0;        // 0: the base's feed_forward_length, scaled with the width (x32)
};

// The draft's config: the base's vocabulary, context, RoPE base and epsilons with the shape's
// sizes. An afm-device draft gives every layer its own K/V (block1_layers = layers): at a few
// layers sharing saves little, and the base's first layers, which the draft may copy, own theirs.
ModelConfig draft_config(const ModelConfig& base, const DraftShape& shape);

enum class DraftInit {
  kBase,        // the base's embedding, output norm and first layers where the shapes match
  kEmbeddings,  // the base's embedding (the tied head) and output norm where widths match
  kRandom,      // the seeded initialisation of make_language_model()
};

// Overwrites the draft's parameters with the base's as `how` says; returns how many tensors
// were copied. Layers are copied only between models of the same architecture and width.
int64_t initialise_draft(LanguageModel& draft, const LanguageModel& base, DraftInit how);

}  // namespace afm::train
