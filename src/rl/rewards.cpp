#include "rl/rewards.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"
#include "guided/schema_key_order.h"

namespace afm::rl {
namespace {

std::optional<Json> parse_reply(std::string_view reply) {
  Json value = Json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

// Numbers compare numerically (2 == 2.0), everything else structurally.
bool same_value(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  return a == b;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "$1,234.50" -> 1234.5, "240 km" -> 240; nullopt when the text is not such a number.
std::optional<double> as_number(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '$') s.remove_prefix(1);
  std::string digits;
  size_t i = 0;
  if (i < s.size() && s[i] == '-') digits += s[i++];
  bool any = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c, any = true;
    else if (c == '.' ) digits += c;
    else if (c != ',') break;
  }
  if (!any) return std::nullopt;
  const std::string_view rest = trim(s.substr(i));
  // A trailing unit is one word of letters ("km", "minutes"); anything else is not a number.
  if (!std::all_of(rest.begin(), rest.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(digits, &used);
    if (used != digits.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The last run of digits (with ',' and '.' inside, a '-' before) in `s`.
std::optional<std::string> last_number(std::string_view s) {
  size_t end = s.size();
  while (end > 0 && !std::isdigit(static_cast<unsigned char>(s[end - 1]))) --end;
  if (end == 0) return std::nullopt;
  size_t begin = end;
  while (begin > 0) {
    const char c = s[begin - 1];
    const bool inner = (c == ',' || c == '.') && begin >= 2 &&
                       std::isdigit(static_cast<unsigned char>(s[begin - 2]));
    if (!std::isdigit(static_cast<unsigned char>(c)) && !inner) break;
    --begin;
  }
  if (begin > 0 && s[begin - 1] == '-') --begin;
  return std::string(s.substr(begin, end - begin));
}

}  // namespace

double schema_reward(std::string_view reply, const Json& schema) {
  // An RL run scores every sample of a prompt against the same schema: compile it once.
  static guided::CompiledGrammarCache grammars;
  const auto grammar = grammars.get_or_compile(schema.dump());  // throws for the schema's faults
  const std::optional<Json> value = parse_reply(reply);
  if (!value) return 0.0;
  if (guided::ByteMatcher::matches(grammar, guided::canonical_json(*value))) return 1.0;
  const Json ordered = guided::in_key_order(*value, guided::schema_key_order(schema));
  return guided::ByteMatcher::matches(grammar, guided::canonical_json(ordered)) ? 1.0 : 0.0;
}

FieldScore extraction_score(std::string_view reply, const Json& truth) {
  FieldScore s;
  s.total = truth.is_object() ? static_cast<int64_t>(truth.size()) : 0;
  const std::optional<Json> value = parse_reply(reply);
  if (!value || !value->is_object()) return s;
  s.parsed = true;
  for (const auto& [key, want] : truth.items()) {
    const auto it = value->find(key);
    if (it != value->end() && same_value(*it, want)) ++s.right;
  }
  return s;
}

std::optional<std::string> stated_answer(std::string_view reply) {
  constexpr std::string_view kPhrase = "The answer is";
  const size_t at = reply.rfind(kPhrase);
  if (at == std::string_view::npos) return last_number(reply);
  std::string_view rest = reply.substr(at + kPhrase.size());
  rest = rest.substr(0, std::min(rest.find('\n'), rest.size()));
  rest = trim(rest);
  if (!rest.empty() && rest.back() == '.') rest.remove_suffix(1);
  return std::string(trim(rest));
}

double arithmetic_reward(std::string_view reply, std::string_view truth) {
  const std::optional<std::string> got = stated_answer(reply);
  if (!got) return 0.0;
  if (trim(*got) == trim(truth)) return 1.0;
  const std::optional<double> a = as_number(*got), b = as_number(truth);
  return a && b && *a == *b ? 1.0 : 0.0;
}

double tool_call_reward(const std::vector<ToolCall>& made, const std::vector<ToolCall>& expected) {
  const size_t n = std::max(made.size(), expected.size());
  if (n == 0) return 1.0;
  double sum = 0;
  for (size_t i = 0; i < std::min(made.size(), expected.size()); ++i) {
    if (made[i].name != expected[i].name) continue;
    const Json& want = expected[i].arguments;
    double args = 1.0;
    if (want.is_object() && !want.empty()) {
      const FieldScore f = extraction_score(made[i].arguments.dump(), want);
      args = f.reward();
    } else if (!same_value(made[i].arguments, want)) {
      args = 0.0;
    }
    sum += 0.5 + 0.5 * args;
  }
  return sum / static_cast<double>(n);
}

double length_penalty(int64_t tokens, int64_t budget, double per_token, double cap) {
  if (tokens <= budget) return 0.0;
  return -std::min(cap, per_token * static_cast<double>(tokens - budget));
}

}  // namespace afm::rl
