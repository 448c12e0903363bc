// The /tokenize, /detokenize and /tokenizer_info bodies: both field spellings (vLLM's and
// llama-server's), their defaults for BOS, the range check on ids, and the 400s.
#include "server/tokenizer_api.h"

#include <gtest/gtest.h>

#include <string>

#include "server/api_error.h"

namespace afm::server {
namespace {

using Json = nlohmann::ordered_json;

// A stand-in tokenizer: one id per byte, BOS = 1000.
ServedTokenizer bytes_tokenizer() {
  ServedTokenizer t;
  t.encode = [](std::string_view text, bool add_bos) {
    std::vector<int32_t> ids;
    if (add_bos) ids.push_back(1000);
    for (unsigned char c : text) ids.push_back(c);
    return ids;
  };
  t.decode = [](std::span<const int32_t> ids) {
    std::string s;
    for (int32_t id : ids) s += id < 256 ? std::string(1, static_cast<char>(id)) : "<s>";
    return s;
  };
  t.vocab_size = 1001;
  t.context = 64;
  t.bos_token = "<s>";
  return t;
}

ApiError tokenizer_error_of(Json (*fn)(const ServedTokenizer&, std::string_view),
                            const std::string& body) {
  try {
    fn(bytes_tokenizer(), body);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body;
  return {};
}

TEST(TokenizerApi, TokenizeTakesBothSpellings) {
  const ServedTokenizer t = bytes_tokenizer();
  EXPECT_EQ(tokenize_response(t, R"({"prompt": "ab"})")["tokens"], Json::parse("[1000, 97, 98]"));
  EXPECT_EQ(tokenize_response(t, R"({"prompt": "ab", "add_special_tokens": false})")["tokens"],
            Json::parse("[97, 98]"));
  EXPECT_EQ(tokenize_response(t, R"({"content": "ab"})")["tokens"], Json::parse("[97, 98]"));
  EXPECT_EQ(tokenize_response(t, R"({"content": "a", "add_special": true})")["tokens"],
            Json::parse("[1000, 97]"));
  const Json r = tokenize_response(t, R"({"model": "m", "prompt": ""})");
  EXPECT_EQ(r["count"], 1);
  EXPECT_EQ(r["max_model_len"], 64);
}

TEST(TokenizerApi, DetokenizeChecksTheVocabulary) {
  const ServedTokenizer t = bytes_tokenizer();
  const Json r = detokenize_response(t, R"({"tokens": [104, 105]})");
  EXPECT_EQ(r["prompt"], "hi");
  EXPECT_EQ(r["content"], "hi");
  EXPECT_EQ(tokenizer_error_of(&detokenize_response, R"({"tokens": [1, 1001]})").param,
            "tokens[1]");
  EXPECT_EQ(tokenizer_error_of(&detokenize_response, R"({"tokens": [-1]})").param, "tokens[0]");
  EXPECT_EQ(tokenizer_error_of(&detokenize_response, R"({"tokens": "x"})").param, "tokens");
  EXPECT_EQ(tokenizer_error_of(&detokenize_response, R"({})").code, "missing_required_parameter");
}

TEST(TokenizerApi, TokenizeErrorsNameTheParameter) {
  EXPECT_EQ(tokenizer_error_of(&tokenize_response, R"({})").code, "missing_required_parameter");
  EXPECT_EQ(tokenizer_error_of(&tokenize_response, R"({"prompt": 3})").param, "prompt");
  EXPECT_EQ(
      tokenizer_error_of(&tokenize_response, R"({"prompt": "a", "add_special_tokens": 1})").param,
      "add_special_tokens");
  EXPECT_EQ(tokenizer_error_of(&tokenize_response, R"({"messages": []})").param, "messages");
  EXPECT_EQ(tokenizer_error_of(&tokenize_response, R"([1])").param, "body");
  EXPECT_EQ(tokenizer_error_of(&tokenize_response, R"(not json)").status, 400);
}

TEST(TokenizerApi, InfoNullsWhatTheModelLacks) {
  const Json info = tokenizer_info_response(bytes_tokenizer());
  EXPECT_EQ(info["bos_token"], "<s>");
  EXPECT_TRUE(info["eos_token"].is_null());
  EXPECT_TRUE(info["chat_template"].is_null());
  EXPECT_EQ(info["model_max_length"], 64);
}

}  // namespace
}  // namespace afm::server
