#include "rl/preference_pair.h"

#include <fstream>

#include "base/error.h"
#include "base/json_parse.h"
#include "data/conversation_line.h"
#include "data/hash_mix.h"
#include "rl/rewards.h"
#include "rl/rl_task.h"

namespace afm::rl {
namespace {

// `reply` appended to the line's messages, parsed as a conversation: its last message.
ChatRequest with_reply(const Json& line, const Json& reply, const std::string& where,
                       const char* which) {
  Json conversation = line;
  conversation.erase("chosen");
  conversation.erase("rejected");
  conversation.erase("chosen_grade");
  conversation.erase("rejected_grade");
  Json message = reply.is_string() ? Json{{"role", "assistant"}, {"content", reply}} : reply;
  if (!message.is_object() || message.value("role", "") != "assistant")
    data::bad_conversation(
        where, std::string("\"") + which + "\" must be a string or an assistant message");
  conversation["messages"].push_back(message);
  return data::parse_conversation(conversation.dump(), where);
}

std::optional<double> grade(const Json& line, const char* key, const std::string& where) {
  const auto it = line.find(key);
  if (it == line.end()) return std::nullopt;
  if (!it->is_number() || it->get<double>() < 0 || it->get<double>() > 1)
    data::bad_conversation(where, std::string("\"") + key + "\" must be a number in [0, 1]");
  return it->get<double>();
}

// ---- synthesis ---------------------------------------------------------------------------

// A different value of the same JSON type: numbers move by 1..9, strings lose or swap a word.
Json wrong_value(const Json& v, uint64_t r) {
  const int64_t d = static_cast<int64_t>(r % 9) + 1;
  if (v.is_number_integer()) return v.get<int64_t>() + ((r >> 8) & 1 ? d : -d);
  if (v.is_number()) return v.get<double>() + static_cast<double>(d);
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    const size_t space = s.find(' ');
    if (space != std::string::npos) return s.substr(space + 1) + " " + s.substr(0, space);
    return s.size() > 1 ? s.substr(0, s.size() - 1) : s + "x";
  }
  if (v.is_boolean()) return !v.get<bool>();
  return Json("unknown");
}

// One field of a JSON object changed; false when there is nothing to change.
bool corrupt_object(Json& object, uint64_t r) {
  if (!object.is_object() || object.empty()) return false;
  auto it = object.begin();
  std::advance(it, static_cast<long>(r % object.size()));
  const Json changed = wrong_value(*it, data::mix64(r));
  if (changed == *it) return false;
  *it = changed;
  return true;
}

// The stated answer N of "The answer is N." becomes another number.
bool corrupt_answer(std::string& text, uint64_t r) {
  const size_t at = text.rfind("The answer is ");
  if (at == std::string::npos) return false;
  size_t b = at + 14;
  while (b < text.size() && !std::isdigit(static_cast<unsigned char>(text[b]))) ++b;
  size_t e = b;
  while (e < text.size() && std::isdigit(static_cast<unsigned char>(text[e]))) ++e;
  if (b == e || e - b > 15) return false;
  const int64_t n = std::stoll(text.substr(b, e - b));
  const int64_t d = static_cast<int64_t>(r % 9) + 1;
  text.replace(b, e - b, std::to_string(n + d));
  return true;
}

ChatResult as_result(const Json& message, const std::string& where) {
  Json line = {{"messages", Json::array({Json{{"role", "user"}, {"content", "x"}}, message})}};
  const ChatRequest r = data::parse_conversation(line.dump(), where);
  return ChatResult{r.messages.back().content, r.messages.back().tool_calls, "stop"};
}

// The rejected reply for a rule-rewarded task, or null when no mistake could be made.
Json rule_mistake(const Json& reply, uint64_t r) {
  Json wrong = reply;
  if (wrong.contains("tool_calls") && wrong["tool_calls"].is_array() &&
      !wrong["tool_calls"].empty()) {
    Json& fn = wrong["tool_calls"][0]["function"];
    Json args = Json::parse(fn.value("arguments", "{}"), nullptr, false);
    if (!corrupt_object(args, r)) return nullptr;
    fn["arguments"] = args.dump();
    return wrong;
  }
  if (!wrong.contains("content") || !wrong["content"].is_string()) return nullptr;
  std::string text = wrong["content"];
  Json object = Json::parse(text, nullptr, false);
  if (object.is_object()) {
    if (!corrupt_object(object, r)) return nullptr;
    wrong["content"] = object.dump();
    return wrong;
  }
  if (!corrupt_answer(text, r)) return nullptr;
  wrong["content"] = text;
  return wrong;
}

}  // namespace

