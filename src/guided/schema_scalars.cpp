// JSON Schema strings (length, pattern, format), numbers (bounds, multipleOf), enum/const.
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/char_classes.h"
#include "guided/code_point_dfa.h"
#include "guided/number_grammar.h"
#include "guided/regex_ambiguity.h"
#include "guided/regex_compiler.h"
#include "guided/regex_parser.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

constexpr uint64_t kMaxLengthBound = 100000;
constexpr size_t kMaxMultipleStates = 20000;

#define AFM_HOST_LABEL                                                      \
  "[A-Za-z0-9]([A-Za-z0-9-]?[A-Za-z0-9])?|[A-Za-z0-9][A-Za-z0-9-]{2}[A-Za-z0-9]|" \
  "[A-Za-z0-9][A-Za-z0-9-]([A-Za-z0-9][A-Za-z0-9-]|-[A-Za-z0-9])[A-Za-z0-9-]{0,56}[A-Za-z0-9]"
#define AFM_URI_PCHAR "[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2}"
// A path segment's character in a relative reference's first segment: no ':' (RFC 3986 4.2).
#define AFM_URI_PCHAR_NC "[A-Za-z0-9._~!$&'()*+,;=@-]|%[0-9A-Fa-f]{2}"
// RFC 3987 ucschar, the Basic Multilingual Plane part: what an IRI adds to a URI's characters.
#define AFM_UCSCHAR "[\\u00A0-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFEF]"
// hier-part / relative-part after the scheme (or at the start), then query and fragment,
// over a path character class PC and a first-segment class NC (RFC 3986 3, 4.2).
#define AFM_URI_AUTHORITY(PC)                                                      \
  "//(([A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2}" PC ")*@)?"                   \
  "([A-Za-z0-9._~!$&'()*+,;=-]|%[0-9A-Fa-f]{2}" PC ")*(:\\d*)?(/(" AFM_URI_PCHAR PC ")*)*"
#define AFM_URI_PATH(PC, FIRST)                                                    \
  "(" AFM_URI_AUTHORITY(PC) "|/((" AFM_URI_PCHAR PC ")+(/(" AFM_URI_PCHAR PC ")*)*)?|(" FIRST \
  PC ")+(/(" AFM_URI_PCHAR PC ")*)*)?(\\?(" AFM_URI_PCHAR PC "|[/?])*)?(#(" AFM_URI_PCHAR PC "|[/?])*)?"
#define AFM_URI(PC) "[A-Za-z][A-Za-z0-9+.-]*:" AFM_URI_PATH(PC, AFM_URI_PCHAR)
#define AFM_RELATIVE_REF(PC) AFM_URI_PATH(PC, AFM_URI_PCHAR_NC)
#define AFM_H16 "[0-9A-Fa-f]{1,4}"
#define AFM_IPV4 "((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"
#define AFM_LS32 "(" AFM_H16 ":" AFM_H16 "|" AFM_IPV4 ")"
#define AFM_DUR_TIME "T(\\d+H(\\d+M(\\d+S)?)?|\\d+M(\\d+S)?|\\d+S)"
#define AFM_JSON_POINTER "(/([^~/]|~[01])*)*"

