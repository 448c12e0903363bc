// The OpenAI request parser (valid forms, every error path names its parameter) and the
// response serializers (chat.completion, SSE chunk framing).
#include "server/openai_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace afm::server {
namespace {

using Json = nlohmann::ordered_json;

Json base() {
  return Json::parse(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}]})");
}

ParsedRequest parse(const Json& body) { return parse_chat_request_json(body, 7); }

// The ApiError a body produces (fails the test when it parses).
ApiError error_of(const Json& body) {
  try {
    parse(body);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "parsed: " << body.dump();
  return {};
}

ApiError error_with(const char* key, const Json& value) {
  Json b = base();
  b[key] = value;
  return error_of(b);
}

TEST(OpenAiRequest, MinimalRequestGetsOpenAiDefaults) {
  const ParsedRequest p = parse(base());
  EXPECT_EQ(p.model, "m");
  ASSERT_EQ(p.chat.messages.size(), 1u);
  EXPECT_EQ(p.chat.messages[0].role, "user");
  EXPECT_EQ(p.chat.messages[0].content, "hi");
  EXPECT_FALSE(p.stream);
  EXPECT_EQ(p.chat.sampling.temperature, 1.0f);
  EXPECT_EQ(p.chat.sampling.top_p, 1.0f);
  EXPECT_EQ(p.chat.sampling.top_k, 0);
  EXPECT_EQ(p.chat.sampling.min_p, 0.0f);
  EXPECT_EQ(p.chat.sampling.seed, 7u);
  EXPECT_EQ(p.chat.max_tokens, -1);
  EXPECT_FALSE(p.chat.response_schema.has_value());
  EXPECT_TRUE(p.chat.tools.empty());
}

TEST(OpenAiRequest, SamplingParameters) {
  Json b = base();
  b["temperature"] = 0;
  b["top_p"] = 0.5;
  b["seed"] = 42;
  b["max_tokens"] = 10;
  b["max_completion_tokens"] = 20;
  b["presence_penalty"] = 0.5;
  b["stream"] = true;
  b["stream_options"] = {{"include_usage", true}};
  b["stop"] = "END";
  b["user"] = "ignored";  // harmless unknown fields are ignored, as OpenAI does
  b["some_future_field"] = {1, 2};
  b["n"] = 1;
  b["logprobs"] = false;
  const ParsedRequest p = parse(b);
  EXPECT_EQ(p.chat.sampling.temperature, 0.0f);
  EXPECT_EQ(p.chat.sampling.top_p, 0.5f);
  EXPECT_EQ(p.chat.sampling.seed, 42u);
  EXPECT_EQ(p.chat.max_tokens, 20);
  EXPECT_EQ(p.chat.sampling.presence_penalty, 0.5f);
  EXPECT_TRUE(p.stream);
  EXPECT_TRUE(p.include_usage);
  EXPECT_EQ(p.stop, std::vector<std::string>{"END"});
}

TEST(OpenAiRequest, NullMeansNotGiven) {
  Json b = base();
  for (const char* k : {"temperature", "top_p", "seed", "max_tokens", "stop", "tools",
                        "tool_choice", "response_format", "n", "stream"}) {
    b[k] = nullptr;
  }
  EXPECT_EQ(parse(b).chat.sampling.temperature, 1.0f);
}

TEST(OpenAiRequest, ContentPartsSystemDeveloper) {
  Json b = base();
  b["messages"] = Json::parse(R"([
    {"role": "developer", "content": "be brief"},
    {"role": "system", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"role": "user", "content": [{"type": "text", "text": "q"}], "name": "bob"}])");
  const ParsedRequest p = parse(b);
  ASSERT_EQ(p.chat.messages.size(), 3u);
  EXPECT_EQ(p.chat.messages[0].role, "system");
  EXPECT_EQ(p.chat.messages[1].content, "a\nb");
  EXPECT_EQ(p.chat.messages[2].content, "q");
}

