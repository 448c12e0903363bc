// ChatService (the engine behind `afm serve`) on the shipped default model: tool_choice modes,
// response schemas, prefix reuse across requests, cancellation, concurrency and errors.
#include "framework/chat_service.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/error.h"
#include "framework/sequence.h"
#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"

namespace afm {
namespace {

using Json = nlohmann::ordered_json;

std::shared_ptr<const LoadedModel> model() {
  static const auto m = LoadedModel::load("models/afm-device-21m.gguf");
  return m;
}

ChatToolSpec weather_tool() {
  return {"get_weather", "Current weather conditions for a city.",
          Json::parse(R"({"type":"object","properties":{"city":{"type":"string"},
            "unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"],
            "additionalProperties":false})")};
}

ChatToolSpec calculator_tool() {
  return {"calculate", "Evaluates an arithmetic expression.",
          Json::parse(R"({"type":"object","properties":{"expression":{"type":"string"}},
            "required":["expression"],"additionalProperties":false})")};
}

ChatRequest request(const std::string& user) {
  ChatRequest r;
  r.messages = {{"system", "You are a helpful assistant. Use the tools when they help answer the user."},
                {"user", user}};
  r.sampling.temperature = 0;  // greedy
  r.max_tokens = 64;
  return r;
}

bool valid(const Json& schema, const Json& value) {
  return guided::ByteMatcher::matches(guided::compile_json_schema(schema), value.dump());
}

TEST(ChatService, RequiredToolChoiceGivesValidCalls) {
  ChatService service(model(), {});
  ChatRequest r = request("How much is 12 times 7?");
  r.tools = {weather_tool(), calculator_tool()};
  r.tool_choice = ToolChoice::kRequired;
  const ChatResult out = service.complete(r);
  EXPECT_EQ(out.finish_reason, "tool_calls");
  ASSERT_FALSE(out.tool_calls.empty());
  for (const ToolCall& c : out.tool_calls) {
    EXPECT_EQ(c.id.rfind("call_", 0), 0u);
    const ChatToolSpec& spec = c.name == "get_weather" ? r.tools[0] : r.tools[1];
    ASSERT_TRUE(c.name == "get_weather" || c.name == "calculate") << c.name;
    EXPECT_TRUE(valid(spec.parameters, c.arguments)) << c.arguments.dump();
  }
}

TEST(ChatService, NamedToolChoiceCallsThatToolOnly) {
  ChatService service(model(), {});
  ChatRequest r = request("What's the weather like in Oslo right now?");
  r.tools = {weather_tool(), calculator_tool()};
  r.tool_choice = ToolChoice::kNamed;
  r.tool_name = "calculate";
  r.parallel_tool_calls = false;
  const ChatResult out = service.complete(r);
  ASSERT_EQ(out.tool_calls.size(), 1u);
  EXPECT_EQ(out.tool_calls[0].name, "calculate");
  EXPECT_TRUE(valid(r.tools[1].parameters, out.tool_calls[0].arguments));
}

TEST(ChatService, NoneToolChoiceAnswersInText) {
  ChatService service(model(), {});
  ChatRequest r = request("What's the weather like in Oslo right now?");
  r.tools = {weather_tool()};
  r.tool_choice = ToolChoice::kNone;
  const ChatResult out = service.complete(r);
  EXPECT_TRUE(out.tool_calls.empty());
  EXPECT_NE(out.finish_reason, "tool_calls");
  EXPECT_EQ(out.text.find("<executable_start>"), std::string::npos);
}

TEST(ChatService, ResponseSchemaGivesValidJsonAndStreamsIt) {
  ChatService service(model(), {});
  ChatRequest r = request("Ana Lima is a 34-year-old nurse who lives in Lisbon.");
  r.messages[0].content = "You are a careful assistant that extracts structured data from text.";
  r.response_schema = Json::parse(R"({"type":"object","properties":{"name":{"type":"string"},
      "age":{"type":"integer","minimum":0,"maximum":150}},"required":["name","age"],
      "additionalProperties":false})");
  std::string streamed;
  const ChatResult out = service.complete(r, [&](const ChatDelta& d) {
    streamed += d.text;
    return true;
  });
  EXPECT_EQ(out.finish_reason, "stop");
  EXPECT_EQ(streamed, out.text);
  EXPECT_TRUE(valid(*r.response_schema, Json::parse(out.text))) << out.text;
}

