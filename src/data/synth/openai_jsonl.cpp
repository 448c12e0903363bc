#include "data/synth/openai_jsonl.h"

#include <deque>
#include <string>

#include "base/error.h"
#include "framework/afm_prompt_format.h"

namespace afm::data::synth {
namespace {

using Json = nlohmann::ordered_json;

// The calls of an assistant turn that is exactly one tool-call block, or null.
Json parse_tool_call_block(const std::string& content) {
  const std::string open = std::string(kToolCallStartToken) + std::string(kToolCallBodyOpen);
  const std::string close = std::string(kToolCallBodyClose) + std::string(kToolCallEndToken);
  if (content.size() < open.size() + close.size() || content.compare(0, open.size(), open) != 0 ||
      content.compare(content.size() - close.size(), close.size(), close) != 0) {
    return nullptr;
  }
  Json calls = Json::parse(content.substr(open.size(), content.size() - open.size() - close.size()));
  AFM_CHECK(calls.is_array() && tool_call_block(calls) == content);
  return calls;
}

}  // namespace

Json to_openai_conversation(const Example& example) {
  Json messages = Json::array();
  std::deque<std::string> pending;  // call ids waiting for their tool turn, in call order
  int next_id = 1;
  for (const ChatMessage& m : example.messages) {
    Json out = {{"role", m.role}};
    const Json calls = m.role == "assistant" ? parse_tool_call_block(m.content) : Json();
    if (calls.is_array()) {
      out["content"] = nullptr;
      out["tool_calls"] = Json::array();
      for (const Json& call : calls) {
        const std::string id = "call_" + std::to_string(next_id++);
        pending.push_back(id);
        out["tool_calls"].push_back({{"id", id},
                                     {"type", "function"},
                                     {"function", {{"name", call.at("name")},
                                                   {"arguments", call.at("arguments").dump()}}}});
      }
    } else {
      out["content"] = m.content;
    }
    if (m.role == "tool") {
      AFM_CHECK(!pending.empty());
      out["tool_call_id"] = pending.front();
      pending.pop_front();
    }
    messages.push_back(std::move(out));
  }
  return {{"messages", messages}, {"metadata", {{"task", task_name(example.task)}}}};
}

}  // namespace afm::data::synth
