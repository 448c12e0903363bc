// The text-completions request parser (prompt forms, defaults, errors naming the parameter)
// and serializer (OpenAI's legacy logprobs object: null for an unscored first token, "bytes:"
// for partial UTF-8 tokens, text_offset in code points, echo).
#include "server/text_completion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace afm::server {
namespace {

using Json = nlohmann::ordered_json;

ParsedTextRequest parse_text(const std::string& body) {
  return parse_text_completion_request(body, 7);
}

ApiError text_error_of(const std::string& body) {
  try {
    parse_text(body);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "parsed: " << body;
  return {};
}

TEST(TextCompletionRequest, PromptFormsAndDefaults) {
  ParsedTextRequest t = parse_text(R"({"model": "m", "prompt": "Hello"})");
  ASSERT_TRUE(t.request.chat.text_prompt);
  EXPECT_EQ(t.request.chat.text_prompt->text, "Hello");
  EXPECT_EQ(t.request.chat.max_tokens, 16);  // OpenAI's default
  EXPECT_EQ(t.request.chat.logprobs_top, -1);
  EXPECT_EQ(t.request.chat.text_prompt->logprobs_top, -1);
  EXPECT_FALSE(t.echo);
  EXPECT_EQ(t.request.chat.sampling.temperature, 1.0f);
  EXPECT_EQ(parse_text(R"({"prompt": [1, 2, 3]})").request.chat.text_prompt->tokens,
            (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(parse_text(R"({"prompt": [[4, 5]]})").request.chat.text_prompt->tokens,
            (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(parse_text(R"({"prompt": ["x"]})").request.chat.text_prompt->text, "x");
  EXPECT_EQ(parse_text(R"({"prompt": ""})").request.chat.text_prompt->text, "");
}

TEST(TextCompletionRequest, EchoWithLogprobsScoresThePrompt) {
  ParsedTextRequest t = parse_text(
      R"({"prompt": [1, 2], "echo": true, "logprobs": 5, "max_tokens": 0, "temperature": 0})");
  EXPECT_TRUE(t.echo);
  EXPECT_EQ(t.request.chat.max_tokens, 0);
  EXPECT_EQ(t.request.chat.logprobs_top, 5);
  EXPECT_EQ(t.request.chat.text_prompt->logprobs_top, 5);
  // Without echo the prompt is not scored.
  EXPECT_EQ(parse_text(R"({"prompt": "a", "logprobs": 1})").request.chat.text_prompt->logprobs_top,
            -1);
}

TEST(TextCompletionRequest, ErrorsNameTheParameter) {
  EXPECT_EQ(text_error_of(R"({"model": "m"})").code, "missing_required_parameter");
  EXPECT_EQ(text_error_of(R"({"prompt": 3})").param, "prompt");
  EXPECT_EQ(text_error_of(R"({"prompt": []})").param, "prompt");
  EXPECT_EQ(text_error_of(R"({"prompt": [[]]})").param, "prompt[0]");
  EXPECT_EQ(text_error_of(R"({"prompt": ["a", "b"]})").code, "unsupported_parameter");
  EXPECT_EQ(text_error_of(R"({"prompt": [1, "a"]})").param, "prompt[1]");
  EXPECT_EQ(text_error_of(R"({"prompt": [1, 1.5]})").param, "prompt[1]");
  EXPECT_EQ(text_error_of(R"({"prompt": [[1, -1]]})").param, "prompt[0][1]");
  EXPECT_EQ(text_error_of(R"({"prompt": [4294967296]})").param, "prompt[0]");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "max_tokens": -1})").param, "max_tokens");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "logprobs": 21})").param, "logprobs");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "logprobs": true})").param, "logprobs");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "echo": true, "stream": true})").param, "echo");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "suffix": "b"})").param, "suffix");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "best_of": 3})").param, "best_of");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "n": 2})").param, "n");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "temperature": 3})").param, "temperature");
  EXPECT_EQ(text_error_of(R"({"prompt": "a", "stream_options": {}})").param, "stream_options");
  EXPECT_EQ(text_error_of("[1]").param, "body");
}