TEST(ChatService, AFollowUpRequestReusesTheCachedPrefix) {
  ChatService service(model(), {});
  ChatRequest r = request("Name a color.");
  r.max_tokens = 8;
  const ChatResult first = service.complete(r);
  r.messages.push_back({"assistant", first.text});
  r.messages.push_back({"user", "Another one?"});
  const ChatResult second = service.complete(r);
  EXPECT_GT(second.cached_prompt_tokens, first.prompt_tokens / 2);
  EXPECT_LT(second.cached_prompt_tokens, second.prompt_tokens);
}

// Two slots, two conversations that share only the template's preamble: the second takes the
// empty slot instead of the first conversation's, so both follow-ups find their caches.
TEST(ChatService, ANewConversationTakesAnEmptySlotBeforeEvictingAnother) {
  ChatServiceOptions o;
  o.n_slots = 2;
  ChatService service(model(), o);
  ChatRequest a = request("Name a color and say why you like it.");
  ChatRequest b = request("Which animals live in the desert?");
  b.messages[0].content = "You answer questions about nature.";
  a.max_tokens = b.max_tokens = 8;
  for (ChatRequest* r : {&a, &b}) {
    const ChatResult first = service.complete(*r);
    r->messages.push_back({"assistant", first.text});
    r->messages.push_back({"user", "And then?"});
  }
  for (const ChatRequest* r : {&a, &b}) {
    const ChatResult next = service.complete(*r);
    EXPECT_GT(next.cached_prompt_tokens, next.prompt_tokens / 2) << r->messages[1].content;
  }
}

TEST(ChatService, ReturningFalseFromOnDeltaCancels) {
  ChatService service(model(), {});
  ChatRequest r = request("Ana Lima is a 34-year-old nurse who lives in Lisbon.");
  r.response_schema = Json::parse(R"({"type":"object","properties":{"name":{"type":"string"},
      "city":{"type":"string"}},"required":["name","city"],"additionalProperties":false})");
  r.max_tokens = 200;
  int deltas = 0;
  const ChatResult out = service.complete(r, [&](const ChatDelta&) { return ++deltas < 3; });
  EXPECT_EQ(out.finish_reason, "cancelled") << out.text;
  EXPECT_EQ(deltas, 3);
}

TEST(ChatService, ConcurrentRequestsQueueOnOneSlotAndMatchSequentialResults) {
  ChatService service(model(), {.n_slots = 1, .n_ctx = 512, .n_threads = 1});
  ChatRequest a = request("Name a fruit."), b = request("Name an animal.");
  a.max_tokens = b.max_tokens = 12;
  const std::string want_a = service.complete(a).text, want_b = service.complete(b).text;
  std::string got_a, got_b;
  std::thread ta([&] { got_a = service.complete(a).text; });
  std::thread tb([&] { got_b = service.complete(b).text; });
  ta.join();
  tb.join();
  EXPECT_EQ(got_a, want_a);
  EXPECT_EQ(got_b, want_b);
}

