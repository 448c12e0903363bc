#include "rl/reward_model.h"

#include <cmath>

#include "base/error.h"
#include "framework/training_example.h"
#include "model/context.h"

namespace afm::rl {

RewardModel::RewardModel(const std::string& path, int threads)
    : model_(LoadedModel::load(path)), threads_(threads) {
  const gguf::File& file = model_->weights()->file();
  if (!file.has(kRewardScoreTokenKey))
    throw_error(ErrorCode::kNotFound, path + " is not a reward model (no " +
                                          std::string(kRewardScoreTokenKey) +
                                          "; `afm train reward` writes one)");
  const uint32_t token = file.get_u32(kRewardScoreTokenKey);
  if (token >= static_cast<uint32_t>(model_->weights()->hparams().n_vocab))
    throw_error(ErrorCode::kInvalidArgument, path + ": the score token is outside the vocabulary");
  score_token_ = static_cast<int32_t>(token);
  if (!model_->chat_template())
    throw_error(ErrorCode::kUnsupported, path + ": " + model_->unavailable_reason());
}

double RewardModel::score(const ChatRequest& prompt, const ChatMessage& reply) const {
  ChatRequest conversation = prompt;
  conversation.messages.push_back(reply);
  const TrainingExample e =
      render_training_example(*model_->chat_template(), model_->tokenizer(), conversation);
  model::Context context(model_->weights(),
                         {.n_ctx = static_cast<int64_t>(e.tokens.size()), .n_threads = threads_});
  const std::span<const float> logits = context.eval(e.tokens);
  return logits[static_cast<size_t>(score_token_)];
}

double RewardModel::reward(const ChatRequest& prompt, const ChatMessage& reply) const {
  return 1.0 / (1.0 + std::exp(-score(prompt, reply)));
}

}  // namespace afm::rl
