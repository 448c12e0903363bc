// How a response is sampled (Swift: GenerationOptions).
#pragma once

#include <cstdint>
#include <optional>

namespace afm {

struct SamplingMode {
  enum class Kind { kGreedy, kTopK, kTopP };
  Kind kind = Kind::kGreedy;
  int top_k = 0;        // kTopK
  double top_p = 1.0;   // kTopP: the probability mass kept, in (0, 1]
  uint64_t seed = 0;    // kTopK, kTopP: same seed, same prompt, same model -> same response

  static SamplingMode greedy() { return {}; }
  static SamplingMode top_k_sampling(int k, uint64_t seed = 0) { return {Kind::kTopK, k, 1.0, seed}; }
  static SamplingMode top_p_sampling(double p, uint64_t seed = 0) { return {Kind::kTopP, 0, p, seed}; }
};

struct GenerationOptions {
  SamplingMode sampling = SamplingMode::greedy();
  // Softmax temperature for the random modes (default 1.0); ignored by greedy.
  std::optional<double> temperature;
  // Most tokens in the response; nullopt: until the model ends its turn or the context fills.
  std::optional<int64_t> maximum_response_tokens;
  // Speculative decoding by prompt lookup: tokens are drafted by matching the last n-gram
  // (n <= this, at most 16) against the prompt and the response so far, and verified in one
  // forward pass. The response is the same; copying tasks (extraction, tool arguments) get it
  // faster. 0: off. A draft model is a model option (ModelOptions::draft_model).
  int prompt_lookup = 0;
};

}  // namespace afm
