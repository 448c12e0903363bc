// Preference pairs (src/rl/preference_pair.h): the line format with its errors, and pairs made
// from conversations (one graded mistake per rule task, another reply for free answers).
#include "rl/preference_pair.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace afm::rl {
namespace {

using Json = nlohmann::json;

std::string expect_error(const std::string& line) {
  try {
    parse_preference_pair(line, "p.jsonl:3");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("p.jsonl:3: "), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << line;
  return "";
}

TEST(PreferencePair, ParsesStringsMessagesAndGrades) {
  const PreferencePair p = parse_preference_pair(
      R"({"messages":[{"role":"system","content":"Be kind."},{"role":"user","content":"Hi"}],
          "chosen":"Hello! How can I help?",
          "rejected":{"role":"assistant","tool_calls":[{"id":"c","type":"function",
              "function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
          "chosen_grade":1,"rejected_grade":0.25,
          "tools":[{"type":"function","function":{"name":"get_weather","parameters":{}}}]})",
      "p.jsonl:1");
  ASSERT_EQ(p.prompt.messages.size(), 2u);
  EXPECT_EQ(p.prompt.messages[1].content, "Hi");
  EXPECT_EQ(p.prompt.tools.size(), 1u);
  EXPECT_EQ(p.chosen.role, "assistant");
  EXPECT_EQ(p.chosen.content, "Hello! How can I help?");
  ASSERT_EQ(p.rejected.tool_calls.size(), 1u);
  EXPECT_EQ(p.rejected.tool_calls[0].name, "get_weather");
  EXPECT_EQ(*p.chosen_grade, 1.0);
  EXPECT_EQ(*p.rejected_grade, 0.25);
  EXPECT_FALSE(parse_preference_pair(R"({"messages":[],"chosen":"a","rejected":"b"})", "x")
                   .chosen_grade.has_value());
}

TEST(PreferencePair, BadLinesNameTheirProblem) {
  expect_error("not json");
  EXPECT_NE(expect_error(R"({"messages":[{"role":"user","content":"x"}],"chosen":"a"})")
                .find("\"rejected\""),
            std::string::npos);
  EXPECT_NE(expect_error(R"({"chosen":"a","rejected":"b"})").find("messages"), std::string::npos);
  EXPECT_NE(expect_error(R"({"messages":[],"chosen":{"role":"user","content":"a"},"rejected":"b"})")
                .find("assistant"),
            std::string::npos);
  EXPECT_NE(expect_error(R"({"messages":[],"chosen":"a","rejected":"b","rejected_grade":1.5})")
                .find("rejected_grade"),
            std::string::npos);
  expect_error(R"({"messages":[{"role":"wizard","content":"x"}],"chosen":"a","rejected":"b"})");
}

TEST(PreferencePair, SynthesizedPairsCarryOneGradedMistake) {
  const std::vector<std::string> lines = {
      R"({"messages":[{"role":"user","content":"What is 47 + 38?"},
          {"role":"assistant","content":"47 + 38 = 85.\nThe answer is 85."}]})",
      R"({"messages":[{"role":"user","content":"Ada, 36, lives in Oslo."},
          {"role":"assistant","content":"{\"name\":\"Ada\",\"age\":36,\"city\":\"Oslo\"}"}],
          "response_format":{"type":"json_schema","json_schema":{"name":"person","schema":{
            "type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
            "city":{"type":"string"}},"required":["name","age","city"]}}}})",
      R"({"messages":[{"role":"user","content":"Weather in Oslo?"},
          {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{
            "name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}],
          "tools":[{"type":"function","function":{"name":"get_weather","parameters":{
            "type":"object","properties":{"city":{"type":"string"}}}}}]})",
      R"({"messages":[{"role":"user","content":"Hi there"},
          {"role":"assistant","content":"Hello! What can I do for you?"}]})",
      R"({"messages":[{"role":"user","content":"no reply yet"}]})"};
  const std::vector<std::string> out = synthesize_preference_lines(lines, 5);
  ASSERT_EQ(out.size(), 4u);  // the line without an assistant turn is skipped
  std::vector<Json> pairs;
  for (const std::string& line : out) {
    pairs.push_back(Json::parse(line));
    const PreferencePair p = parse_preference_pair(line, "synth");  // readable as written
    EXPECT_EQ(*p.chosen_grade, 1.0);
    EXPECT_LT(*p.rejected_grade, 1.0);
  }
  // Arithmetic: only the stated answer moved, graded 0.
  const std::string wrong = pairs[0]["rejected"]["content"];
  EXPECT_EQ(wrong.rfind("47 + 38 = 85.\nThe answer is ", 0), 0u);
  EXPECT_NE(wrong, "47 + 38 = 85.\nThe answer is 85.");
  EXPECT_EQ(pairs[0]["rejected_grade"], 0.0);
  // Extraction: one of three fields wrong: 0.2 x valid + 0.8 x 2/3.
  EXPECT_NEAR(pairs[1]["rejected_grade"].get<double>(), 0.2 + 0.8 * 2 / 3.0, 1e-9);
  // Tools: the right tool with its one argument wrong: half.
  EXPECT_EQ(pairs[2]["rejected_grade"], 0.5);
  // Free answer: another conversation's reply, graded 0.
  EXPECT_NE(pairs[3]["rejected"], pairs[3]["chosen"]);
  EXPECT_EQ(pairs[3]["rejected_grade"], 0.0);
  EXPECT_EQ(pairs[3]["messages"].size(), 1u);
  // The same seed, the same pairs.
  EXPECT_EQ(synthesize_preference_lines(lines, 5), out);
}

}  // namespace
}  // namespace afm::rl
