// JSON Schema strings (length, pattern, format), numbers (bounds, multipleOf), enum/const.
#include <cmath>
#include <map>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/char_classes.h"
#include "guided/number_grammar.h"
#include "guided/regex_compiler.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

constexpr uint64_t kMaxLengthBound = 100000;

#define AFM_HOST_LABEL                                                      \
  "[A-Za-z0-9]([A-Za-z0-9-]?[A-Za-z0-9])?|[A-Za-z0-9][A-Za-z0-9-]{2}[A-Za-z0-9]|" \
  "[A-Za-z0-9][A-Za-z0-9-]([A-Za-z0-9][A-Za-z0-9-]|-[A-Za-z0-9])[A-Za-z0-9-]{0,56}[A-Za-z0-9]"
#define AFM_URI_PCHAR "[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2}"

// Formats as full-match regexes; each accepts only strings valid for the format (a subset
// where noted in docs/guided.md: no leap seconds, ASCII-only email and URI).
const std::map<std::string, std::string> kFormats = {
    {"date",
     "(\\d{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)-02-29|"
     "\\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|"
     "02-(0[1-9]|1\\d|2[0-8]))"},
    {"time", "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d+)?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)"},
    {"uuid", "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"},
    {"ipv4", "((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"},
    {"email",
     "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@"
     "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"},
    // RFC 1123 host names, a subset: at most 4 labels of at most 61 characters, so every one
    // fits the 253-character limit (4 * 61 + 3), which a plain repetition of labels would not;
    // and no "--" in a label's 3rd and 4th characters, which RFC 5891 reserves for A-labels
    // (`xn--`, valid only as correct Punycode, which no regular grammar checks).
    {"hostname", "(" AFM_HOST_LABEL ")(\\.(" AFM_HOST_LABEL ")){0,3}"},
    // RFC 3986 URI (absolute, with optional authority); no IPv6 host literals.
    {"uri",
     "[A-Za-z][A-Za-z0-9+.-]*:(//(([A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*@)?"
     "([A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2})*(:\\d*)?(/(" AFM_URI_PCHAR ")*)*|"
     "/((" AFM_URI_PCHAR ")+(/(" AFM_URI_PCHAR ")*)*)?|(" AFM_URI_PCHAR ")+(/(" AFM_URI_PCHAR ")*)*)?"
     "(\\?(" AFM_URI_PCHAR "|[/?])*)?(#(" AFM_URI_PCHAR "|[/?])*)?"},
};

#undef AFM_URI_PCHAR
#undef AFM_HOST_LABEL

std::string format_regex(const std::string& name) {
  if (name == "date-time") return "(" + kFormats.at("date") + ")[Tt](" + kFormats.at("time") + ")";
  auto it = kFormats.find(name);
  return it == kFormats.end() ? std::string() : it->second;
}

uint64_t length_keyword(const SchemaCompiler& c, const Json& schema, const std::string& pointer,
                        const char* key, uint64_t fallback) {
  if (!schema.contains(key)) return fallback;
  const Json& v = schema[key];
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>())) {
    c.invalid(pointer, key, "must be a non-negative integer");
  }
  return v.get<double>() > 1e18 ? uint64_t{1} << 62 : static_cast<uint64_t>(v.get<double>());
}

std::optional<Bound> bound(const SchemaCompiler& c, const Json& schema, const std::string& pointer,
                           const char* key, bool inclusive) {
  if (!schema.contains(key)) return std::nullopt;
  const Json& v = schema[key];
  if (!v.is_number()) c.invalid(pointer, key, "must be a number");
  std::optional<Decimal> d = parse_decimal(v.dump());
  if (!d) c.unsupported(pointer, key, "bound " + v.dump() + " is out of range");
  return Bound{*d, inclusive};
}

// The tighter of two lower (sign 1) or upper (sign -1) bounds.
std::optional<Bound> tighter(std::optional<Bound> a, std::optional<Bound> b, int sign) {
  if (!a) return b;
  if (!b) return a;
  int c = compare(a->value, b->value) * sign;
  if (c != 0) return c > 0 ? a : b;
  return a->inclusive ? b : a;  // equal values: exclusive wins
}

}  // namespace

