// A reward model at run time (docs/rl.md "Reward model"): an afm model trained by
// `afm train reward` whose output row `afm.reward.score_token` (a GGUF key) is a scalar head:
// the score of a reply is that row's logit after the reply's last token (its end of turn), so
// any afm runtime scores with one forward pass and no new tensor kind.
//
// score() renders prompt + reply exactly as training renders them
// (framework/training_example.h) and returns the raw score; reward() is its logistic, in
// (0, 1), the scale rule rewards use.
//
// Errors: Error(kNotFound) when the file has no `afm.reward.score_token` (not a reward model),
// kUnsupported without a chat template, kInvalidArgument for a score token outside the
// vocabulary. Thread safety: score() may run on many threads (each call has its own context).
#pragma once

#include <memory>
#include <string>

#include "framework/chat_service.h"
#include "framework/loaded_model.h"

namespace afm::rl {

inline constexpr const char* kRewardScoreTokenKey = "afm.reward.score_token";

class RewardModel {
 public:
  RewardModel(const std::string& path, int threads);

  double score(const ChatRequest& prompt, const ChatMessage& reply) const;
  double reward(const ChatRequest& prompt, const ChatMessage& reply) const;
  int32_t score_token() const { return score_token_; }

 private:
  std::shared_ptr<const LoadedModel> model_;
  int32_t score_token_ = 0;
  int threads_ = 1;
};

}  // namespace afm::rl