TEST(OpenAiRequest, ToolConversationMapsToolCallIdsToNames) {
  Json b = base();
  b["messages"] = Json::parse(R"([
    {"role": "user", "content": "weather in Paris and Rome?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_a", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}},
      {"id": "call_b", "type": "function", "function": {"name": "time", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_b", "content": "12:00"},
    {"role": "tool", "tool_call_id": "call_a", "content": "sunny"}])");
  const ParsedRequest p = parse(b);
  ASSERT_EQ(p.chat.messages.size(), 4u);
  const ChatMessage& a = p.chat.messages[1];
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0].id, "call_a");
  EXPECT_EQ(a.tool_calls[0].name, "weather");
  EXPECT_EQ(a.tool_calls[0].arguments["city"], "Paris");
  EXPECT_EQ(p.chat.messages[2].tool_name, "time");
  EXPECT_EQ(p.chat.messages[3].tool_name, "weather");
  EXPECT_EQ(p.chat.messages[3].content, "sunny");
}

TEST(OpenAiRequest, ToolsAndToolChoice) {
  Json b = base();
  b["tools"] = Json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "description": "d",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": true}},
    {"type": "function", "function": {"name": "now"}}])");
  EXPECT_EQ(parse(b).chat.tool_choice, ToolChoice::kAuto);
  const ParsedRequest p0 = parse(b);
  ASSERT_EQ(p0.chat.tools.size(), 2u);
  EXPECT_EQ(p0.chat.tools[0].description, "d");
  EXPECT_EQ(p0.chat.tools[0].parameters["properties"].begin().key(), "city");
  EXPECT_EQ(p0.chat.tools[1].parameters["additionalProperties"], false);
  b["tool_choice"] = "required";
  EXPECT_EQ(parse(b).chat.tool_choice, ToolChoice::kRequired);
  b["tool_choice"] = "none";
  EXPECT_EQ(parse(b).chat.tool_choice, ToolChoice::kNone);
  b["tool_choice"] = {{"type", "function"}, {"function", {{"name", "now"}}}};
  b["parallel_tool_calls"] = false;
  const ParsedRequest p = parse(b);
  EXPECT_EQ(p.chat.tool_choice, ToolChoice::kNamed);
  EXPECT_EQ(p.chat.tool_name, "now");
  EXPECT_FALSE(p.chat.parallel_tool_calls);
}

TEST(OpenAiRequest, ResponseFormats) {
  Json b = base();
  b["response_format"] = {{"type", "text"}};
  EXPECT_FALSE(parse(b).chat.response_schema.has_value());
  b["response_format"] = {{"type", "json_object"}};
  EXPECT_EQ(*parse(b).chat.response_schema, Json({{"type", "object"}}));
  b["response_format"] = Json::parse(R"({"type": "json_schema", "json_schema": {"name": "person",
    "strict": true, "schema": {"type": "object", "properties": {"z": {}, "a": {}}}}})");
  const ParsedRequest p = parse(b);
  EXPECT_EQ(p.chat.response_name, "person");
  // Property order is kept: the model generates properties in declaration order.
  EXPECT_EQ(p.chat.response_schema->at("properties").begin().key(), "z");
}

TEST(OpenAiRequest, MalformedJsonAndDepth) {
  for (const char* body : {"", "{", "{\"model\": }", "[1,]", "nul"}) {
    try {
      parse_chat_request(body, 0);
      ADD_FAILURE() << body;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_NE(e.message.find("could not parse the JSON"), std::string::npos);
    }
  }
  std::string deep(10000, '[');
  try {
    parse_json_body(deep + std::string(10000, ']'));
    ADD_FAILURE();
  } catch (const ApiError& e) {
    EXPECT_NE(e.message.find("nests deeper"), std::string::npos);
  }
  EXPECT_EQ(error_of(Json::array()).param, "body");
}

