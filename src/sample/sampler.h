// Picks the next token from a model's logits.
//
// Chain, in order (llama.cpp's default order): mask (guided generation) -> repetition,
// presence and frequency penalties over the last repeat_last_n tokens -> greedy argmax when
// temperature <= 0 -> top-k -> softmax at the temperature -> top-p -> min-p -> draw.
// Draws come from a seeded Rng over candidates sorted by probability (ties: lower id first),
// so a seed gives the same tokens on every run and thread count.
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
  float top_p = 0.95f;             // 1: off; otherwise in (0, 1]
  float min_p = 0.05f;             // 0: off; keeps p >= min_p * p_max
  float repeat_penalty = 1.0f;     // 1: off; logit > 0 ? logit / r : logit * r, once per token
  int repeat_last_n = 64;          // window for all penalties; 0: off, -1: whole history
  float presence_penalty = 0.0f;   // subtracted once per distinct token in the window
  float frequency_penalty = 0.0f;  // subtracted per occurrence in the window
  uint64_t seed = 0;
};

// Error(kInvalidArgument) naming the field when a value is out of range.
void validate(const SamplerConfig& config);

// Applies the penalties of `config` to logits for the tokens in the window of `history`.
void apply_penalties(const SamplerConfig& config, std::span<const int32_t> history,
                     std::span<float> logits);

class Sampler {
 public:
  explicit Sampler(const SamplerConfig& config);  // validates

  // logits: one per vocabulary entry; modified in place (penalties). history: tokens so far
  // (prompt and generated). mask: when non-empty, tokens with mask[i] == false are never
  // chosen. Error(kInvalidArgument) when no token can be chosen (all masked, or no finite
  // logit).
  int32_t sample(std::span<float> logits, std::span<const int32_t> history,
                 std::span<const bool> mask = {});

  void reseed(uint64_t seed) { rng_.reseed(seed); }
  const SamplerConfig& config() const { return config_; }

 private:
  struct Candidate {
    int32_t id;
    float value;  // logit, then probability
  };
  void collect(std::span<const float> logits, std::span<const bool> mask);
  void keep_top_k();
  void softmax();
  void keep_top_p();
  void keep_min_p();
  int32_t draw();

  SamplerConfig config_;
  Rng rng_;
  std::vector<Candidate> candidates_;
};

}  // namespace afm::sample