PreferencePair parse_preference_pair(const std::string& text, const std::string& where) {
  ParsedJson parsed = parse_ordered_json(text, 128);
  if (!parsed.ok() || !parsed.value.is_object())
    data::bad_conversation(
        where, "not a JSON object" + (parsed.message.empty() ? "" : ": " + parsed.message));
  const Json& line = parsed.value;
  for (const char* key : {"chosen", "rejected"})
    if (!line.contains(key)) data::bad_conversation(where, std::string("no \"") + key + "\"");
  if (!line.contains("messages") || !line["messages"].is_array())
    data::bad_conversation(where, "no \"messages\" list");
  PreferencePair pair;
  ChatRequest chosen = with_reply(line, line["chosen"], where, "chosen");
  ChatRequest rejected = with_reply(line, line["rejected"], where, "rejected");
  pair.chosen = chosen.messages.back();
  pair.rejected = rejected.messages.back();
  chosen.messages.pop_back();
  pair.prompt = std::move(chosen);
  pair.chosen_grade = grade(line, "chosen_grade", where);
  pair.rejected_grade = grade(line, "rejected_grade", where);
  return pair;
}

std::vector<PreferencePair> read_preference_pairs(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_error(ErrorCode::kNotFound, "cannot open " + path);
  std::vector<PreferencePair> pairs;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    pairs.push_back(parse_preference_pair(line, path + ":" + std::to_string(n)));
  }
  if (pairs.empty()) throw_error(ErrorCode::kInvalidArgument, path + ": no preference pairs");
  return pairs;
}

std::vector<std::string> synthesize_preference_lines(const std::vector<std::string>& lines,
                                                     uint64_t seed) {
  // Every conversation cut before its first assistant turn, with that turn.
  struct Cut {
    Json prefix, reply;
    std::string where, raw;
  };
  std::vector<Cut> cuts;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = "line " + std::to_string(i + 1);
    Json line = Json::parse(lines[i], nullptr, false);
    if (!line.is_object() || !line.contains("messages") || !line["messages"].is_array()) continue;
    Json messages = Json::array();
    for (const Json& m : line["messages"]) {
      if (m.value("role", "") == "assistant") {
        Json reply = m;  // `m` lives in the list replaced below
        line["messages"] = messages;
        line.erase("metadata");
        cuts.push_back({line, std::move(reply), where, lines[i]});
        break;
      }
      messages.push_back(m);
    }
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < cuts.size(); ++i) {
    const uint64_t r = data::mix64(seed, i);
    const Cut& c = cuts[i];
    Json pair = c.prefix;
    pair["chosen"] = c.reply;
    pair["chosen_grade"] = 1.0;
    std::optional<RlTask> task;
    try {
      task = make_rl_task(data::parse_conversation(c.raw, c.where), c.where);
    } catch (const Error&) {  // a free answer: no rule reward
    }
    Json rejected = task ? rule_mistake(c.reply, r) : Json(nullptr);
    double rejected_grade = 0;
    if (!rejected.is_null()) {
      rejected_grade = task_reward(*task, as_result(rejected, c.where));
    } else {
      // Another conversation's reply (its own first answer differs from this one).
      for (size_t k = 1; k < cuts.size() && rejected.is_null(); ++k) {
        const Json& other = cuts[(i + k * (1 + r % 7)) % cuts.size()].reply;
        if (other != c.reply) rejected = other;
      }
      if (rejected.is_null()) continue;
    }
    pair["rejected"] = rejected;
    pair["rejected_grade"] = rejected_grade;
    out.push_back(pair.dump());
  }
  return out;
}

}  // namespace afm::rl
