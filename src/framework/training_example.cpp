#include "framework/training_example.h"

#include <string>

#include "base/error.h"

namespace afm {
namespace {

// Index of the last user turn, or -1.
int64_t last_user_turn(const std::vector<ChatMessage>& messages) {
  for (size_t i = messages.size(); i-- > 0;) {
    if (messages[i].role == "user") return static_cast<int64_t>(i);
  }
  return -1;
}

// Appends the ids of `text` with `trained` marks; the first piece gets the BOS if the model
// wants one.
void append(const tokenizer::Tokenizer& tok, const std::string& text, bool trained,
            TrainingExample& out) {
  if (text.empty()) return;
  const bool bos = out.tokens.empty() && tok.add_bos();
  const std::vector<int32_t> ids = tok.encode(text, {.parse_special = true, .add_bos = bos});
  out.tokens.insert(out.tokens.end(), ids.begin(), ids.end());
  out.trained.insert(out.trained.end(), ids.size(), trained ? 1 : 0);
}

[[noreturn]] void not_incremental(size_t turn) {
  throw_error(ErrorCode::kInvalidArgument,
              "the chat template does not render the conversation up to turn " +
                  std::to_string(turn) +
                  " as a prefix of the whole conversation, so the assistant's tokens cannot be "
                  "told apart");
}

}  // namespace

int64_t TrainingExample::trained_count() const {
  int64_t n = 0;
  for (uint8_t t : trained) n += t;
  return n;
}

TrainingExample render_training_example(const ChatTemplate& tmpl,
                                        const tokenizer::Tokenizer& tokenizer,
                                        const ChatRequest& request) {
  const std::vector<ChatMessage>& messages = request.messages;
  const PromptExtras extras = prompt_extras(request);
  // The response format is shown with the last user turn of the whole conversation, so a
  // prefix that ends before that turn is rendered without it.
  PromptExtras early = extras;
  early.response_schema.reset();
  const int64_t last_user = last_user_turn(messages);
  const std::string full = tmpl.render(messages, false, extras);

  TrainingExample out;
  size_t done = 0;  // characters of `full` already tokenized
  for (size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role != "assistant") continue;
    const std::vector<ChatMessage> before(messages.begin(), messages.begin() + i);
    const std::vector<ChatMessage> through(messages.begin(), messages.begin() + i + 1);
    const PromptExtras& e = static_cast<int64_t>(i) > last_user ? extras : early;
    const std::string prompt = tmpl.render(before, true, e);
    const std::string turn_end = tmpl.render(through, false, e);
    if (prompt.size() < done || full.compare(0, prompt.size(), prompt) != 0 ||
        turn_end.size() < prompt.size() || full.compare(0, turn_end.size(), turn_end) != 0) {
      not_incremental(i);
    }
    append(tokenizer, full.substr(done, prompt.size() - done), false, out);
    append(tokenizer, full.substr(prompt.size(), turn_end.size() - prompt.size()), true, out);
    done = turn_end.size();
  }
  if (done == 0) {
    throw_error(ErrorCode::kInvalidArgument, "the conversation has no assistant turn to train on");
  }
  append(tokenizer, full.substr(done), false, out);
  return out;
}

}  // namespace afm
