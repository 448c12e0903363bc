#include "rl/rl_task.h"

#include <fstream>

#include "base/error.h"
#include "data/conversation_line.h"
#include "framework/afm_prompt_format.h"
#include "framework/chat_template.h"
#include "rl/rewards.h"

namespace afm::rl {

const char* reward_kind_name(RewardKind kind) {
  switch (kind) {
    case RewardKind::kExtraction:
      return "extraction";
    case RewardKind::kToolCall:
      return "tools";
    case RewardKind::kArithmetic:
      return "arithmetic";
    case RewardKind::kFreeAnswer:
      return "chat";
  }
  return "unknown";
}

namespace {

// "{instructions}\n\nsystem tools: [...]" in the system turn -> request.tools.
void lift_tools(ChatRequest& r, const std::string& where) {
  if (!r.tools.empty() || r.messages.empty() || r.messages[0].role != "system") return;
  std::string& text = r.messages[0].content;
  const size_t at = text.find(kToolsMarker);
  if (at == std::string::npos) return;
  const Json list = Json::parse(text.substr(at + kToolsMarker.size()), nullptr, false);
  if (!list.is_array()) data::bad_conversation(where, "the system turn's tool list is not JSON");
  for (const Json& t : list) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
      data::bad_conversation(where, "a tool in the system turn's list has no name");
    r.tools.push_back({t["name"], t.value("description", ""), t.value("parameters", Json::object())});
  }
  text.resize(at);
}

// "{prompt}\n\nresponse format in json.\nname: N\ndescription: D\nschema: {...}" in the last
// user turn -> response_name, response_description, response_schema.
void lift_response_format(ChatRequest& r, const std::string& where) {
  if (r.response_schema) return;
  for (auto it = r.messages.rbegin(); it != r.messages.rend(); ++it) {
    if (it->role != "user") continue;
    const size_t at = it->content.find(kResponseFormatMarker);
    if (at == std::string::npos) return;
    const std::string block = it->content.substr(at + kResponseFormatMarker.size());
    const size_t name_end = block.find('\n'), desc_end = block.find('\n', name_end + 1);
    if (block.rfind("name: ", 0) != 0 || desc_end == std::string::npos ||
        block.compare(name_end + 1, 13, "description: ") != 0 ||
        block.compare(desc_end + 1, 8, "schema: ") != 0)
      data::bad_conversation(where, "the user turn's response format block is malformed");
    const Json schema = Json::parse(block.substr(desc_end + 9), nullptr, false);
    if (!schema.is_object()) data::bad_conversation(where, "the response format's schema is not JSON");
    r.response_name = block.substr(6, name_end - 6);
    r.response_description = block.substr(name_end + 14, desc_end - name_end - 14);
    r.response_schema = schema;
    it->content.resize(at);
    return;
  }
}

// The lifted request must show the model exactly the text the conversation had.
void check_lift(const ChatRequest& before, const ChatRequest& after, const std::string& where) {
  static const ChatTemplate afm(ChatTemplateKind::kAfm);
  if (afm.render(before.messages, false, prompt_extras(before)) !=
      afm.render(after.messages, false, prompt_extras(after)))
    data::bad_conversation(where, "the inline tool list or response format does not render back "
                                  "to the same text once lifted");
}

}  // namespace

RlTask make_rl_task(const ChatRequest& original, const std::string& where, bool free_answers) {
  ChatRequest conversation = original;
  lift_tools(conversation, where);
  lift_response_format(conversation, where);
  check_lift(original, conversation, where);
  RlTask task;
  task.prompt = conversation;
  task.prompt.messages.clear();
  const ChatMessage* reference = nullptr;
  for (const ChatMessage& m : conversation.messages) {
    if (m.role == "assistant") {
      reference = &m;
      break;
    }
    task.prompt.messages.push_back(m);
  }
  if (reference == nullptr) data::bad_conversation(where, "no assistant turn to learn from");
  task.reference = *reference;
  if (conversation.response_schema) {
    task.kind = RewardKind::kExtraction;
    task.truth = Json::parse(task.reference.content, nullptr, /*allow_exceptions=*/false);
    if (task.truth.is_discarded())
      data::bad_conversation(where, "the reference answer of a response format is not JSON");
  } else if (!task.reference.tool_calls.empty()) {
    task.kind = RewardKind::kToolCall;
  } else if (task.reference.content.find("The answer is") != std::string::npos) {
    task.kind = RewardKind::kArithmetic;
    task.truth = *stated_answer(task.reference.content);  // the phrase is there
  } else if (free_answers) {
    task.kind = RewardKind::kFreeAnswer;
  } else {
    data::bad_conversation(where,
                           "no rule reward checks this answer (no response format, no tool "
                           "call, no \"The answer is\"); a reward model can score free answers "
                           "(--reward-model)");
  }
  return task;
}

std::vector<RlTask> read_rl_tasks(const std::string& path, bool free_answers) {
  std::ifstream in(path);
  if (!in) throw_error(ErrorCode::kNotFound, "cannot open " + path);
  std::vector<RlTask> tasks;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(n);
    tasks.push_back(make_rl_task(data::parse_conversation(line, where), where, free_answers));
  }
  if (tasks.empty()) throw_error(ErrorCode::kInvalidArgument, path + ": no conversations");
  return tasks;
}

double task_reward(const RlTask& task, const ChatResult& reply) {
  switch (task.kind) {
    case RewardKind::kExtraction: {
      const double valid = schema_reward(reply.text, *task.prompt.response_schema);
      return 0.2 * valid + 0.8 * extraction_score(reply.text, task.truth).reward();
    }
    case RewardKind::kToolCall:
      return tool_call_reward(reply.tool_calls, task.reference.tool_calls);
    case RewardKind::kArithmetic:
      return arithmetic_reward(reply.text, task.truth.get<std::string>());
    case RewardKind::kFreeAnswer:
      break;
  }
  throw_error(ErrorCode::kInvalidArgument, "a free answer has no rule reward: give a reward model");
}

}  // namespace afm::rl
