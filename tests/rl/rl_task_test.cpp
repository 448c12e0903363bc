// RL tasks (src/rl/rl_task.h): conversations cut at their first assistant turn, the reward
// kind chosen from the reference, and task_reward() on hand-made replies.
#include "rl/rl_task.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "data/conversation_line.h"
#include "data/synth/openai_jsonl.h"
#include "data/synth/synth.h"
#include "framework/afm_prompt_format.h"

namespace afm::rl {
namespace {

RlTask task_of(const std::string& line) {
  return make_rl_task(data::parse_conversation(line, "t.jsonl:1"), "t.jsonl:1");
}

const char* kArithmetic = R"({"messages":[{"role":"system","content":"Solve it."},
  {"role":"user","content":"What is 47 + 38?"},
  {"role":"assistant","content":"7 + 8 = 15, write 5 and carry 1.\n47 + 38 = 85.\nThe answer is 85."}]})";

const char* kExtraction = R"({"messages":[{"role":"user","content":"Ada, 36, lives in Oslo."},
  {"role":"assistant","content":"{\"name\":\"Ada\",\"age\":36,\"city\":\"Oslo\"}"}],
  "response_format":{"type":"json_schema","json_schema":{"name":"person","schema":{
    "type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
    "city":{"type":"string"}},"required":["name","age","city"],"additionalProperties":false}}}})";

const char* kTools = R"({"messages":[{"role":"user","content":"Weather in Oslo?"},
  {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{
    "name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
  {"role":"tool","tool_call_id":"c1","content":"{\"temp\":3}"},
  {"role":"assistant","content":"It is 3 degrees."}],
  "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
    "properties":{"city":{"type":"string"}},"required":["city"]}}}]})";

ChatResult reply(const std::string& text, std::vector<ToolCall> calls = {}) {
  ChatResult r;
  r.text = text;
  r.tool_calls = std::move(calls);
  return r;
}

TEST(RlTask, ArithmeticPromptStopsBeforeTheAnswer) {
  const RlTask t = task_of(kArithmetic);
  EXPECT_EQ(t.kind, RewardKind::kArithmetic);
  ASSERT_EQ(t.prompt.messages.size(), 2u);
  EXPECT_EQ(t.prompt.messages.back().role, "user");
  EXPECT_EQ(task_reward(t, reply("40 + 45 = 85.\nThe answer is 85.")), 1.0);
  EXPECT_EQ(task_reward(t, reply("The answer is 84.")), 0.0);
}

TEST(RlTask, ExtractionScoresValidityAndFields) {
  const RlTask t = task_of(kExtraction);
  EXPECT_EQ(t.kind, RewardKind::kExtraction);
  EXPECT_DOUBLE_EQ(task_reward(t, reply(R"({"name":"Ada","age":36,"city":"Oslo"})")), 1.0);
  // Valid for the schema, one field of three wrong: 0.2 + 0.8 x 2/3.
  EXPECT_NEAR(task_reward(t, reply(R"({"name":"Ada","age":35,"city":"Oslo"})")), 0.2 + 0.8 * 2 / 3.0,
              1e-12);
  // Not valid (a string age), two fields right.
  EXPECT_NEAR(task_reward(t, reply(R"({"name":"Ada","age":"36","city":"Oslo"})")), 0.8 * 2 / 3.0,
              1e-12);
  EXPECT_EQ(task_reward(t, reply("Ada is 36.")), 0.0);
}

TEST(RlTask, ToolCallsAreTheFirstAssistantTurn) {
  const RlTask t = task_of(kTools);
  EXPECT_EQ(t.kind, RewardKind::kToolCall);
  EXPECT_EQ(t.prompt.messages.size(), 1u);
  EXPECT_EQ(t.prompt.tools.size(), 1u);
  ToolCall right{"x", "get_weather", nlohmann::ordered_json::parse(R"({"city":"Oslo"})")};
  ToolCall wrong{"x", "get_weather", nlohmann::ordered_json::parse(R"({"city":"Bergen"})")};
  EXPECT_EQ(task_reward(t, reply("", {right})), 1.0);
  EXPECT_EQ(task_reward(t, reply("", {wrong})), 0.5);
  EXPECT_EQ(task_reward(t, reply("Sunny.")), 0.0);
}

// Synthetic conversations carry the tool list and the response format as template text; the
// tasks lift them into the request (make_rl_task checks the text renders back unchanged).
TEST(RlTask, LiftsTheInlineBlocksOfSyntheticConversations) {
  using data::synth::Task;
  int tools = 0, extraction = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    const data::synth::Example e =
        data::synth::make_example(13, i, {Task::kExtraction, Task::kTools, Task::kArithmetic});
    const std::string line = data::synth::to_openai_conversation(e).dump();
    const RlTask t = task_of(line);
    for (const ChatMessage& m : t.prompt.messages) {
      EXPECT_EQ(m.content.find(kToolsMarker), std::string::npos) << line;
      EXPECT_EQ(m.content.find(kResponseFormatMarker), std::string::npos) << line;
    }
    if (e.task == Task::kTools) {
      ++tools;
      EXPECT_EQ(t.kind, RewardKind::kToolCall);
      EXPECT_FALSE(t.prompt.tools.empty());
    } else if (e.task == Task::kExtraction) {
      ++extraction;
      EXPECT_EQ(t.kind, RewardKind::kExtraction);
      ASSERT_TRUE(t.prompt.response_schema.has_value());
      EXPECT_FALSE(t.prompt.response_description.empty());
      // The reference answer itself gets the full reward.
      EXPECT_DOUBLE_EQ(task_reward(t, reply(t.reference.content)), 1.0) << line;
    } else {
      EXPECT_EQ(t.kind, RewardKind::kArithmetic);
      EXPECT_DOUBLE_EQ(task_reward(t, reply(t.reference.content)), 1.0) << line;
    }
  }
  EXPECT_GT(tools, 50);
  EXPECT_GT(extraction, 50);
}

TEST(RlTask, ConversationsWithoutARuleRewardAreErrorsNamingTheLine) {
  for (const char* line :
       {R"({"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"}]})",
        R"({"messages":[{"role":"user","content":"Hi"}]})"}) {
    try {
      task_of(line);
      FAIL() << line;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_EQ(std::string(e.what()).rfind("t.jsonl:1: ", 0), 0u) << e.what();
    }
  }
}

TEST(RlTask, ReadsAFileAndNamesTheBadLine) {
  const auto path = std::filesystem::temp_directory_path() / "afm_rl_tasks_test.jsonl";
  {
    std::ofstream out(path);
    std::string one = kArithmetic;
    std::replace(one.begin(), one.end(), '\n', ' ');
    out << one << "\n\n" << one << "\n{\"messages\": 3}\n";
  }
  try {
    read_rl_tasks(path.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ":4: "), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(read_rl_tasks(path.string()), Error);
}

}  // namespace
}  // namespace afm::rl