// Formats as full-match regexes; each accepts only strings valid for the format (a subset
// where noted in docs/guided.md: no leap seconds, ASCII-only email and URI).
const std::map<std::string, std::string> kFormats = {
    // Years 0001-9999: year 0 is valid RFC 3339 but not a Python date, which the jsonschema
    // package checks with.
    {"date",
     "(\\d{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)-02-29|"
     "(\\d{3}[1-9]|\\d{2}[1-9]\\d|\\d[1-9]\\d{2}|[1-9]\\d{3})-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|(0[469]|11)-(0[1-9]|[12]\\d|30)|"
     "02-(0[1-9]|1\\d|2[0-8]))"},
    {"time", "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d+)?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)"},
    {"uuid", "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"},
    {"ipv4", AFM_IPV4},
    // RFC 4291 2.2 text forms (RFC 3986's IPv6address): 8 groups, or fewer around one "::",
    // the last 32 bits optionally as IPv4. No zone index.
    {"ipv6",
     "(" AFM_H16 ":){6}" AFM_LS32 "|::(" AFM_H16 ":){5}" AFM_LS32 "|(" AFM_H16 ")?::(" AFM_H16
     ":){4}" AFM_LS32 "|((" AFM_H16 ":)?" AFM_H16 ")?::(" AFM_H16 ":){3}" AFM_LS32 "|((" AFM_H16
     ":){0,2}" AFM_H16 ")?::(" AFM_H16 ":){2}" AFM_LS32 "|((" AFM_H16 ":){0,3}" AFM_H16 ")?::" AFM_H16
     ":" AFM_LS32 "|((" AFM_H16 ":){0,4}" AFM_H16 ")?::" AFM_LS32 "|((" AFM_H16 ":){0,5}" AFM_H16
     ")?::" AFM_H16 "|((" AFM_H16 ":){0,6}" AFM_H16 ")?::"},
    // RFC 5321 mailbox, ASCII dot-atom subset: at most 4 local atoms of at most 64 characters,
    // and the host-name subset below as the domain. Bounded (at most 507 characters), so a
    // `maxLength` at or above that is implied and needs no automaton product.
    {"email",
     "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,64}(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,64}){0,3}@"
     "(" AFM_HOST_LABEL ")(\\.(" AFM_HOST_LABEL ")){0,3}"},
    // RFC 1123 host names, a subset: at most 4 labels of at most 61 characters, so every one
    // fits the 253-character limit (4 * 61 + 3), which a plain repetition of labels would not;
    // and no "--" in a label's 3rd and 4th characters, which RFC 5891 reserves for A-labels
    // (`xn--`, valid only as correct Punycode, which no regular grammar checks).
    {"hostname", "(" AFM_HOST_LABEL ")(\\.(" AFM_HOST_LABEL ")){0,3}"},
    // RFC 3986 URI (absolute, with optional authority) and URI reference (a URI or a
    // relative reference); RFC 3987 IRIs add the BMP's ucschar. No IPv6 host literals.
    {"uri", AFM_URI("")},
    {"uri-reference", AFM_URI("") "|" AFM_RELATIVE_REF("")},
    {"iri", AFM_URI("|" AFM_UCSCHAR)},
    {"iri-reference", AFM_URI("|" AFM_UCSCHAR) "|" AFM_RELATIVE_REF("|" AFM_UCSCHAR)},
    // "url" is no JSON Schema format (validators ignore it): written as a URI, what it means.
    {"url", AFM_URI("")},
    // RFC 3339 Appendix A durations (a subset of ISO 8601: no fractions, no gaps in Y-M-D).
    {"duration", "P((\\d+D|\\d+M(\\d+D)?|\\d+Y(\\d+M(\\d+D)?)?)(" AFM_DUR_TIME ")?|" AFM_DUR_TIME "|\\d+W)"},
    // RFC 6901 and draft-handrews-relative-json-pointer.
    {"json-pointer", AFM_JSON_POINTER},
    // The jsonschema package's checker also rejects any digit after a 0 ("105"): such prefixes
    // are left out (a subset).
    {"relative-json-pointer", "(0|[1-9]+0?)(#|" AFM_JSON_POINTER ")"},
    // OpenAPI's "byte": base64 (RFC 4648 4, padded), also no JSON Schema format.
    {"byte", "([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"},
};

#undef AFM_JSON_POINTER
#undef AFM_DUR_TIME
#undef AFM_LS32
#undef AFM_IPV4
#undef AFM_H16
#undef AFM_RELATIVE_REF
#undef AFM_URI
#undef AFM_URI_PATH
#undef AFM_URI_AUTHORITY
#undef AFM_UCSCHAR
#undef AFM_URI_PCHAR_NC
#undef AFM_URI_PCHAR
#undef AFM_HOST_LABEL