TEST(OpenAiRequest, WrongTypesNameTheParameter) {
  struct Case {
    const char* key;
    Json value;
  };
  const std::vector<Case> cases = {{"temperature", "hot"},
                                   {"top_p", true},
                                   {"seed", 1.5},
                                   {"max_tokens", "10"},
                                   {"stream", 1},
                                   {"messages", "hi"},
                                   {"tools", Json::object()},
                                   {"tool_choice", 3},
                                   {"response_format", "json"},
                                   {"stop", 5},
                                   {"model", 3},
                                   {"parallel_tool_calls", "yes"}};
  for (const Case& c : cases) {
    const ApiError e = error_with(c.key, c.value);
    EXPECT_EQ(e.status, 400) << c.key;
    EXPECT_EQ(e.param, c.key);
    EXPECT_EQ(e.code, "invalid_type") << c.key;
    EXPECT_NE(e.message.find(std::string("'") + c.key + "'"), std::string::npos) << e.message;
  }
}

TEST(OpenAiRequest, ValuesOutOfRange) {
  ApiError e = error_with("temperature", 3);
  EXPECT_EQ(e.message, "temperature must be in [0, 2], got 3");
  EXPECT_EQ(e.param, "temperature");
  EXPECT_EQ(error_with("top_p", 1.5).param, "top_p");
  EXPECT_EQ(error_with("frequency_penalty", -3).param, "frequency_penalty");
  EXPECT_EQ(error_with("max_tokens", 0).param, "max_tokens");
  EXPECT_EQ(error_with("max_completion_tokens", -5).param, "max_completion_tokens");
  EXPECT_EQ(error_with("stop", Json::array({"a", "b", "c", "d", "e"})).param, "stop");
  EXPECT_EQ(error_with("stop", "").param, "stop");
  EXPECT_EQ(error_with("messages", Json::array()).param, "messages");
  EXPECT_EQ(error_with("stream_options", {{"include_usage", true}}).param, "stream_options");
}

TEST(OpenAiRequest, MessageErrorsNameThePath) {
  auto with_messages = [](const char* text) {
    Json b = base();
    b["messages"] = Json::parse(text);
    return error_of(b);
  };
  EXPECT_EQ(with_messages(R"([{"role": "user", "content": "a"}, 5])").param, "messages[1]");
  EXPECT_EQ(with_messages(R"([{"content": "a"}])").param, "messages[0].role");
  ApiError e =
      with_messages(R"([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}])");
  EXPECT_EQ(e.param, "messages[1].role");
  EXPECT_NE(e.message.find("'robot'"), std::string::npos);
  EXPECT_EQ(with_messages(R"([{"role": "user"}])").code, "missing_required_parameter");
  EXPECT_EQ(with_messages(R"([{"role": "user", "content": 5}])").param, "messages[0].content");
  EXPECT_EQ(
      with_messages(R"([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}])")
          .param,
      "messages[0].content[0].type");
  EXPECT_EQ(with_messages(R"([{"role": "tool", "tool_call_id": "x", "content": "r"}])").param,
            "messages[0].tool_call_id");
  EXPECT_EQ(with_messages(R"([{"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
      "function": {"name": "f", "arguments": "not json"}}]}])")
                .param,
            "messages[0].tool_calls[0].function.arguments");
  EXPECT_EQ(with_messages(R"([{"role": "assistant"}])").param, "messages[0].content");
  EXPECT_EQ(with_messages(R"([{"role": "function", "content": "x", "name": "f"}])").code,
            "unsupported_parameter");
}