TEST(ChatService, LogprobsCoverTheAnswerTokenByTokenAndGreedyPicksTheTopOne) {
  ChatService service(model(), {});
  ChatRequest r = request("What is 12 + 7?");
  r.logprobs_top = 3;
  const ChatResult out = service.complete(r);
  ASSERT_FALSE(out.logprobs.empty());
  std::string bytes;
  for (const ChatLogprob& l : out.logprobs) {
    bytes += l.chosen.bytes;
    ASSERT_EQ(l.top.size(), 3u);
    EXPECT_EQ(l.top[0].bytes, l.chosen.bytes);  // greedy: the most likely token
    EXPECT_FLOAT_EQ(l.top[0].logprob, l.chosen.logprob);
    EXPECT_LE(l.chosen.logprob, 0.0f);
    EXPECT_GE(l.top[0].logprob, l.top[1].logprob);
  }
  EXPECT_EQ(bytes, out.text);
  // Not asked for: none computed.
  EXPECT_TRUE(service.complete(request("What is 12 + 7?")).logprobs.empty());
  // A tool call is not answer text: no entries for its tokens.
  ChatRequest t = request("What's the weather in Oslo?");
  t.tools = {weather_tool()};
  t.tool_choice = ToolChoice::kRequired;
  t.logprobs_top = 0;
  const ChatResult call = service.complete(t);
  ASSERT_FALSE(call.tool_calls.empty());
  EXPECT_TRUE(call.logprobs.empty());
}

// A seeded request repeated must sample the same answer whether its prompt was cached or not:
// the logits after a prompt are bitwise the same cold and fully cached. (A partly cached
// prompt is evaluated in a batch of another size, whose rows may round differently.)
TEST(Sequence, PromptLogitsDoNotDependOnWhetherThePromptWasCached) {
  const tokenizer::Tokenizer& tok = model()->tokenizer();
  const std::vector<int32_t> prompt =
      tok.encode("The weather in Oslo is cold and the sky is grey today.");
  ASSERT_GT(prompt.size(), 8u);
  const model::ContextOptions options{.n_ctx = 256, .n_threads = 1};
  const auto logits_after = [&](const std::vector<std::vector<int32_t>>& before) {
    Sequence seq(model()->weights(), options);
    for (const auto& p : before) seq.prefill(p);
    const std::span<const float> l = seq.prefill(prompt);
    return std::vector<float>(l.begin(), l.end());
  };
  const std::vector<float> cold = logits_after({});
  EXPECT_EQ(logits_after({prompt}), cold);  // everything cached: the repeated request
  EXPECT_EQ(logits_after({prompt, prompt}), cold);
}

TEST(ChatService, BadRequestsAreTypedErrorsNamingTheProblem) {
  ChatService service(model(), {.n_ctx = 64});
  auto message_of = [&](const ChatRequest& r, ErrorCode want) {
    try {
      service.complete(r);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), want) << e.what();
      return std::string(e.what());
    }
    ADD_FAILURE() << "no error";
    return std::string();
  };
  ChatRequest bad_role = request("hi");
  bad_role.messages[1].role = "narrator";
  EXPECT_NE(message_of(bad_role, ErrorCode::kInvalidArgument).find("messages[1].role"), std::string::npos);
  ChatRequest named = request("hi");
  named.tools = {weather_tool()};
  named.tool_choice = ToolChoice::kNamed;
  named.tool_name = "launch_rocket";
  EXPECT_NE(message_of(named, ErrorCode::kInvalidArgument).find("launch_rocket"), std::string::npos);
  ChatRequest keyword = request("hi");
  keyword.response_schema = Json::parse(R"({"type":"object","propertyNames":{"minProperties":1}})");
  EXPECT_NE(message_of(keyword, ErrorCode::kUnsupported).find("propertyNames"), std::string::npos);
  ChatRequest tool_keyword = request("hi");
  tool_keyword.tools = {{"t", "", Json::parse(R"({"type":"string","format":"idn-hostname"})")}};
  EXPECT_NE(message_of(tool_keyword, ErrorCode::kUnsupported).find("tool 't'"), std::string::npos);
  ChatRequest too_long = request(std::string(600, 'a'));
  EXPECT_NE(message_of(too_long, ErrorCode::kInvalidArgument).find("context"), std::string::npos);
}

}  // namespace
}  // namespace afm
