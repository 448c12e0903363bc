#include "sample/sampler.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <unordered_map>

#include "base/error.h"

namespace afm::sample {
namespace {

// Higher value first; equal values: lower id first (deterministic order).
bool before(float va, int32_t ia, float vb, int32_t ib) { return va > vb || (va == vb && ia < ib); }

void require(bool ok, const std::string& message) {
  if (!ok) throw_error(ErrorCode::kInvalidArgument, message);
}

}  // namespace

void validate(const SamplerConfig& c) {
  require(std::isfinite(c.temperature), "temperature must be a finite number");
  require(c.top_p > 0 && c.top_p <= 1, "top_p must be in (0, 1], got " + std::to_string(c.top_p));
  require(c.min_p >= 0 && c.min_p <= 1, "min_p must be in [0, 1], got " + std::to_string(c.min_p));
  require(c.repeat_penalty > 0 && std::isfinite(c.repeat_penalty),
          "repeat_penalty must be > 0, got " + std::to_string(c.repeat_penalty));
  require(c.repeat_last_n >= -1, "repeat_last_n must be >= -1");
  require(std::isfinite(c.presence_penalty), "presence_penalty must be finite");
  require(std::isfinite(c.frequency_penalty), "frequency_penalty must be finite");
}

void apply_penalties(const SamplerConfig& c, std::span<const int32_t> history,
                     std::span<float> logits) {
  const bool active = c.repeat_penalty != 1.0f || c.presence_penalty != 0.0f ||
                      c.frequency_penalty != 0.0f;
  if (!active || c.repeat_last_n == 0) return;
  const size_t window = c.repeat_last_n < 0 ? history.size()
                                            : std::min<size_t>(history.size(), c.repeat_last_n);
  std::unordered_map<int32_t, int> counts;
  for (int32_t id : history.subspan(history.size() - window)) {
    if (id >= 0 && static_cast<size_t>(id) < logits.size()) ++counts[id];
  }
  for (const auto& [id, count] : counts) {
    float& l = logits[id];
    l = l > 0 ? l / c.repeat_penalty : l * c.repeat_penalty;
    l -= c.presence_penalty + c.frequency_penalty * static_cast<float>(count);
  }
}

Sampler::Sampler(const SamplerConfig& config) : config_(config), rng_(config.seed) {
  validate(config);
}

void Sampler::collect(std::span<const float> logits, std::span<const bool> mask) {
  candidates_.clear();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!mask.empty() && (i >= mask.size() || !mask[i])) continue;
    if (std::isnan(logits[i]) || logits[i] == -INFINITY) continue;
    // +inf would turn the softmax into NaN: the largest finite value ranks it first instead.
    candidates_.push_back({static_cast<int32_t>(i), std::min(logits[i], FLT_MAX)});
  }
  require(!candidates_.empty(), mask.empty() ? "no token has a finite logit"
                                             : "every token is masked: nothing can be sampled");
}

void Sampler::keep_top_k() {
  auto cmp = [](const Candidate& a, const Candidate& b) { return before(a.value, a.id, b.value, b.id); };
  const size_t k = config_.top_k > 0 ? std::min<size_t>(config_.top_k, candidates_.size())
                                     : candidates_.size();
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
  double total = 0;
  for (const Candidate& c : candidates_) total += c.value;
  const double target = rng_.next_double() * total;
  double cumulative = 0;
  for (const Candidate& c : candidates_) {
    cumulative += c.value;
    if (target < cumulative) return c.id;
  }
  return candidates_.back().id;
}

int32_t Sampler::sample(std::span<float> logits, std::span<const int32_t> history,
                        std::span<const bool> mask) {
  apply_penalties(config_, history, logits);
  collect(logits, mask);
  if (config_.temperature <= 0.0f) {
    const auto best = std::min_element(candidates_.begin(), candidates_.end(),
                                       [](const Candidate& a, const Candidate& b) {
                                         return before(a.value, a.id, b.value, b.id);
                                       });
    return best->id;
  }
  keep_top_k();
  softmax();
  keep_top_p();
  keep_min_p();
  return draw();
}

}  // namespace afm::sample
