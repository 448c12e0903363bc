// Rule rewards (src/rl/rewards.h): each against hand-worked replies, including the malformed
// ones a policy produces early in training.
#include "rl/rewards.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace afm::rl {
namespace {

const Json kPersonSchema = Json::parse(R"({
  "type": "object",
  "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                 "city": {"type": "string"}},
  "required": ["name", "age", "city"], "additionalProperties": false})");

TEST(SchemaReward, ValidReplyInAnyKeyOrderAndWhitespace) {
  EXPECT_EQ(schema_reward(R"({"name":"Ada","age":36,"city":"Oslo"})", kPersonSchema), 1.0);
  EXPECT_EQ(schema_reward(" {\"city\": \"Oslo\", \"age\": 36, \"name\": \"Ada\"}\n", kPersonSchema),
            1.0);
}

TEST(SchemaReward, InvalidOrUnparsableRepliesScoreZero) {
  for (const char* reply : {R"({"name":"Ada","age":"36","city":"Oslo"})",   // wrong type
                            R"({"name":"Ada","age":36})",                    // missing field
                            R"({"name":"Ada","age":36,"city":"Oslo","x":1})",  // extra field
                            R"({"name":"Ada","age":36,"city":"Oslo"} trailing)", "", "{",
                            "The answer is {}", R"([1,2])"}) {
    EXPECT_EQ(schema_reward(reply, kPersonSchema), 0.0) << reply;
  }
}

TEST(SchemaReward, AnUncompilableSchemaIsTheTasksError) {
  EXPECT_THROW(schema_reward("{}", Json::parse(R"({"type": "no-such-type"})")), Error);
}

TEST(ExtractionScore, PartialCreditPerField) {
  const Json truth = Json::parse(R"({"name":"Ada Byron","age":36,"city":"Oslo","amount":12.5})");
  FieldScore s = extraction_score(R"({"name":"Ada Byron","age":36.0,"city":"Olso","amount":12.50})",
                                  truth);
  EXPECT_TRUE(s.parsed);
  EXPECT_EQ(s.right, 3);  // the city is misspelt; 36.0 == 36 and 12.50 == 12.5
  EXPECT_EQ(s.total, 4);
  EXPECT_DOUBLE_EQ(s.reward(), 0.75);
  s = extraction_score(R"({"name":"ada byron","age":"36"})", truth);  // case and type count
  EXPECT_EQ(s.right, 0);
  s = extraction_score("not json", truth);
  EXPECT_FALSE(s.parsed);
  EXPECT_EQ(s.reward(), 0.0);
  EXPECT_EQ(extraction_score("[]", truth).reward(), 0.0);
}

TEST(Arithmetic, StatedAnswerAndComparison) {
  EXPECT_EQ(stated_answer("7 + 8 = 15.\n47 + 38 = 85.\nThe answer is 85."), "85");
  EXPECT_EQ(stated_answer("The answer is $3.50.\n"), "$3.50");
  EXPECT_EQ(stated_answer("I think it is 1,204 or so"), "1,204");
  EXPECT_EQ(stated_answer("no digits here"), std::nullopt);
  EXPECT_EQ(arithmetic_reward("47 + 38 = 85.\nThe answer is 85.", "85"), 1.0);
  EXPECT_EQ(arithmetic_reward("The answer is 84.", "85"), 0.0);
  EXPECT_EQ(arithmetic_reward("The answer is $3.5.", "$3.50"), 1.0);
  EXPECT_EQ(arithmetic_reward("The answer is 1,240.", "1240"), 1.0);
  EXPECT_EQ(arithmetic_reward("The answer is 240 km.", "240 km"), 1.0);
  EXPECT_EQ(arithmetic_reward("The answer is 12:40.", "12:40"), 1.0);
  EXPECT_EQ(arithmetic_reward("The answer is 12:45.", "12:40"), 0.0);
  // The stated answer wins over numbers in the working, and the last statement over earlier ones.
  EXPECT_EQ(arithmetic_reward("85 - 1 = 84. The answer is 85.", "85"), 1.0);
  EXPECT_EQ(arithmetic_reward("The answer is 85.\nThe answer is 86.", "85"), 0.0);
  EXPECT_EQ(arithmetic_reward("", "85"), 0.0);
}

ToolCall call(const std::string& name, const char* args) {
  ToolCall c;
  c.name = name;
  c.arguments = Json::parse(args);
  return c;
}

TEST(ToolCalls, NameAndArgumentsScoredSeparately) {
  const std::vector<ToolCall> want = {call("get_weather", R"({"city":"Oslo","unit":"celsius"})")};
  EXPECT_EQ(tool_call_reward({call("get_weather", R"({"unit":"celsius","city":"Oslo"})")}, want),
            1.0);
  EXPECT_EQ(tool_call_reward({call("get_weather", R"({"city":"Bergen","unit":"celsius"})")}, want),
            0.75);
  EXPECT_EQ(tool_call_reward({call("calculate", R"({"city":"Oslo","unit":"celsius"})")}, want), 0.0);
  EXPECT_EQ(tool_call_reward({}, want), 0.0);
  // An extra call halves the credit of a right one.
  EXPECT_EQ(tool_call_reward({want[0], call("calculate", R"({"expression":"1+1"})")}, want), 0.5);
  EXPECT_EQ(tool_call_reward({}, {}), 1.0);
  // Order matters: parallel calls are compared position by position.
  const std::vector<ToolCall> two = {call("get_weather", R"({"city":"Oslo"})"),
                                     call("get_weather", R"({"city":"Rome"})")};
  EXPECT_EQ(tool_call_reward(two, two), 1.0);
  EXPECT_EQ(tool_call_reward({two[1], two[0]}, two), 0.5);
}

TEST(LengthPenalty, LinearBeyondTheBudgetAndCapped) {
  EXPECT_EQ(length_penalty(100, 128, 0.01, 0.5), 0.0);
  EXPECT_EQ(length_penalty(128, 128, 0.01, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(length_penalty(138, 128, 0.01, 0.5), -0.1);
  EXPECT_DOUBLE_EQ(length_penalty(10000, 128, 0.01, 0.5), -0.5);
}

}  // namespace
}  // namespace afm::rl
