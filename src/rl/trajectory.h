// What a trajectory generator publishes and the policy updater consumes (docs/rl.md): one
// prompt's k samples, drawn with one policy version, as one message, so the leave-one-out
// baseline always compares samples of the same prompt and version.
//
// Contract:
// - A sample's `tokens` are the prompt and completion rendered as SFT renders conversations
//   (framework/training_example.h); `trained` lists the completion's [begin, end) spans, sorted,
//   disjoint, begin >= 1; `behaviour` holds, for every trained token in order, its
//   log-probability under the policy that sampled it (the runtime's log-softmax at temperature
//   1, no grammar mask: the quantity the updater's loss computes for the current policy).
// - encode_group() writes JSON; decode_group() reads untrusted bytes from the broker and
//   checks every rule above plus the bounds below, throwing Error(kFormat) "trajectory group:
//   ..." naming the first problem; it never crashes on any input.
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace afm::rl {

struct TrajectorySample {
  std::vector<int32_t> tokens;
  std::vector<std::pair<int64_t, int64_t>> trained;
  std::vector<float> behaviour;
  double reward = 0;
  int64_t completion_tokens = 0;  // tokens the generator sampled (for throughput)
};

struct TrajectoryGroup {
  std::string id;         // unique per group: "<generator>-<sequence>"
  int64_t version = 0;    // the policy version that sampled every sample
  int64_t generator = 0;  // which generator
  int64_t task = 0;       // index of the prompt in the prompts file
  std::string kind;       // rl::reward_kind_name of the task
  double sample_seconds = 0;
  std::vector<TrajectorySample> samples;
};

inline constexpr size_t kMaxGroupSamples = 1024;
inline constexpr size_t kMaxSampleTokens = size_t{1} << 20;

std::string encode_group(const TrajectoryGroup& group);
TrajectoryGroup decode_group(std::string_view json);

// Trained tokens of a sample (the sum of its span lengths).
int64_t trained_count(const TrajectorySample& sample);

}  // namespace afm::rl