TEST(OpenAiRequest, ToolErrors) {
  const Json tool = Json::parse(R"({"type": "function", "function": {"name": "f"}})");
  EXPECT_EQ(error_with("tools", Json::array({{{"type", "code_interpreter"}}})).param,
            "tools[0].type");
  EXPECT_EQ(
      error_with("tools", Json::parse(R"([{"type": "function", "function": {"name": "a b"}}])"))
          .param,
      "tools[0].function.name");
  EXPECT_EQ(error_with("tools", Json::array({tool, tool})).param, "tools[1].function.name");
  EXPECT_EQ(
      error_with(
          "tools",
          Json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": []}}])"))
          .param,
      "tools[0].function.parameters");
  EXPECT_EQ(error_with("tool_choice", "sometimes").param, "tool_choice");
  EXPECT_EQ(error_with("tool_choice", "required").message,
            "tool_choice is only allowed when tools are specified");
  Json b = base();
  b["tools"] = Json::array({tool});
  b["tool_choice"] = {{"type", "function"}, {"function", {{"name", "g"}}}};
  EXPECT_NE(error_of(b).message.find("'g'"), std::string::npos);
}

TEST(OpenAiRequest, ResponseFormatErrors) {
  EXPECT_EQ(error_with("response_format", {{"type", "xml"}}).param, "response_format.type");
  EXPECT_EQ(error_with("response_format", {{"type", "json_schema"}}).param,
            "response_format.json_schema");
  EXPECT_EQ(error_with("response_format",
                       Json::parse(R"({"type": "json_schema", "json_schema": {"schema": {}}})"))
                .param,
            "response_format.json_schema.name");
  EXPECT_EQ(error_with("response_format",
                       Json::parse(
                           R"({"type": "json_schema", "json_schema": {"name": "x", "schema": 5}})"))
                .param,
            "response_format.json_schema.schema");
}

TEST(OpenAiRequest, UnsupportedFeaturesAreRejectedNotIgnored) {
  EXPECT_EQ(error_with("n", 2).param, "n");
  EXPECT_EQ(error_with("n", 2).code, "unsupported_parameter");
  EXPECT_EQ(error_with("logit_bias", {{"50256", -100}}).param, "logit_bias");
  EXPECT_EQ(error_with("functions", Json::array()).param, "functions");
  EXPECT_EQ(error_with("audio", {{"voice", "x"}}).param, "audio");
  EXPECT_EQ(error_with("modalities", Json::array({"text", "audio"})).param, "modalities");
  Json b = base();
  b["model"] = 3;
  EXPECT_EQ(error_of(b).param, "model");
  b.erase("model");  // optional: the server fills in its one model (HttpServerTest)
  EXPECT_EQ(parse(b).model, "");
}

TEST(OpenAiRequest, LogprobsAndTopLogprobs) {
  EXPECT_EQ(parse(base()).chat.logprobs_top, -1);  // off by default
  Json b = base();
  b["logprobs"] = true;
  EXPECT_EQ(parse(b).chat.logprobs_top, 0);
  b["top_logprobs"] = 5;
  EXPECT_EQ(parse(b).chat.logprobs_top, 5);
  b["logprobs"] = false;  // OpenAI: top_logprobs needs logprobs
  EXPECT_EQ(error_of(b).param, "top_logprobs");
  b["logprobs"] = true;
  b["top_logprobs"] = 21;
  EXPECT_EQ(error_of(b).param, "top_logprobs");
  b["top_logprobs"] = -1;
  EXPECT_EQ(error_of(b).code, "invalid_value");
  b["top_logprobs"] = 2;
  b["stream"] = true;
  EXPECT_EQ(parse(b).chat.logprobs_top, 2);
  EXPECT_EQ(error_with("logprobs", "yes").param, "logprobs");
}

