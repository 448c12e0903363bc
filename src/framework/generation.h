// The token loop shared by `afm generate`, `afm chat` and (later) sessions: prefill the new
// prompt tokens, then sample until a stop token, the token budget or the caller says stop.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "framework/speculator.h"
#include "model/context.h"
#include "sample/sampler.h"
#include "tokenizer/tokenizer.h"

namespace afm {

struct GenerationStats {
  int64_t prompt_tokens = 0;  // tokens prefilled by this call
  int64_t generated = 0;      // tokens sampled (including a final stop token)
  double prefill_ms = 0;
  double decode_ms = 0;       // evaluating sampled tokens
  bool stopped_by_token = false;
  SpeculationStats speculation;  // with GenerationRequest::speculator
};

// Token ids that end generation for this vocabulary: EOS and the end-of-turn tokens of the
// known chat templates that the vocabulary has.
std::vector<int32_t> end_of_generation_tokens(const tokenizer::Tokenizer& tokenizer);

struct GenerationRequest {
  std::span<const int32_t> prompt;    // evaluated after whatever the context already holds
  int64_t max_tokens = 128;           // < 0: until a stop token or the context is full
  std::vector<int32_t> stop_tokens;   // sampled but not passed to on_token
  // Called with each generated token; return false to stop.
  std::function<bool(int32_t)> on_token;
  // Speculative decoding (speculator.h; null: plain): the same tokens, fewer forward passes.
  Speculator* speculator = nullptr;
};

// history: tokens already in the context (for penalties); the prompt and the generated tokens
// are appended to it. A stop token is not evaluated, so the context ends after the last
// emitted token. Errors from the context (does not fit) propagate before any output.
GenerationStats generate(model::Context& context, sample::Sampler& sampler,
                         const GenerationRequest& request, std::vector<int32_t>& history);

}  // namespace afm
