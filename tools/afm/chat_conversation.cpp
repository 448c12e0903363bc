#include "chat_conversation.h"

#include <algorithm>

#include "framework/generation.h"
#include "framework/token_evaluator.h"

namespace afm::cli {
namespace {

std::string context_full_message(int64_t needed, int64_t n_ctx, bool context_shift) {
  return "context full: " + std::to_string(needed) + " of " + std::to_string(n_ctx) +
         " tokens; /reset or raise --ctx-size" + (context_shift ? "" : " (or use --context-shift)");
}

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// The first message after the system messages.
size_t first_turn(const std::vector<ChatMessage>& messages) {
  size_t i = 0;
  while (i < messages.size() && messages[i].role == "system") ++i;
  return i;
}

}  // namespace

ContextFullError::ContextFullError(int64_t needed, int64_t n_ctx, bool context_shift)
    : Error(ErrorCode::kInvalidArgument, context_full_message(needed, n_ctx, context_shift)),
      needed_(needed),
      n_ctx_(n_ctx) {}

ChatConversation::ChatConversation(const Engine& engine, ChatTemplate chat_template,
                                   const model::ContextOptions& context_options,
                                   const sample::SamplerConfig& sampling,
                                   ConversationOptions options)
    : tokenizer_(*engine.tokenizer),
      template_(std::move(chat_template)),
      context_(engine.model, context_options),
      sampler_(sampling),
      stops_(end_of_generation_tokens(tokenizer_)),
      options_(std::move(options)) {
  if (options_.speculation.enabled()) {
    check_speculation(options_.speculation, *engine.model, tokenizer_);
    model::ContextOptions draft_context = context_options;
    draft_context.n_ctx = context_.n_ctx();
    speculator_ = std::make_unique<Speculator>(options_.speculation, draft_context);
  }
  reset();
}

void ChatConversation::reset() {
  messages_.clear();
  if (!options_.system.empty()) messages_.push_back({"system", options_.system});
}

std::vector<int32_t> ChatConversation::render(const std::vector<ChatMessage>& messages) const {
  return tokenizer_.encode(template_.render(messages, true),
                           {.parse_special = true, .add_bos = tokenizer_.add_bos()});
}

std::span<const float> ChatConversation::prefill(const std::vector<int32_t>& tokens) {
  // Keep at least one token to evaluate so there are logits to sample from.
  size_t reuse = std::min(common_prefix(cached_, tokens), tokens.size() - 1);
  if (reuse < cached_.size() && static_cast<int64_t>(reuse) < context_.min_exact_truncate()) {
    reuse = 0;  // a sliding-window ring no longer holds what the reused prefix needs
  }
  context_.truncate(static_cast<int64_t>(reuse));
  cached_.resize(reuse);
  std::span<const float> logits = context_.eval(std::span<const int32_t>(tokens).subspan(reuse));
  cached_ = tokens;
  return logits;
}

bool ChatConversation::drop_oldest_turns(std::vector<ChatMessage>& messages,
                                         std::vector<int32_t>& prompt, size_t reply_tokens) const {
  const size_t target = static_cast<size_t>(n_ctx() / 2);
  bool dropped = false;
  while (prompt.size() + reply_tokens > target) {
    const size_t first = first_turn(messages);
    if (first + 1 >= messages.size()) break;  // only the current message is left
    size_t end = first + 1;
    while (end + 1 < messages.size() && messages[end].role != "user") ++end;
    messages.erase(messages.begin() + static_cast<ptrdiff_t>(first),
                   messages.begin() + static_cast<ptrdiff_t>(end));
    prompt = render(messages);
    dropped = true;
  }
  return dropped;
}

bool ChatConversation::is_stop(int32_t token) const {
  return std::find(stops_.begin(), stops_.end(), token) != stops_.end();
}

std::string ChatConversation::reply(const std::string& message,
                                    const std::function<void(int32_t)>& on_token) {
  std::vector<ChatMessage> messages = messages_;
  messages.push_back({"user", message});
  std::vector<int32_t> prompt = render(messages);
  const auto needed = [&](size_t reply) { return static_cast<int64_t>(prompt.size() + reply); };
  if (needed(0) > n_ctx() && options_.context_shift) drop_oldest_turns(messages, prompt, 0);
  if (needed(0) > n_ctx()) throw ContextFullError(needed(0), n_ctx(), options_.context_shift);

  std::vector<float> logits(context_.model().hparams().n_vocab);
  auto keep = [&](std::span<const float> out) {
    std::copy(out.begin(), out.end(), logits.begin());
  };
  keep(prefill(prompt));
  TokenEvaluator evaluator(context_, speculator_.get(), stops_);
  std::vector<int32_t> reply;
  while (options_.max_tokens < 0 || static_cast<int64_t>(reply.size()) < options_.max_tokens) {
    const int32_t token = sampler_.sample(logits, cached_);
    if (is_stop(token)) break;
    reply.push_back(token);
    if (on_token) on_token(token);
    if (static_cast<int64_t>(reply.size()) == options_.max_tokens) break;  // no need to evaluate
    if (!evaluator.full()) {
      cached_.push_back(token);
      const int64_t remaining =
          options_.max_tokens < 0 ? -1 : options_.max_tokens - static_cast<int64_t>(reply.size());
      keep(evaluator.next(token, cached_, remaining));
      continue;
    }
    // Full: the token just sampled has no room.
    evaluator.close_round();
    if (!options_.context_shift || !drop_oldest_turns(messages, prompt, reply.size()) ||
        needed(reply.size()) >= n_ctx()) {
      throw ContextFullError(needed(reply.size()), n_ctx(), options_.context_shift);
    }
    std::vector<int32_t> tokens = prompt;
    tokens.insert(tokens.end(), reply.begin(), reply.end());
    keep(prefill(tokens));
    evaluator.reset();
  }
  evaluator.close_round();
  std::string text = tokenizer_.decode(reply);
  messages.push_back({"assistant", text});
  messages_ = std::move(messages);
  return text;
}

}  // namespace afm::cli
