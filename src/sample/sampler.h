// Picks the next token from a model's logits.
//
// Chain, in order (llama.cpp's default order):
//   mask (guided generation) -> repetition, presence and frequency penalties over the last
//   repeat_last_n tokens of the history -> greedy argmax when temperature <= 0 -> top-k ->
//   softmax at the temperature -> top-p -> min-p -> renormalise -> draw.
// The draw is an inverse CDF over the surviving candidates sorted by descending probability
// (ties: lower id first) with a uniform from the seeded Rng, so a seed gives the same tokens
// on every run, platform and thread count.
//
// NaN and -inf logits are never chosen; +inf counts as the largest finite float.
// sample() allocates nothing once its buffers have grown to the vocabulary size; top-k uses
// nth_element, so a 150k vocabulary costs O(n + k log k).
//
// Thread safety: one Sampler per sequence; sample() is not reentrant.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sample/rng.h"

namespace afm::sample {

struct SamplerConfig {
  float temperature = 0.8f;        // <= 0: greedy (argmax; ties go to the lowest id)
  int top_k = 40;                  // <= 0: off
  float top_p = 0.95f;             // in (0, 1]; 1: off
  float min_p = 0.05f;             // <= 1; <= 0: off; keeps p >= min_p * p_max
  float repeat_penalty = 1.0f;     // > 0; 1: off; logit > 0 ? logit / r : logit * r, once per
                                   // distinct token in the window
  int repeat_last_n = 64;          // window for all penalties; 0: off, -1: the whole history
  float presence_penalty = 0.0f;   // subtracted once per distinct token in the window
  float frequency_penalty = 0.0f;  // subtracted once per occurrence in the window
  uint64_t seed = 0;
};

// Throws Error(kInvalidArgument) naming the field and its value when one is out of range
// (e.g. "top_p must be in (0, 1], got 1.5"). Non-finite values are always rejected.
void validate(const SamplerConfig& config);

// Applies the repetition, presence and frequency penalties of `config` to `logits` for the
// distinct tokens among the last repeat_last_n entries of `history`. Ids outside
// [0, logits.size()) are ignored. Allocates a scratch buffer; Sampler reuses its own.
void apply_penalties(const SamplerConfig& config, std::span<const int32_t> history,
                     std::span<float> logits);

class Sampler {
 public:
  explicit Sampler(const SamplerConfig& config);  // validates

  // Picks the next token id in [0, logits.size()).
  // logits: one per vocabulary entry; modified in place (the penalties are applied to it).
  // history: the tokens so far (prompt and generated), for the penalties.
  // mask: when non-empty, tokens with mask[i] == false are never chosen, and ids at or past
  //   mask.size() count as masked (a tokenizer vocabulary may be shorter than the logits).
  // Throws Error(kInvalidArgument) when nothing can be chosen: "every token is masked", or
  // no allowed token has a finite logit.
  int32_t sample(std::span<float> logits, std::span<const int32_t> history,
                 std::span<const bool> mask = {});

  // Restarts the random stream as if constructed with this seed.
  void reseed(uint64_t seed) { rng_.reseed(seed); }
  const SamplerConfig& config() const { return config_; }

 private:
  struct Candidate {
    int32_t id;
    float value;  // logit, then probability
  };
  void collect(std::span<const float> logits, std::span<const bool> mask);
  // Temperature 0: the allowed token with the largest finite logit, lowest id on ties.
  int32_t greedy(std::span<const float> logits, std::span<const bool> mask);
  void keep_top_k();
  void softmax();
  void keep_top_p();
  void keep_min_p();
  int32_t draw();

  SamplerConfig config_;
  Rng rng_;
  std::vector<Candidate> candidates_;  // reused between calls
  std::vector<int32_t> window_;        // penalty scratch, reused between calls
};

}  // namespace afm::sample
