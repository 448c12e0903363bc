#include "sample/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/error.h"

namespace afm::sample {

SampledLogprobs logprobs_at(std::span<const float> logits, int32_t token, int top_n) {
  AFM_CHECK(token >= 0 && static_cast<size_t>(token) < logits.size() && top_n >= 0);
  const float max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
  const double log_z = static_cast<double>(max) + std::log(sum);
  const auto logprob = [&](size_t i) {
    return static_cast<float>(static_cast<double>(logits[i]) - log_z);
  };
  SampledLogprobs out;
  out.chosen = {token, logprob(static_cast<size_t>(token))};
  const size_t n = std::min(static_cast<size_t>(top_n), logits.size());
  if (n == 0) return out;  // no index of the whole vocabulary to build
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end(),
                    [&](int32_t a, int32_t b) {
                      return logits[static_cast<size_t>(a)] != logits[static_cast<size_t>(b)]
                                 ? logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)]
                                 : a < b;
                    });
  for (size_t i = 0; i < n; ++i) out.top.push_back({ids[i], logprob(static_cast<size_t>(ids[i]))});
  return out;
}

}  // namespace afm::sample
