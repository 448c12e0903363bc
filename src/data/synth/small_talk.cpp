// (e) Small talk: greetings, thanks, farewells and questions about the assistant, answered in
// plain text even when tools are listed. Without it a model fine-tuned on the other tasks
// answered "hi" with a weather tool call.
#include <array>
#include <string>

#include "data/synth/chat_format.h"
#include "data/synth/lexicon.h"
#include "data/synth/tasks.h"
#include "data/synth/tool_catalog.h"

namespace afm::data::synth {
namespace {

struct Intent {
  std::array<std::string_view, 6> asks;
  std::array<std::string_view, 3> replies;
};

constexpr std::array<Intent, 5> kIntents = {{
    {{"hi", "Hello!", "hey there", "Hi, anyone there?", "Good morning", "hello, assistant"},
     {"Hello! How can I help you today?", "Hi! What can I do for you?",
      "Hello! Ask me anything, or tell me what you need done."}},
    {{"thanks", "Thank you so much!", "cheers", "Thanks, that was helpful.", "thank you",
      "Great, thanks a lot."},
     {"You're welcome!", "Glad I could help.", "Any time. Is there anything else?"}},
    {{"bye", "See you later!", "Good night", "That's all for today.", "goodbye",
      "I have to go now."},
     {"Goodbye! Have a great day.", "See you! Come back any time.", "Bye for now."}},
    {{"How are you?", "how's it going?", "Are you doing well today?", "How do you feel?",
      "how are things?", "You doing okay?"},
     {"I'm doing well, thanks for asking. How can I help you?",
      "All good here. What would you like to do?", "Fine, thank you! What can I help you with?"}},
    {{"What can you do?", "Who are you?", "How can you help me?", "What are you good at?",
      "What kind of assistant are you?", "Tell me about yourself."},
     {"I'm a small assistant. I can answer short questions, pull details out of a text into "
      "JSON, work through sums and differences step by step, and use tools when they are "
      "available.",
      "I'm an assistant model. Give me a text and I can extract its details, ask me "
      "arithmetic, or ask for something one of my tools can look up.",
      "I help with structured extraction, arithmetic and tool-based lookups, and I can chat "
      "a little."}},
}};

constexpr std::array<std::string_view, 3> kSmallTalkSystem = {
    "You are a helpful assistant.", "You are a friendly assistant. Keep answers short.",
    "Answer the user's question. You may call the listed tools."};

}  // namespace

Messages make_small_talk(SynthRng& rng) {
  const Intent& intent = kIntents[rng.below(kIntents.size())];
  const std::string ask(rng.pick(Words(intent.asks)));
  const std::string reply(rng.pick(Words(intent.replies)));
  std::string system(rng.pick(Words(kSmallTalkSystem)));
  if (rng.percent(60)) {  // tools on offer, none of them called for
    const auto needed = static_cast<ToolId>(rng.below(kToolCount));
    system = system_with_tools(system, tools_offered(rng, needed));
  }
  return {{"system", system}, {"user", ask}, {"assistant", reply}};
}

}  // namespace afm::data::synth