// A regex's minimised automaton. Formats are a handful of fixed regexes used by many schemas:
// their automata are built once per process (under a lock; a few ms for ipv6 or hostname).
CodePointDfa regex_dfa(const StringRegex& r) {
  if (r.keyword != "format") return CodePointDfa::from_regex(r.regex, r.search).minimized();
  static std::mutex lock;
  static std::map<std::string, CodePointDfa> built;
  std::lock_guard<std::mutex> hold(lock);
  auto it = built.find(r.regex);
  if (it == built.end()) {
    it = built.emplace(r.regex, CodePointDfa::from_regex(r.regex, r.search).minimized()).first;
  }
  return it->second;
}

// The fallback for one `pattern` whose rules would be ambiguous (regex_ambiguity.h) when the
// exact intersection with the lengths is past the automaton budget: its automaton with the
// longest string cut to what keeps the product within that budget. A sub-language, as the
// bounded repetitions' fallback is, but its Earley sets stay bounded where the repetitions'
// would grow with the text (`(.*a){20}` with maxLength 30000: 2.2 s over 600 bytes, cubic).
// Nullopt where the rules are not ambiguous, the pattern alone is too large an automaton, or no
// string of the pattern fits the lengths left.
std::optional<Expr> capped_automaton(GrammarBuilder& b, const StringRegex& r, uint64_t min_len,
                                     uint64_t max_len) {
  if (r.keyword != "pattern" || !rules_grow_with_text(regex::parse(r.regex), r.search)) {
    return std::nullopt;
  }
  try {
    const CodePointDfa dfa = regex_dfa(r);
    const uint64_t cap = std::min<uint64_t>(
        max_len, CodePointDfa::kDefaultMaxStates / (dfa.num_states() + 1) - 1);
    if (cap < min_len) return std::nullopt;
    const CodePointDfa capped =
        CodePointDfa::intersect(dfa, CodePointDfa::length_between(static_cast<uint32_t>(min_len),
                                                                  static_cast<uint32_t>(cap)))
            .minimized();
    if (capped.empty()) return std::nullopt;
    return capped.lower(b, CharEncoding::kJsonString);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kUnsupported) throw;
    return std::nullopt;
  }
}

// Formats draft 2020-12 defines whose language afm does not build: refused whatever the
// options say, since a validator asserting formats checks them.
const std::set<std::string> kUnenforcedStandardFormats = {"regex", "uri-template", "idn-email",
                                                          "idn-hostname"};

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

// The string's constraints as regexes: `pattern` (searched) and `format` (whole string).
std::vector<StringRegex> SchemaCompiler::string_regexes(const Json& schema,
                                                        const std::string& pointer) const {
  std::vector<StringRegex> out;
  if (schema.contains("pattern")) {
    if (!schema["pattern"].is_string()) invalid(pointer, "pattern", "must be a string");
    out.push_back({schema["pattern"].get<std::string>(), "pattern", true});
  }
  if (schema.contains("format")) {
    if (!schema["format"].is_string()) invalid(pointer, "format", "must be a string");
    const std::string name = schema["format"].get<std::string>();
    const std::string regex = format_regex(name);
    if (!regex.empty()) {
      out.push_back({regex, "format", false});
    } else if (kUnenforcedStandardFormats.count(name) != 0) {
      unsupported(pointer, "format", "format '" + name + "' is not enforced by this engine");
    } else if (options_.refuse_unknown_formats) {
      unsupported(pointer, "format", "unknown format '" + name + "'");
    }  // else an unknown name: an annotation (JsonSchemaOptions::refuse_unknown_formats)
  }
  return out;
}

