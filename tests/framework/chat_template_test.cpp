// Chat templates with tools and response formats: the afm rendering is exactly what the
// training data (src/data/synth) teaches; ChatML uses Qwen's <tool_call> blocks; Llama-3 tool
// calling is refused by name.
#include <gtest/gtest.h>

#include "base/error.h"
#include "framework/afm_prompt_format.h"
#include "framework/chat_template.h"
#include "framework/tool_grammar.h"
#include "guided/byte_matcher.h"

namespace afm {
namespace {

using Json = nlohmann::ordered_json;

const Json kTools = Json::parse(
    R"([{"name":"get_weather","description":"Weather.","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}])");

TEST(ChatTemplate, AfmRendersToolsSchemaAndCallsAsTheTrainingDataDoes) {
  const ChatTemplate t(ChatTemplateKind::kAfm);
  PromptExtras extras;
  extras.tools = kTools;
  extras.response_schema = Json::parse(R"({"type":"string"})");
  extras.response_name = "Answer";
  extras.response_description = "the answer";
  const std::vector<ChatMessage> messages = {
      {"system", "Be brief."},
      {"user", "Weather in Oslo?"},
      {"assistant", "", {ToolCall{"c1", "get_weather", Json{{"city", "Oslo"}}}}},
      {"tool", R"({"temp":3})", {}, "get_weather"},
      {"user", "Thanks"}};
  const std::string want =
      "<turn_start> system\n" + system_with_tools("Be brief.", kTools) + "<turn_end>" +
      "<turn_start> user\nWeather in Oslo?<turn_end>" +
      "<turn_start> assistant\n" + tool_call_block(Json::parse(R"([{"name":"get_weather","arguments":{"city":"Oslo"}}])")) +
      "<turn_end>" + "<turn_start> tool\n{\"temp\":3}<turn_end>" + "<turn_start> user\n" +
      user_with_response_format("Thanks", "Answer", "the answer", Json::parse(R"({"type":"string"})")) +
      "<turn_end><turn_start> assistant\n";
  EXPECT_EQ(t.render(messages, true, extras), want);
  EXPECT_EQ(t.render(messages, true, extras), [&] {
    std::string s;
    std::vector<ChatMessage> m = messages;
    m[0].content = system_with_tools("Be brief.", kTools);
    m[4].content = user_with_response_format("Thanks", "Answer", "the answer", Json::parse(R"({"type":"string"})"));
    for (const ChatMessage& x : m) s += t.render_message(x);
    return s + t.generation_prompt();
  }());
}

TEST(ChatTemplate, AddsASystemTurnForToolsWhenThereIsNone) {
  const ChatTemplate t(ChatTemplateKind::kAfm);
  PromptExtras extras;
  extras.tools = kTools;
  const std::string s = t.render({{"user", "hi"}}, false, extras);
  EXPECT_EQ(s.rfind("<turn_start> system\n" + std::string(kToolsMarker), 0), 0u) << s;
}

TEST(ChatTemplate, ChatMlUsesToolCallBlocks) {
  const ChatTemplate t(ChatTemplateKind::kChatMl);
  const auto f = t.tool_call_format();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->start_token, "<tool_call>");
  EXPECT_FALSE(f->array_of_calls);
  const std::string calls = t.render_tool_calls(
      {ToolCall{"", "a", Json{{"x", 1}}}, ToolCall{"", "b", Json::object()}});
  EXPECT_EQ(calls,
            "<tool_call>\n{\"name\":\"a\",\"arguments\":{\"x\":1}}\n</tool_call>\n"
            "<tool_call>\n{\"name\":\"b\",\"arguments\":{}}\n</tool_call>");
  PromptExtras extras;
  extras.tools = kTools;
  const std::string s = t.render({{"user", "hi"}}, true, extras);
  EXPECT_NE(s.find("<tools>"), std::string::npos);
  EXPECT_NE(s.find("\"get_weather\""), std::string::npos);
  EXPECT_EQ(t.render_message({"tool", "42", {}, "a"}),
            "<|im_start|>user\n<tool_response>\n42\n</tool_response><|im_end|>\n");
}

TEST(ChatTemplate, Llama3ToolCallsAreRefusedByName) {
  const ChatTemplate t(ChatTemplateKind::kLlama3);
  EXPECT_FALSE(t.tool_call_format());
  PromptExtras extras;
  extras.tools = kTools;
  try {
    t.render({{"user", "hi"}}, true, extras);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("llama3"), std::string::npos);
  }
}

TEST(ToolGrammar, AcceptsOnlyDeclaredToolsWithValidArguments) {
  const ChatTemplate t(ChatTemplateKind::kAfm);
  const std::vector<ChatToolSpec> tools = {{"get_weather", "", kTools[0]["parameters"]},
                                           {"noop", "", Json{{"type", "object"}, {"additionalProperties", false}}}};
  const auto g = compile_tool_call_grammar(tools, *t.tool_call_format(), "", true);
  auto body = [](const std::string& json) { return " ```function\n" + json + "```"; };
  EXPECT_TRUE(guided::ByteMatcher::matches(g, body(R"([{"name":"get_weather","arguments":{"city":"Oslo"}}])")));
  EXPECT_TRUE(guided::ByteMatcher::matches(
      g, body(R"([{"name":"noop","arguments":{}},{"name":"get_weather","arguments":{"city":"X"}}])")));
  EXPECT_FALSE(guided::ByteMatcher::matches(g, body(R"([{"name":"rm_rf","arguments":{}}])")));
  EXPECT_FALSE(guided::ByteMatcher::matches(g, body(R"([{"name":"get_weather","arguments":{}}])")));
  EXPECT_FALSE(guided::ByteMatcher::matches(g, body("[]")));
  const auto one = compile_tool_call_grammar(tools, *t.tool_call_format(), "noop", false);
  EXPECT_TRUE(guided::ByteMatcher::matches(one, body(R"([{"name":"noop","arguments":{}}])")));
  EXPECT_FALSE(guided::ByteMatcher::matches(
      one, body(R"([{"name":"noop","arguments":{}},{"name":"noop","arguments":{}}])")));
  const std::vector<ToolCall> parsed =
      parse_tool_call_body(body(R"([{"name":"noop","arguments":{}}])"), *t.tool_call_format());
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed[0].name, "noop");
  EXPECT_THROW(parse_tool_call_body("[]", *t.tool_call_format()), Error);
}

}  // namespace
}  // namespace afm
