// render_training_example on the shipped model's template and tokenizer: the trained tokens
// are exactly each assistant turn (content or tool-call block, then its end of turn), and the
// whole token sequence is what the runtime prompts with.
#include <gtest/gtest.h>

#include "base/error.h"
#include "framework/loaded_model.h"
#include "framework/training_example.h"

namespace afm {
namespace {

using Json = nlohmann::ordered_json;

std::shared_ptr<const LoadedModel> example_model() {
  static const auto m = LoadedModel::load("models/afm-device-21m.gguf");
  return m;
}

TrainingExample render(const ChatRequest& r) {
  return render_training_example(*example_model()->chat_template(), example_model()->tokenizer(),
                                 r);
}

// The trained tokens' text, turn by turn (a new string at each untrained -> trained edge).
std::vector<std::string> trained_spans(const TrainingExample& e) {
  std::vector<std::string> spans;
  std::vector<int32_t> run;
  for (size_t i = 0; i <= e.tokens.size(); ++i) {
    if (i < e.tokens.size() && e.trained[i]) {
      run.push_back(e.tokens[i]);
    } else if (!run.empty()) {
      spans.push_back(example_model()->tokenizer().decode(run));
      run.clear();
    }
  }
  return spans;
}

TEST(TrainingExample, TrainsOnEveryAssistantTurnAndNothingElse) {
  const ChatTemplate& tmpl = *example_model()->chat_template();
  ChatRequest r;
  r.messages = {{"system", "Be brief."},
                {"user", "Name a color."},
                {"assistant", "Blue."},
                {"user", "Another one?"},
                {"assistant", "Green."}};
  const TrainingExample e = render(r);
  ASSERT_EQ(e.tokens.size(), e.trained.size());
  const std::string suffix = tmpl.assistant_suffix();
  EXPECT_EQ(trained_spans(e), (std::vector<std::string>{"Blue." + suffix, "Green." + suffix}));

  // The untrained text up to the last turn is the prompt the runtime encodes for it.
  const std::string prompt =
      tmpl.render({r.messages.begin(), r.messages.end() - 1}, true, prompt_extras(r));
  const std::vector<int32_t> prompt_ids = example_model()->tokenizer().encode(
      prompt, {.parse_special = true, .add_bos = example_model()->tokenizer().add_bos()});
  ASSERT_LE(prompt_ids.size(), e.tokens.size());
  EXPECT_EQ(std::vector<int32_t>(e.tokens.begin(), e.tokens.begin() + prompt_ids.size()),
            prompt_ids);
  EXPECT_EQ(e.trained[prompt_ids.size() - 1], 0);
  EXPECT_EQ(e.trained[prompt_ids.size()], 1);
  EXPECT_EQ(e.trained_count(), static_cast<int64_t>(std::count(e.trained.begin(), e.trained.end(), 1)));
}

TEST(TrainingExample, ToolCallsAndSchemasAreRenderedAsTheServerDoes) {
  const ChatTemplate& tmpl = *example_model()->chat_template();
  ChatRequest r;
  r.tools = {{"get_weather", "Weather for a city.",
              Json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},
                              "required":["city"]})")}};
  r.messages = {{"user", "Weather in Oslo?"},
                {"assistant", "", {{"call_1", "get_weather", Json{{"city", "Oslo"}}}}},
                {"tool", "{\"temp\": 3}", {}, "get_weather"},
                {"assistant", "It is 3 degrees in Oslo."}};
  const TrainingExample e = render(r);
  const std::vector<std::string> spans = trained_spans(e);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0], tmpl.render_tool_calls(r.messages[1].tool_calls) + tmpl.assistant_suffix());
  EXPECT_EQ(spans[1], "It is 3 degrees in Oslo." + tmpl.assistant_suffix());
  // The tool list and the tool result are context, not targets.
  const std::string all = example_model()->tokenizer().decode(e.tokens);
  EXPECT_NE(all.find("Weather for a city."), std::string::npos);
  EXPECT_NE(all.find("{\"temp\": 3}"), std::string::npos);

  ChatRequest s;
  s.response_schema = Json::parse(R"({"type":"object","properties":{"n":{"type":"integer"}}})");
  s.messages = {{"user", "A number as JSON."}, {"assistant", "{\"n\": 4}"}};
  const TrainingExample f = render(s);
  EXPECT_EQ(trained_spans(f), (std::vector<std::string>{"{\"n\": 4}" + tmpl.assistant_suffix()}));
  EXPECT_NE(example_model()->tokenizer().decode(f.tokens).find("\"integer\""), std::string::npos);
}

TEST(TrainingExample, AConversationWithoutAnAssistantTurnIsAnError) {
  ChatRequest r;
  r.messages = {{"user", "Hello?"}};
  try {
    render(r);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no assistant turn"), std::string::npos);
  }
}

}  // namespace
}  // namespace afm