// The string content a schema allows, as an automaton (the regular layer): every pattern and
// format intersected, then the length bounds.
CodePointDfa SchemaCompiler::string_dfa(const Json& schema, const std::string& pointer) const {
  const uint64_t min_len = length_keyword(*this, schema, pointer, "minLength", 0);
  const uint64_t max_len = length_keyword(*this, schema, pointer, "maxLength", UINT64_MAX);
  if (min_len > max_len) return CodePointDfa::nothing();
  std::string keyword = "pattern";
  try {
    CodePointDfa dfa = CodePointDfa::everything();
    for (const StringRegex& r : string_regexes(schema, pointer)) {
      keyword = r.keyword;
      dfa = CodePointDfa::intersect(dfa, regex_dfa(r)).minimized();
    }
    if (schema.contains("enum") || schema.contains("const")) {  // the string values listed
      keyword = "enum";
      std::vector<std::string> values;
      const Json listed = schema.contains("enum") ? schema["enum"] : Json::array({schema["const"]});
      if (!listed.is_array()) invalid(pointer, "enum", "must be an array");
      for (const Json& v : listed) {
        if (v.is_string() && (!schema.contains("const") || schema["const"] == v)) {
          values.push_back(v.get<std::string>());
        }
      }
      dfa = CodePointDfa::intersect(dfa, CodePointDfa::from_strings(values)).minimized();
    }
    if (schema.contains(kNotStrings)) {  // strings that must match none of these (`not`)
      keyword = "not";
      const Json& excluded = schema[kNotStrings];
      if (!excluded.is_array()) invalid(pointer, kNotStrings, "must be an array of schemas");
      for (const Json& s : excluded) {
        if (!s.is_object()) invalid(pointer, kNotStrings, "must be an array of schemas");
        dfa = CodePointDfa::intersect(dfa, string_dfa(s, pointer).complement()).minimized();
      }
    }
    if (min_len > 0 || max_len != UINT64_MAX) {
      keyword = schema.contains("maxLength") ? "maxLength" : "minLength";
      if (min_len > kMaxLengthBound || (max_len != UINT64_MAX && max_len > kMaxLengthBound)) {
        unsupported(pointer, keyword, "lengths above 100000 are not supported");
      }
      const auto hi = max_len == UINT64_MAX ? kUnbounded : static_cast<uint32_t>(max_len);
      // Only the lengths the language has need counting: a bound it already meets is free.
      const auto [shortest, longest] = dfa.empty() ? std::pair<uint32_t, uint32_t>{0, 0}
                                                   : dfa.length_range();
      if (shortest < min_len || (hi != kUnbounded && (longest == kUnbounded || longest > hi))) {
        dfa = CodePointDfa::intersect(
                  dfa, CodePointDfa::length_between(static_cast<uint32_t>(min_len), hi)).minimized();
      }
    }
    return dfa;
  } catch (const Error& e) {
    if (std::string(e.what()).rfind("json schema:", 0) == 0) throw;
    throw Error(e.code(), "json schema: keyword '" + keyword + "' at #" + pointer + ": " + e.what());
  }
}