Expr SchemaCompiler::string_body(const Json& schema, const std::string& pointer) {
  const uint64_t min_len = length_keyword(*this, schema, pointer, "minLength", 0);
  const uint64_t max_len = length_keyword(*this, schema, pointer, "maxLength", UINT64_MAX);
  if (min_len > max_len) return b_.nothing();
  std::string regex, keyword;
  bool search = true;
  if (schema.contains("pattern")) {
    if (!schema["pattern"].is_string()) invalid(pointer, "pattern", "must be a string");
    regex = schema["pattern"].get<std::string>();
    keyword = "pattern";
  }
  if (schema.contains("format")) {
    if (!schema["format"].is_string()) invalid(pointer, "format", "must be a string");
    const std::string name = schema["format"].get<std::string>();
    if (format_regex(name).empty()) unsupported(pointer, "format", "unknown format '" + name + "'");
    if (!keyword.empty()) unsupported(pointer, "format", "format together with pattern");
    regex = format_regex(name);
    keyword = "format";
    search = false;
  }
  if (keyword.empty()) {
    if (min_len > kMaxLengthBound || (max_len != UINT64_MAX && max_len > kMaxLengthBound)) {
      unsupported(pointer, min_len > kMaxLengthBound ? "minLength" : "maxLength",
                  "lengths above 100000 are not supported");
    }
    return b_.repeat(any_char(), static_cast<uint32_t>(min_len),
                     max_len == UINT64_MAX ? kUnbounded : static_cast<uint32_t>(max_len));
  }
  RegexExpr r;
  try {
    r = compile_regex(b_, regex, CharEncoding::kJsonString, search);
  } catch (const Error& e) {
    throw Error(e.code(), "json schema: keyword '" + keyword + "' at #" + pointer + ": " + e.what());
  }
  // A regex and a length bound together are only accepted when the regex implies the bound.
  const bool implied = r.min_chars >= min_len &&
                       (max_len == UINT64_MAX || (r.max_chars != kUnbounded && r.max_chars <= max_len));
  if (!implied) {
    unsupported(pointer, schema.contains("maxLength") ? "maxLength" : "minLength",
                "length bounds together with " + keyword + " (unless the " + keyword +
                    " implies them)");
  }
  return r.expr;
}

Expr SchemaCompiler::compile_string(const Json& schema, const std::string& pointer) {
  return b_.seq({b_.literal("\""), string_body(schema, pointer), b_.literal("\"")});
}

Expr SchemaCompiler::compile_number(const Json& schema, const std::string& pointer, bool integer) {
  std::optional<Bound> lo = tighter(bound(*this, schema, pointer, "minimum", true),
                                    bound(*this, schema, pointer, "exclusiveMinimum", false), 1);
  std::optional<Bound> hi = tighter(bound(*this, schema, pointer, "maximum", true),
                                    bound(*this, schema, pointer, "exclusiveMaximum", false), -1);
  if (schema.contains("multipleOf")) {
    const Json& m = schema["multipleOf"];
    if (!m.is_number() || m.get<double>() <= 0) invalid(pointer, "multipleOf", "must be > 0");
    std::optional<Decimal> k = parse_decimal(m.dump());
    if (!k || !k->is_integer() || k->int_digits.size() > 5 || std::stoul(k->int_digits) > 10000) {
      unsupported(pointer, "multipleOf", "only integer divisors up to 10000 are supported");
    }
    if (lo || hi) unsupported(pointer, "multipleOf", "multipleOf together with bounds");
    // For "number" too this writes integers only: a subset of the valid numbers.
    return integer_multiple(b_, static_cast<uint32_t>(std::stoul(k->int_digits)));
  }
  if (integer) {
    std::optional<Decimal> ilo, ihi;
    if (lo) ilo = integer_floor_bound(*lo);
    if (hi) ihi = integer_ceiling_bound(*hi);
    if (ilo && ihi && compare(*ilo, *ihi) > 0) return b_.nothing();
    return integer_range(b_, ilo, ihi);
  }
  if (!lo && !hi) return json_number(b_);
  return decimal_range(b_, lo, hi);
}

Expr SchemaCompiler::compile_enum(const Json& schema, const std::string& pointer) {
  std::vector<Json> values;
  if (schema.contains("enum")) {
    if (!schema["enum"].is_array()) invalid(pointer, "enum", "must be an array");
    values.assign(schema["enum"].begin(), schema["enum"].end());
  }
  if (schema.contains("const")) {
    const std::string c = canonical_json(schema["const"]);
    if (schema.contains("enum")) {
      std::erase_if(values, [&](const Json& v) { return canonical_json(v) != c; });
    } else {
      values.push_back(schema["const"]);
    }
  }
  Json rest = schema;
  rest.erase("enum");
  rest.erase("const");
  std::shared_ptr<const Grammar> filter;
  if (has_assertions(rest)) {  // keep only the values the other keywords accept
    SchemaCompiler sub(root_, piece_options());
    filter = sub.compile_detached(rest, pointer);
  }
  std::vector<Expr> options;
  for (const Json& v : values) {
    if (filter && !ByteMatcher::matches(filter, canonical_json(v))) continue;
    options.push_back(b_.literal(canonical_json(v, options_.whitespace)));
  }
  return b_.alt(std::move(options));
}

}  // namespace afm::guided
