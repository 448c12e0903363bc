#include "rl/rollout.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "model/context.h"

namespace afm::rl {

namespace {

ChatServiceOptions one_slot(int threads) {
  ChatServiceOptions o;
  o.n_slots = 1;
  o.n_threads = threads;
  return o;
}

}  // namespace

Rollout::Rollout(std::shared_ptr<const LoadedModel> model, RolloutOptions options)
    : options_(options), model_(std::move(model)), service_(model_, one_slot(options.threads)) {
  if (!model_->chat_template())
    throw_error(ErrorCode::kUnsupported, model_->path() + ": " + model_->unavailable_reason());
}

void Rollout::use_policy(std::shared_ptr<const model::LoraAdapter> adapter) {
  adapter_ = {std::move(adapter), 1.0f};
}

void Rollout::set_reward_model(std::shared_ptr<const RewardModel> reward_model) {
  reward_model_ = std::move(reward_model);
}

std::shared_ptr<const RewardModel> load_reward_model(const std::string& path, int threads) {
  if (path.empty()) return nullptr;
  return std::make_shared<const RewardModel>(path, threads);
}

DrawnSample Rollout::sample(const RlTask& task, uint64_t seed) {
  ChatRequest r = task.prompt;
  r.adapter = adapter_;
  r.max_tokens = options_.max_new_tokens;
  r.sampling = {
      .temperature = options_.temperature, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = seed};
  const ChatResult reply = service_.complete(r);
  DrawnSample s;
  const ChatMessage answer("assistant", reply.text, reply.tool_calls);
  if (task.kind != RewardKind::kFreeAnswer)
    s.reward = task_reward(task, reply);
  else if (reward_model_)
    s.reward = reward_model_->reward(task.prompt, answer);
  else
    throw_error(ErrorCode::kInvalidArgument,
                "a free-answer task needs a reward model (--reward-model)");
  s.completion_tokens = reply.completion_tokens;
  ChatRequest conversation = task.prompt;
  conversation.messages.push_back(answer);
  s.example = render_training_example(*model_->chat_template(), model_->tokenizer(), conversation);
  return s;
}

std::vector<float> Rollout::behaviour_logprobs(const TrainingExample& example) const {
  const int64_t n = static_cast<int64_t>(example.tokens.size());
  model::Context context(model_->weights(), {.n_ctx = std::max<int64_t>(n, 1),
                                             .n_threads = options_.threads,
                                             .adapter = adapter_.adapter,
                                             .adapter_scale = adapter_.scale});
  // Logits after position t predict token t + 1; the last token predicts nothing.
  const std::vector<float> logits =
      context.eval_all(std::span<const int32_t>(example.tokens.data(), n - 1));
  const size_t vocab = logits.size() / static_cast<size_t>(n - 1);
  std::vector<float> out;
  for (int64_t t = 1; t < n; ++t) {
    if (!example.trained[t]) continue;
    const float* row = logits.data() + static_cast<size_t>(t - 1) * vocab;
    const float top = *std::max_element(row, row + vocab);
    double sum = 0;
    for (size_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(row[v] - top));
    out.push_back(static_cast<float>(row[example.tokens[t]] - top - std::log(sum)));
  }
  return out;
}

TrajectorySample Rollout::trajectory(const RlTask& task, uint64_t seed) {
  DrawnSample drawn = sample(task, seed);
  TrajectorySample s;
  s.tokens = drawn.example.tokens;
  for (size_t t = 1; t < s.tokens.size(); ++t) {
    if (!drawn.example.trained[t]) continue;
    if (!s.trained.empty() && s.trained.back().second == static_cast<int64_t>(t))
      ++s.trained.back().second;
    else
      s.trained.emplace_back(t, t + 1);
  }
  s.behaviour = behaviour_logprobs(drawn.example);
  s.reward = drawn.reward;
  s.completion_tokens = drawn.completion_tokens;
  return s;
}

}  // namespace afm::rl