TEST(OpenAiResponse, LogprobsInOpenAisShape) {
  ChatResult r;
  r.text = "h\xc3\xa9";
  r.finish_reason = "stop";
  r.logprobs = {{{"h", -0.5f}, {{"h", -0.5f}, {"x", -1.5f}}},
                {{"\xc3\xa9", -0.25f}, {{"\xc3\xa9", -0.25f}, {"\xc3", -2.0f}}}};
  const CompletionMeta meta{"chatcmpl-x", 123, "m"};
  EXPECT_TRUE(completion_json(meta, r)["choices"][0]["logprobs"].is_null());  // not asked
  const Json l = completion_json(meta, r, true)["choices"][0]["logprobs"];
  ASSERT_EQ(l["content"].size(), 2u);
  EXPECT_TRUE(l["refusal"].is_null());
  EXPECT_EQ(l["content"][0]["token"], "h");
  EXPECT_FLOAT_EQ(l["content"][0]["logprob"].get<float>(), -0.5f);
  EXPECT_EQ(l["content"][0]["bytes"], Json::array({104}));
  EXPECT_EQ(l["content"][0]["top_logprobs"][1]["token"], "x");
  EXPECT_EQ(l["content"][1]["bytes"], Json::array({0xc3, 0xa9}));
  // Part of a character: exact in "bytes"; the body still serialises (U+FFFD in "token").
  EXPECT_EQ(l["content"][1]["top_logprobs"][1]["bytes"], Json::array({0xc3}));
  EXPECT_NO_THROW((void)l.dump(-1, ' ', false, Json::error_handler_t::replace));
}

TEST(OpenAiResponse, CompletionObject) {
  ChatResult r;
  r.text = "hello";
  r.finish_reason = "stop";
  r.prompt_tokens = 10;
  r.cached_prompt_tokens = 4;
  r.completion_tokens = 2;
  const CompletionMeta meta{"chatcmpl-x", 123, "m"};
  const Json c = completion_json(meta, r);
  EXPECT_EQ(c["object"], "chat.completion");
  EXPECT_EQ(c["id"], "chatcmpl-x");
  EXPECT_EQ(c["created"], 123);
  EXPECT_EQ(c["choices"][0]["message"]["content"], "hello");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "stop");
  EXPECT_FALSE(c["choices"][0]["message"].contains("tool_calls"));
  EXPECT_EQ(c["usage"]["total_tokens"], 12);
  EXPECT_EQ(c["usage"]["prompt_tokens_details"]["cached_tokens"], 4);

  r.text.clear();
  r.finish_reason = "tool_calls";
  r.tool_calls.push_back({"call_0", "f", Json{{"a", 1}}});
  const Json t = completion_json(meta, r);
  EXPECT_TRUE(t["choices"][0]["message"]["content"].is_null());
  const Json& call = t["choices"][0]["message"]["tool_calls"][0];
  EXPECT_EQ(call["id"], "call_0");
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"]["arguments"], "{\"a\":1}");  // a JSON string, as OpenAI sends

  r.finish_reason = "cancelled";
  EXPECT_EQ(completion_json(meta, r)["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(new_completion_meta("m").id.rfind("chatcmpl-", 0), 0u);
}

// Splits an SSE stream into its data payloads, checking the framing on the way.
std::vector<std::string> sse_payloads(const std::string& stream) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < stream.size()) {
    const size_t end = stream.find("\n\n", pos);
    EXPECT_NE(end, std::string::npos) << "unterminated event";
    if (end == std::string::npos) break;
    const std::string event = stream.substr(pos, end - pos);
    EXPECT_EQ(event.rfind("data: ", 0), 0u) << event;
    EXPECT_EQ(event.find('\n'), std::string::npos) << "one line per event";
    out.push_back(event.substr(6));
    pos = end + 2;
  }
  return out;
}

