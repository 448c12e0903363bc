// The conversation behind `afm chat`: its messages, the KV cache holding a prefix of their
// rendering in the model's chat template, and what happens when the context is full.
//
// Each turn re-renders the conversation and evaluates only the tokens after the prefix the
// cache already holds (sampled reply tokens are kept as sampled, so the prefix survives).
// The cache never holds a token it has not evaluated: `cached_` is exactly its contents.
//
// Context full: without context shift, a message (or a message and its reply) that does not
// fit is a ContextFullError and the conversation is left as it was. With context shift, the
// oldest turns after the system message are dropped until the conversation fills at most half
// of the context (then it is evaluated again from the system message on), as llama.cpp's
// context shift does; only a message whose own turn does not fit is an error.
// Not thread-safe: one turn at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "engine_options.h"
#include "framework/chat_template.h"
#include "model/context.h"
#include "sample/sampler.h"

namespace afm::cli {

// "context full: N of M tokens; /reset or raise --ctx-size": the conversation needed N tokens
// and the context holds M.
class ContextFullError : public Error {
 public:
  ContextFullError(int64_t needed, int64_t n_ctx, bool context_shift);
  int64_t needed() const { return needed_; }
  int64_t n_ctx() const { return n_ctx_; }

 private:
  int64_t needed_, n_ctx_;
};

struct ConversationOptions {
  std::string system;       // system instructions; kept by reset() and by context shift
  int64_t max_tokens = -1;  // per reply; < 0: until the end of the turn
  bool context_shift = false;
  SpeculationConfig speculation;  // speculative decoding (same replies; none when disabled)
};

class ChatConversation {
 public:
  ChatConversation(const Engine& engine, ChatTemplate chat_template,
                   const model::ContextOptions& context_options,
                   const sample::SamplerConfig& sampling, ConversationOptions options);

  // One turn: the reply's text (tool-call blocks as the model wrote them). on_token gets each
  // reply token as it is sampled (not the end-of-turn token). Throws ContextFullError as
  // described above; the conversation then stays as it was before the call.
  std::string reply(const std::string& message, const std::function<void(int32_t)>& on_token);
  // Forgets every turn (the system message stays).
  void reset();

  int64_t n_ctx() const { return context_.n_ctx(); }

 private:
  std::vector<int32_t> render(const std::vector<ChatMessage>& messages) const;
  // Makes the context hold exactly `tokens` (evaluating what it lacks); returns the logits
  // after the last one.
  std::span<const float> prefill(const std::vector<int32_t>& tokens);
  // Context shift: drops the oldest turns of `messages` (never the system message or the last
  // user message) until prompt + reply fill at most half of the context. Returns false when
  // nothing could be dropped. `prompt` becomes the rendering of the shorter conversation.
  bool drop_oldest_turns(std::vector<ChatMessage>& messages, std::vector<int32_t>& prompt,
                         size_t reply_tokens) const;
  bool is_stop(int32_t token) const;

  const tokenizer::Tokenizer& tokenizer_;
  ChatTemplate template_;
  model::Context context_;
  std::unique_ptr<Speculator> speculator_;  // null without speculation
  sample::Sampler sampler_;
  std::vector<int32_t> stops_;
  ConversationOptions options_;
  std::vector<ChatMessage> messages_;
  std::vector<int32_t> cached_;  // the tokens whose K/V the context holds, in order
};

}  // namespace afm::cli
