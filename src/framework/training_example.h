// A conversation as supervised fine-tuning sees it: the token ids the runtime would feed the
// model, and which of them are the assistant's (the only tokens trained on).
//
// One definition: the text comes from the model's ChatTemplate and the tool list / response
// format from prompt_extras(), exactly as ChatService renders a request, and the token ids from
// the model's tokenizer with special tokens parsed. Text before an assistant turn is tokenized
// up to the turn's generation prompt and the turn on its own, as at inference, where the prompt
// is encoded and the answer sampled after it.
//
// Trained tokens: each assistant turn's content, tool-call block and end of turn (the
// template's assistant suffix); never the system, user or tool turns, the tool list, the
// response schema or the generation prompt that opens the turn.
//
// Errors: afm::Error(kInvalidArgument) when the conversation has no assistant turn, or when the
// template renders a shorter conversation as something other than a prefix of the longer one
// (the turn boundaries would be ambiguous).
#pragma once

#include <cstdint>
#include <vector>

#include "framework/chat_service.h"
#include "framework/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace afm {

struct TrainingExample {
  std::vector<int32_t> tokens;
  std::vector<uint8_t> trained;  // per token: 1 when the model is trained to produce it
  int64_t trained_count() const;
};

// `request`: messages (ending with any role), tools and response format; sampling fields unused.
TrainingExample render_training_example(const ChatTemplate& tmpl,
                                        const tokenizer::Tokenizer& tokenizer,
                                        const ChatRequest& request);

}  // namespace afm
