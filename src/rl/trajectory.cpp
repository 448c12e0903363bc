#include "rl/trajectory.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_parse.h"

namespace afm::rl {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& what) {
  throw_error(ErrorCode::kFormat, "trajectory group: " + what);
}

const Json& member(const Json& object, const char* key, Json::value_t type,
                   const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end()) bad(where + "has no \"" + key + "\"");
  const bool numeric_ok = (type == Json::value_t::number_float && it->is_number()) ||
                          (type == Json::value_t::number_integer && it->is_number_integer());
  if (it->type() != type && !numeric_ok) bad(where + "\"" + key + "\" has the wrong type");
  return *it;
}

int64_t integer(const Json& v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) bad(what + " must be an integer");
  const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)
                        ? INT64_MAX
                        : v.get<int64_t>();
  if (x < lo || x > hi) bad(what + " is out of range");
  return x;
}

double finite(const Json& v, const std::string& what) {
  const double x = v.get<double>();
  if (!std::isfinite(x)) bad(what + " is not finite");
  return x;
}

TrajectorySample decode_sample(const Json& s, const std::string& where) {
  if (!s.is_object()) bad(where + "is not an object");
  TrajectorySample out;
  const Json& tokens = member(s, "tokens", Json::value_t::array, where);
  if (tokens.size() > kMaxSampleTokens) bad(where + "has too many tokens");
  for (const Json& t : tokens)
    out.tokens.push_back(static_cast<int32_t>(integer(t, where + "a token", 0, INT32_MAX)));
  const int64_t n = static_cast<int64_t>(out.tokens.size());
  int64_t previous_end = 1;
  for (const Json& span : member(s, "trained", Json::value_t::array, where)) {
    if (!span.is_array() || span.size() != 2) bad(where + "a trained span is not [begin, end]");
    const int64_t b = integer(span[0], where + "a span begin", previous_end, n);
    const int64_t e = integer(span[1], where + "a span end", b + 1, n);
    out.trained.emplace_back(b, e);
    previous_end = e;
  }
  const Json& behaviour = member(s, "behaviour", Json::value_t::array, where);
  if (static_cast<int64_t>(behaviour.size()) != trained_count(out))
    bad(where + "has " + std::to_string(behaviour.size()) + " behaviour log-probabilities for " +
        std::to_string(trained_count(out)) + " trained tokens");
  for (const Json& lp : behaviour) {
    if (!lp.is_number()) bad(where + "a behaviour log-probability is not a number");
    const double x = finite(lp, where + "a behaviour log-probability");
    if (x > 1e-3) bad(where + "a behaviour log-probability is positive");
    out.behaviour.push_back(static_cast<float>(x));
  }
  out.reward = finite(member(s, "reward", Json::value_t::number_float, where), where + "reward");
  out.completion_tokens =
      integer(member(s, "completion_tokens", Json::value_t::number_integer, where),
              where + "completion_tokens", 0, INT32_MAX);
  return out;
}

}  // namespace

int64_t trained_count(const TrajectorySample& sample) {
  int64_t n = 0;
  for (const auto& [b, e] : sample.trained) n += e - b;
  return n;
}

std::string encode_group(const TrajectoryGroup& g) {
  Json samples = Json::array();
  for (const TrajectorySample& s : g.samples) {
    Json spans = Json::array();
    for (const auto& [b, e] : s.trained) spans.push_back({b, e});
    samples.push_back({{"tokens", s.tokens},
                       {"trained", spans},
                       {"behaviour", s.behaviour},
                       {"reward", s.reward},
                       {"completion_tokens", s.completion_tokens}});
  }
  return Json{{"format", 1},
              {"id", g.id},
              {"version", g.version},
              {"generator", g.generator},
              {"task", g.task},
              {"kind", g.kind},
              {"sample_seconds", g.sample_seconds},
              {"samples", samples}}
      .dump();
}

TrajectoryGroup decode_group(std::string_view json) {
  ParsedJson parsed = parse_ordered_json(json, 8);
  if (!parsed.ok()) bad(parsed.message.empty() ? "nested too deeply" : parsed.message);
  const Json& g = parsed.value;
  if (!g.is_object()) bad("is not a JSON object");
  if (integer(member(g, "format", Json::value_t::number_integer, ""), "format", 0, INT64_MAX) != 1)
    bad("unknown format (this build reads format 1)");
  TrajectoryGroup out;
  out.id = member(g, "id", Json::value_t::string, "").get<std::string>();
  out.version =
      integer(member(g, "version", Json::value_t::number_integer, ""), "version", 0, INT64_MAX);
  out.generator =
      integer(member(g, "generator", Json::value_t::number_integer, ""), "generator", 0, INT64_MAX);
  out.task = integer(member(g, "task", Json::value_t::number_integer, ""), "task", 0, INT64_MAX);
  out.kind = member(g, "kind", Json::value_t::string, "").get<std::string>();
  out.sample_seconds =
      finite(member(g, "sample_seconds", Json::value_t::number_float, ""), "sample_seconds");
  const Json& samples = member(g, "samples", Json::value_t::array, "");
  if (samples.empty() || samples.size() > kMaxGroupSamples)
    bad("must hold 1 to " + std::to_string(kMaxGroupSamples) + " samples");
  for (size_t i = 0; i < samples.size(); ++i)
    out.samples.push_back(decode_sample(samples[i], "sample " + std::to_string(i) + " "));
  return out;
}

}  // namespace afm::rl