TEST(OpenAiResponse, SseStreamFraming) {
  const SseEncoder enc({"chatcmpl-s", 5, "m"}, /*include_usage=*/true);
  ChatResult r;
  r.text = "Hi\nthere";
  r.finish_reason = "tool_calls";
  r.tool_calls = {{"call_0", "f", Json{{"x", "y"}}}, {"call_1", "g", Json::object()}};
  r.prompt_tokens = 3;
  r.completion_tokens = 4;
  EXPECT_EQ(enc.content(""), "");
  const std::string stream =
      enc.start() + enc.content("Hi\n") + enc.content("there") + enc.finish(r);
  const std::vector<std::string> p = sse_payloads(stream);
  ASSERT_EQ(p.size(), 8u);
  EXPECT_EQ(p.back(), "[DONE]");
  std::vector<Json> chunks;
  for (size_t i = 0; i + 1 < p.size(); ++i) chunks.push_back(Json::parse(p[i]));
  for (const Json& c : chunks) {
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_EQ(c["id"], "chatcmpl-s");
    EXPECT_TRUE(c.contains("usage"));
  }
  EXPECT_EQ(chunks[0]["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(chunks[1]["choices"][0]["delta"]["content"], "Hi\n");
  EXPECT_EQ(chunks[2]["choices"][0]["delta"]["content"], "there");
  for (int i : {3, 4}) {
    const Json& call = chunks[i]["choices"][0]["delta"]["tool_calls"][0];
    EXPECT_EQ(call["index"], i - 3);
    EXPECT_EQ(call["type"], "function");
    EXPECT_TRUE(call["function"]["arguments"].is_string());
  }
  EXPECT_EQ(chunks[3]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"],
            "{\"x\":\"y\"}");
  EXPECT_EQ(chunks[5]["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_TRUE(chunks[5]["usage"].is_null());
  EXPECT_TRUE(chunks[6]["choices"].empty());
  EXPECT_EQ(chunks[6]["usage"]["total_tokens"], 7);

  const SseEncoder plain({"chatcmpl-s", 5, "m"}, false);
  EXPECT_FALSE(Json::parse(sse_payloads(plain.start())[0]).contains("usage"));
  const std::vector<std::string> e = sse_payloads(SseEncoder::error(invalid_request("bad", "x")));
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(Json::parse(e[0])["error"]["param"], "x");
}

TEST(OpenAiResponse, InvalidUtf8IsReplacedNotThrown) {
  const SseEncoder enc({"chatcmpl-s", 5, "m"}, false);
  const std::string s = enc.content("\xff\xfe ok");
  EXPECT_NE(s.find("ok"), std::string::npos);
  EXPECT_NO_THROW(Json::parse(sse_payloads(s)[0]));
}

TEST(OpenAiResponse, StreamedLogprobsRideOnTheirContentChunks) {
  const std::vector<ChatLogprob> two = {{{"a", -0.5f}, {}}, {{"b", -1.0f}, {}}};
  const SseEncoder with({"chatcmpl-s", 5, "m"}, false, /*logprobs=*/true);
  const Json c = Json::parse(sse_payloads(with.content("ab", two))[0]);
  const Json& l = c["choices"][0]["logprobs"];
  ASSERT_EQ(l["content"].size(), 2u);
  EXPECT_EQ(l["content"][1]["token"], "b");
  EXPECT_TRUE(l["content"][1]["top_logprobs"].empty());
  EXPECT_TRUE(Json::parse(sse_payloads(with.start())[0])["choices"][0]["logprobs"].is_null());
  // Text whose tokens began in an earlier chunk: an empty list, not null.
  EXPECT_TRUE(
      Json::parse(sse_payloads(with.content("c", {}))[0])["choices"][0]["logprobs"]["content"]
          .empty());
  const SseEncoder without({"chatcmpl-s", 5, "m"}, false);
  EXPECT_TRUE(
      Json::parse(sse_payloads(without.content("ab", two))[0])["choices"][0]["logprobs"].is_null());
}

TEST(ApiErrorJson, Shape) {
  const Json j = invalid_request("m", "p", "c").to_json();
  EXPECT_EQ(j.dump(),
            R"({"error":{"message":"m","type":"invalid_request_error","param":"p","code":"c"}})");
  EXPECT_TRUE(invalid_request("m").to_json()["error"]["param"].is_null());
}

}  // namespace
}  // namespace afm::server
