#include "sample/sampler.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>

#include "base/error.h"

namespace afm::sample {
namespace {

// Higher value first; equal values: lower id first (a total, deterministic order).
bool before(float va, int32_t ia, float vb, int32_t ib) { return va > vb || (va == vb && ia < ib); }

std::string str(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

void require(bool ok, const std::string& message) {
  if (!ok) throw_error(ErrorCode::kInvalidArgument, message);
}

// `window` is scratch: the ids of the window are sorted there, so each distinct id is one run.
void penalize(const SamplerConfig& c, std::span<const int32_t> history, std::span<float> logits,
              std::vector<int32_t>& window) {
  const bool active =
      c.repeat_penalty != 1.0f || c.presence_penalty != 0.0f || c.frequency_penalty != 0.0f;
  if (!active || c.repeat_last_n == 0 || history.empty()) return;
  const size_t n =
      c.repeat_last_n < 0 ? history.size() : std::min<size_t>(history.size(), c.repeat_last_n);
  window.assign(history.end() - n, history.end());
  std::sort(window.begin(), window.end());
  for (size_t i = 0; i < window.size();) {
    size_t j = i + 1;
    while (j < window.size() && window[j] == window[i]) ++j;
    const int32_t id = window[i];
    const size_t count = j - i;
    i = j;
    if (id < 0 || static_cast<size_t>(id) >= logits.size()) continue;
    float& l = logits[id];
    l = l > 0 ? l / c.repeat_penalty : l * c.repeat_penalty;
    l -= c.presence_penalty + c.frequency_penalty * static_cast<float>(count);
  }
}

}  // namespace

void validate(const SamplerConfig& c) {
  require(!std::isnan(c.temperature) && c.temperature < INFINITY,
          "temperature must be a finite number, got " + str(c.temperature));
  require(c.top_p > 0 && c.top_p <= 1, "top_p must be in (0, 1], got " + str(c.top_p));
  require(!std::isnan(c.min_p) && c.min_p > -INFINITY && c.min_p <= 1,
          "min_p must be <= 1 (<= 0 disables it), got " + str(c.min_p));
  require(c.repeat_penalty > 0 && c.repeat_penalty < INFINITY,
          "repeat_penalty must be finite and > 0, got " + str(c.repeat_penalty));
  require(c.repeat_last_n >= -1,
          "repeat_last_n must be >= -1, got " + std::to_string(c.repeat_last_n));
  require(std::isfinite(c.presence_penalty),
          "presence_penalty must be finite, got " + str(c.presence_penalty));
  require(std::isfinite(c.frequency_penalty),
          "frequency_penalty must be finite, got " + str(c.frequency_penalty));
}

void apply_penalties(const SamplerConfig& config, std::span<const int32_t> history,
                     std::span<float> logits) {
  std::vector<int32_t> window;
  penalize(config, history, logits, window);
}

Sampler::Sampler(const SamplerConfig& config) : config_(config), rng_(config.seed) {
  validate(config);
}

namespace {

// Calls add(id, value) for every allowed token with a sampleable logit, in id order: NaN and
// -inf are skipped, +inf counts as the largest finite value (it would turn the softmax into
// NaN). Returns how many were added; throws when nothing can be sampled.
template <class Add>
size_t for_each_candidate(std::span<const float> logits, std::span<const bool> mask, Add add) {
  const size_t n = mask.empty() ? logits.size() : std::min(logits.size(), mask.size());
  bool any_allowed = false;
  size_t added = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!mask.empty() && !mask[i]) continue;
    any_allowed = true;
    const float l = logits[i];
    if (std::isnan(l) || l == -INFINITY) continue;
    add(static_cast<int32_t>(i), std::min(l, FLT_MAX));
    ++added;
  }
  require(any_allowed || logits.empty(), "every token is masked: nothing can be sampled");
  require(added > 0, logits.empty() ? std::string("no logits to sample from")
                                    : "no allowed token has a finite logit (all are NaN or -inf)");
  return added;
}

}  // namespace

void Sampler::collect(std::span<const float> logits, std::span<const bool> mask) {
  candidates_.clear();
  for_each_candidate(logits, mask, [&](int32_t id, float v) { candidates_.push_back({id, v}); });
}

int32_t Sampler::greedy(std::span<const float> logits, std::span<const bool> mask) {
  // The first candidate in `before` order, without building the candidate list (a 150k
  // vocabulary costs that list more than the scan). Ids come in order: ties keep the lowest.
  int32_t best = -1;
  float best_value = 0;
  for_each_candidate(logits, mask, [&](int32_t id, float v) {
    if (best < 0 || v > best_value) best = id, best_value = v;
  });
  return best;
}

void Sampler::keep_top_k() {
  auto cmp = [](const Candidate& a, const Candidate& b) {
    return before(a.value, a.id, b.value, b.id);
  };
  const size_t k =
      config_.top_k > 0 ? std::min<size_t>(config_.top_k, candidates_.size()) : candidates_.size();
  if (k < candidates_.size()) {
    std::nth_element(candidates_.begin(), candidates_.begin() + k, candidates_.end(), cmp);
    candidates_.resize(k);
  }
  std::sort(candidates_.begin(), candidates_.end(), cmp);
}

void Sampler::softmax() {
  const float max_logit = candidates_.front().value;  // sorted: the first is the largest
  double sum = 0;
  for (Candidate& c : candidates_) {
    c.value = std::exp((c.value - max_logit) / config_.temperature);
    sum += c.value;
  }
  for (Candidate& c : candidates_) c.value = static_cast<float>(c.value / sum);
  // Probabilities that underflowed to 0 could only be drawn through rounding: drop them. They
  // sit at the end (sorted), and the first is exp(0) / sum > 0.
  while (candidates_.size() > 1 && candidates_.back().value <= 0.0f) candidates_.pop_back();
}

void Sampler::keep_top_p() {
  if (config_.top_p >= 1.0f) return;
  double cumulative = 0;
  size_t keep = candidates_.size();
  for (size_t i = 0; i < candidates_.size(); ++i) {
    cumulative += candidates_[i].value;
    if (cumulative >= config_.top_p) {
      keep = i + 1;
      break;
    }
  }
  candidates_.resize(keep);
}

void Sampler::keep_min_p() {
  if (config_.min_p <= 0.0f) return;
  const float threshold = config_.min_p * candidates_.front().value;
  size_t keep = 1;
  while (keep < candidates_.size() && candidates_[keep].value >= threshold) ++keep;
  candidates_.resize(keep);
}

int32_t Sampler::draw() {
  // Renormalising is folded into the draw: the uniform is scaled by the kept mass.
  double total = 0;
  for (const Candidate& c : candidates_) total += c.value;
  const double target = rng_.next_double() * total;
  double cumulative = 0;
  for (const Candidate& c : candidates_) {
    cumulative += c.value;
    if (target < cumulative) return c.id;
  }
  return candidates_.back().id;  // target rounded up to total; the last has p > 0
}

int32_t Sampler::sample(std::span<float> logits, std::span<const int32_t> history,
                        std::span<const bool> mask) {
  penalize(config_, history, logits, window_);
  if (config_.temperature <= 0.0f) return greedy(logits, mask);
  collect(logits, mask);
  keep_top_k();
  softmax();
  keep_top_p();
  keep_min_p();
  return draw();
}

}  // namespace afm::sample