Expr SchemaCompiler::string_body(const Json& schema, const std::string& pointer) {
  const uint64_t min_len = length_keyword(*this, schema, pointer, "minLength", 0);
  const uint64_t max_len = length_keyword(*this, schema, pointer, "maxLength", UINT64_MAX);
  if (min_len > max_len) return b_.nothing();
  const std::vector<StringRegex> regexes = string_regexes(schema, pointer);
  // A counted repetition costs the same for any count (byte_matcher.h). A maxLength past the
  // largest count is read as that count (over 4 billion characters: narrower, never wider).
  const uint32_t max_count = static_cast<uint32_t>(std::min<uint64_t>(max_len, kUnbounded - 1));
  const bool countable = min_len < kUnbounded;
  // One regex with its repetitions bounded to fit the lengths (regex_compiler.h).
  auto within = [&](bool exact_only) -> std::optional<RegexExpr> {
    if (!countable) return std::nullopt;
    return compile_regex_within(b_, regexes[0].regex, CharEncoding::kJsonString,
                                regexes[0].search, static_cast<uint32_t>(min_len), max_count,
                                exact_only);
  };
  if (regexes.empty() && !schema.contains(kNotStrings)) {
    if (!countable) unsupported(pointer, "minLength", "lengths of 2^32 - 1 or more");
    return b_.repeat(any_char(), static_cast<uint32_t>(min_len),
                     max_len == UINT64_MAX ? kUnbounded : max_count);
  }
  // One regex whose lengths imply the bounds: its grammar directly. (Lowering a format from
  // its automaton instead was measured: cold mask p99 87-94 -> 97-125 us on the Qwen2 task
  // file, so formats keep the regex grammar.)
  if (regexes.size() == 1 && !schema.contains(kNotStrings)) {
    RegexExpr r;
    try {
      r = compile_regex(b_, regexes[0].regex, CharEncoding::kJsonString, regexes[0].search,
                        /*trusted_rules=*/regexes[0].keyword == "format");
    } catch (const Error& e) {
      throw Error(e.code(), "json schema: keyword '" + regexes[0].keyword + "' at #" + pointer +
                                ": " + e.what());
    }
    if (r.min_chars >= min_len &&
        (max_len == UINT64_MAX || (r.max_chars != kUnbounded && r.max_chars <= max_len))) {
      return r.expr;
    }
    // `^[\p{L}\p{N}_-]*$` with maxLength 128: its one repetition bounded is the intersection
    // exactly, as a counted repetition (cheaper to build than the automaton, and the mask
    // layer's counted loops serve it).
    if (std::optional<RegexExpr> exact = within(/*exact_only=*/true)) return exact->expr;
  }
  // Several regexes, or bounds the regex does not imply: their intersection, as an automaton.
  try {
    return string_dfa(schema, pointer).lower(b_, CharEncoding::kJsonString);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kUnsupported || regexes.size() != 1 ||
        schema.contains(kNotStrings)) {
      throw;
    }
    // Too large an automaton (or a bound past its budget): a sub-language, the capped automaton
    // of an ambiguous pattern or else the bounded repetitions.
    if (std::optional<Expr> capped = capped_automaton(b_, regexes[0], min_len, max_len)) {
      return *capped;
    }
    std::optional<RegexExpr> narrower = within(/*exact_only=*/false);
    if (!narrower) throw;
    return narrower->expr;
  }
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
    if (!k) invalid(pointer, "multipleOf", "must be a number");
    if (k->is_integer() && k->int_digits.size() <= 5 && std::stoul(k->int_digits) <= 10000 && !lo && !hi) {
      // For "number" too this writes integers only: a subset of the valid numbers.
      return integer_multiple(b_, static_cast<uint32_t>(std::stoul(k->int_digits)));
    }
    // Decimal divisors and bounds: one digit automaton for both.
    std::optional<Expr> e = multiple_range(b_, *k, integer, lo, hi, kMaxMultipleStates);
    if (!e) {
      unsupported(pointer, "multipleOf",
                  "divisors p * 10^-s need p <= 10000, s <= 9, bounds of at most 40 digits and at "
                  "most 20000 automaton states (budget: number automaton states)");
    }
    return *e;
  }
  if (integer) {
    std::optional<Decimal> ilo, ihi;
    if (lo) ilo = integer_floor_bound(*lo);
    if (hi) ihi = integer_ceiling_bound(*hi);
    if (ilo && ihi && compare(*ilo, *ihi) > 0) return b_.nothing();
    return integer_range(b_, ilo, ihi);
  }
  if (unique_items_depth_ > 0) return unique_number(pointer, lo, hi);
  if (!lo && !hi) return json_number(b_);
  return decimal_range(b_, lo, hi);
}

// Inside a unique array's items every value needs one text (unique_items.h compares texts):
// canonical numbers, and within bounds the multiples of 10^-9 (fixed notation without trailing
// zeros; at most 9 fraction digits, a subset).
Expr SchemaCompiler::unique_number(const std::string& pointer, const std::optional<Bound>& lo,
                                   const std::optional<Bound>& hi) {
  if (!lo && !hi) return canonical_number(b_);
  const Decimal step{false, "0", "000000001"};
  std::optional<Expr> e = multiple_range(b_, step, false, lo, hi, kMaxMultipleStates);
  if (!e) {
    unsupported(pointer, "uniqueItems", "numbers within these bounds need more than " +
                                            std::to_string(kMaxMultipleStates) +
                                            " automaton states (budget: number automaton states)");
  }
  return *e;
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