ChatLogprob entry(std::string bytes, float logprob, std::vector<ChatTokenLogprob> top = {}) {
  return ChatLogprob{{std::move(bytes), logprob}, std::move(top)};
}

TEST(TextCompletionResponse, EchoedPromptAndLegacyLogprobs) {
  ChatResult r;
  r.prompt_text = "h\xC3\xA9y";
  r.prompt_logprobs = {entry("h\xC3", std::numeric_limits<float>::quiet_NaN()),
                       entry("\xA9y", -1.5f, {{"\xA9y", -1.5f}, {"z", -2.0f}})};
  r.text = " ok";
  r.logprobs = {entry(" ok", -0.25f, {{" ok", -0.25f}})};
  r.finish_reason = "length";
  r.prompt_tokens = 2;
  r.completion_tokens = 1;
  const Json j = text_completion_json({"cmpl-x", 5, "m"}, r, true, true);
  EXPECT_EQ(j["object"], "text_completion");
  const Json& c = j["choices"][0];
  EXPECT_EQ(c["text"], "h\xC3\xA9y ok");
  EXPECT_EQ(c["finish_reason"], "length");
  const Json& lp = c["logprobs"];
  EXPECT_EQ(lp["tokens"], Json::parse(R"(["bytes:\\x68\\xc3", "bytes:\\xa9\\x79", " ok"])"));
  EXPECT_TRUE(lp["token_logprobs"][0].is_null());
  EXPECT_TRUE(lp["top_logprobs"][0].is_null());
  EXPECT_EQ(lp["token_logprobs"][1], -1.5f);
  EXPECT_EQ(lp["top_logprobs"][1].size(), 2u);
  EXPECT_EQ(lp["top_logprobs"][2][" ok"], -0.25f);
  // "h" and the lead byte of "é" begin in the first token, "y" in the second: "héy ok".
  EXPECT_EQ(lp["text_offset"], Json::parse("[0, 2, 3]"));
  EXPECT_EQ(j["usage"]["total_tokens"], 3);
  // The token that ended the text is reported after the answer's tokens.
  r.end_logprob = entry("<end>", -0.5f);
  const Json ended = text_completion_json({"cmpl-x", 5, "m"}, r, false, true);
  EXPECT_EQ(ended["choices"][0]["logprobs"]["tokens"], Json::parse(R"([" ok", "<end>"])"));
  EXPECT_EQ(ended["choices"][0]["logprobs"]["text_offset"], Json::parse("[0, 3]"));
  EXPECT_EQ(ended["choices"][0]["text"], " ok");  // its text is not part of the answer
  // Without echo: the answer only; without logprobs: null.
  const Json plain = text_completion_json({"cmpl-x", 5, "m"}, r, false, false);
  EXPECT_EQ(plain["choices"][0]["text"], " ok");
  EXPECT_TRUE(plain["choices"][0]["logprobs"].is_null());
}

TEST(TextCompletionResponse, StreamCarriesOffsetsAcrossChunks) {
  TextSseEncoder enc({"cmpl-x", 5, "m"}, true, true);
  EXPECT_EQ(enc.start(), "");
  EXPECT_EQ(enc.content(""), "");
  const std::string a = enc.content("ab", {entry("ab", -1.0f)});
  const std::string b = enc.content("c", {entry("c", -2.0f)});
  const Json ja = Json::parse(a.substr(6)), jb = Json::parse(b.substr(6));
  EXPECT_EQ(ja["choices"][0]["text"], "ab");
  EXPECT_EQ(ja["choices"][0]["logprobs"]["text_offset"], Json::parse("[0]"));
  EXPECT_EQ(jb["choices"][0]["logprobs"]["text_offset"], Json::parse("[2]"));
  EXPECT_TRUE(ja["usage"].is_null());
  ChatResult r;
  r.finish_reason = "stop";
  r.completion_tokens = 2;
  const std::string end = enc.finish(r);
  EXPECT_NE(end.find(R"("finish_reason":"stop")"), std::string::npos);
  EXPECT_NE(end.find(R"("completion_tokens":2)"), std::string::npos);
  EXPECT_EQ(end.substr(end.size() - 14), "data: [DONE]\n\n");
}

}  // namespace
}  // namespace afm::server
