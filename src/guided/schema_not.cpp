// JSON Schema `not`, as a union of positive schemas.
//
// A schema is the conjunction of its keywords, so an instance fails N exactly when it fails
// one of them; and a keyword constrains only the types it applies to (a string keyword holds
// for every number). So `not N` is the union, over N's keywords, of each keyword's complement
// within its own type:
//   type T                  -> the other types (numbers only when neither number nor integer
//                              is in T: "numbers that are not integers" is left out, a subset)
//   required [r...]         -> objects without r, for each r
//   pattern, format,        -> strings outside their intersection (the regular layer's
//   minLength, maxLength       complement, through the internal keyword kNotStrings)
//   enum / const V          -> strings not in V (a complement too), null / booleans not in V,
//                              numbers between V's numbers (open intervals; up to 64 of them),
//                              and every type V has no value of; arrays and objects that V
//                              mentions are left out (a subset), as are numbers past 64
//   minimum, maximum, ...   -> the opposite exclusive bound, on numbers
//   minItems, maxItems,     -> the opposite count, on arrays / objects
//   minProperties, ...
//   properties {p: S}       -> objects that have p with a value in `not S`, for each p
//   allOf [A, B...]         -> not A, or not B, ...
//   not X                   -> X
//   $ref (alone)            -> not of its target
// Anything else (anyOf, items, additionalProperties, multipleOf...) fails closed naming `not`.
// `*exact` is cleared where a subset is taken (oneOf narrowing accepts exact negations only).
// Leaving instances out keeps the soundness rule (every accepted instance is valid); it is
// stated where it happens. The siblings of `not` apply to every alternative (allOf).
#include <algorithm>
#include <set>

#include "base/error.h"
#include "guided/number_grammar.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

const char* const kAllTypes[] = {"null", "boolean", "object", "array", "string", "number"};

const std::set<std::string> kStringKeywords = {"pattern", "format", "minLength", "maxLength"};
const std::set<std::string> kBounds = {"minimum",  "maximum",  "exclusiveMinimum", "exclusiveMaximum",
                                       "minItems", "maxItems", "minProperties",    "maxProperties"};

Json typed(const char* type, Json rest = Json::object()) {
  rest["type"] = type;
  return rest;
}

std::set<std::string> type_set(const Json& t) {
  std::set<std::string> out;
  for (const Json& n : t.is_array() ? t : Json::array({t})) {
    if (n.is_string()) out.insert(n.get<std::string>());
  }
  return out;
}

// The opposite of a numeric or count bound, as {keyword: value} on `type`, or null when the
// complement is empty (minItems 0).
Json opposite_bound(const std::string& key, const Json& v) {
  if (key == "minimum") return typed("number", {{"exclusiveMaximum", v}});
  if (key == "maximum") return typed("number", {{"exclusiveMinimum", v}});
  if (key == "exclusiveMinimum") return typed("number", {{"maximum", v}});
  if (key == "exclusiveMaximum") return typed("number", {{"minimum", v}});
  const bool items = key == "minItems" || key == "maxItems";
  const char* type = items ? "array" : "object";
  const double n = v.get<double>();
  if (key == "minItems" || key == "minProperties") {
    if (n <= 0) return nullptr;
    return typed(type, {{items ? "maxItems" : "maxProperties", n - 1}});
  }
  return typed(type, {{items ? "minItems" : "minProperties", n + 1}});
}

}  // namespace

std::vector<Json> SchemaCompiler::negate(const Json& raw, const std::string& pointer, int depth,
                                         bool* exact) const {
  if (depth > 32) unsupported(pointer, "not", "negations nest deeper than 32 levels");
  const Json& n = look_through_refs(raw, pointer);
  if (n.is_boolean()) return n.get<bool>() ? std::vector<Json>{} : std::vector<Json>{Json::object()};
  if (!n.is_object()) invalid(pointer, "not", "must be a schema");
  std::vector<Json> out;
  Json strings = Json::object();
  for (const auto& [key, v] : n.items()) {
    if (is_annotation_keyword(key)) continue;
    if (key == "type") {
      negate_type(v, &out, exact);
    } else if (key == "required") {
      if (!v.is_array()) invalid(pointer, "required", "must be an array of strings");
      for (const Json& name : v) {
        if (!name.is_string()) invalid(pointer, "required", "must be an array of strings");
        out.push_back(typed("object", {{"properties", {{name.get<std::string>(), false}}}}));
      }
    } else if (kStringKeywords.count(key)) {
      strings[key] = v;
    } else if (key == "enum" || key == "const") {
      negate_values(key == "enum" ? v : Json::array({v}), pointer, &out, exact);
    } else if (kBounds.count(key)) {
      if (!v.is_number()) invalid(pointer, key, "must be a number");
      if (Json b = opposite_bound(key, v); !b.is_null()) out.push_back(std::move(b));
    } else if (key == "properties" && v.is_object()) {
      for (const auto& [name, sub] : v.items()) {
        for (Json& alt : negate(sub, child_pointer(child_pointer(pointer, "properties"), name), depth + 1,
                                exact)) {
          out.push_back(typed("object", {{"required", {name}}, {"properties", {{name, std::move(alt)}}}}));
        }
      }
    } else if (key == "allOf" && v.is_array()) {
      for (const Json& branch : v) {
        for (Json& alt : negate(branch, pointer, depth + 1, exact)) out.push_back(std::move(alt));
      }
    } else if (key == "anyOf" && v.is_array() && !v.empty()) {
      negate_any_of(v, pointer, depth, exact, &out);
    } else if (key == "not") {
      out.push_back(v);  // an instance fails `not X` exactly when it satisfies X
    } else {
      unsupported(pointer, "not", "negation of '" + key + "' is not supported");
    }
  }
  if (!strings.empty()) out.push_back(typed("string", {{kNotStrings, Json::array({strings})}}));
  return out;
}

// not (A or B) is (not A) and (not B): every choice of one alternative per branch, merged.
void SchemaCompiler::negate_any_of(const Json& branches, const std::string& pointer, int depth,
                                   bool* exact, std::vector<Json>* out) const {
  constexpr size_t kMaxChoices = 512;
  std::vector<Json> choices = {Json::array()};  // allOf parts so far
  for (const Json& branch : branches) {
    std::vector<Json> negated = negate(branch, pointer, depth + 1, exact);
    std::vector<Json> next;
    for (const Json& parts : choices) {
      for (const Json& alt : negated) {
        if (next.size() == kMaxChoices) {
          unsupported(pointer, "not", "negation of 'anyOf' with more than 512 combinations");
        }
        Json more = parts;
        more.push_back(alt);
        next.push_back(std::move(more));
      }
    }
    choices = std::move(next);  // a branch that is always true leaves none: nothing negates it
  }
  for (Json& parts : choices) {
    out->push_back(parts.size() == 1 ? std::move(parts[0]) : Json{{"allOf", std::move(parts)}});
  }
}

std::optional<std::vector<Json>> SchemaCompiler::exact_negation(const Json& schema,
                                                                const std::string& pointer) const {
  bool exact = true;
  std::vector<Json> alternatives;
  try {
    alternatives = negate(schema, pointer, 0, &exact);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kUnsupported) throw;
    return std::nullopt;  // a keyword without a complement
  }
  if (!exact) return std::nullopt;
  return alternatives;
}

void SchemaCompiler::negate_type(const Json& t, std::vector<Json>* out, bool* exact) const {
  const std::set<std::string> in = type_set(t);
  const bool numeric = in.count("number") || in.count("integer");
  if (in.count("integer") && !in.count("number")) *exact = false;  // non-integral numbers
  std::vector<std::string> rest;
  for (const char* name : kAllTypes) {
    if (in.count(name) || (numeric && std::string(name) == "number")) continue;
    rest.emplace_back(name);
  }
  if (!rest.empty()) out->push_back(Json{{"type", rest}});
}

namespace {

// The numbers between the listed ones: the open intervals below the smallest, between
// neighbours and above the largest (exact). False, adding nothing, past kMaxGaps values.
bool number_gaps(const Json& values, std::vector<Json>* out) {
  constexpr size_t kMaxGaps = 64;
  std::vector<std::pair<Decimal, Json>> numbers;
  for (const Json& v : values) {
    if (!v.is_number()) continue;
    std::optional<Decimal> d = parse_decimal(v.dump());
    if (!d) return false;
    numbers.emplace_back(*d, v);
  }
  std::sort(numbers.begin(), numbers.end(),
            [](const auto& a, const auto& b) { return compare(a.first, b.first) < 0; });
  numbers.erase(std::unique(numbers.begin(), numbers.end(),
                            [](const auto& a, const auto& b) { return compare(a.first, b.first) == 0; }),
                numbers.end());
  if (numbers.size() > kMaxGaps) return false;
  out->push_back(typed("number", {{"exclusiveMaximum", numbers.front().second}}));
  for (size_t i = 0; i + 1 < numbers.size(); ++i) {
    out->push_back(typed("number", {{"exclusiveMinimum", numbers[i].second},
                                    {"exclusiveMaximum", numbers[i + 1].second}}));
  }
  out->push_back(typed("number", {{"exclusiveMinimum", numbers.back().second}}));
  return true;
}

}  // namespace

// Values V: strings outside V, null / booleans not in V, the numbers between V's numbers, and
// every type with no value in V.
void SchemaCompiler::negate_values(const Json& values, const std::string& pointer,
                                   std::vector<Json>* out, bool* exact) const {
  if (!values.is_array()) invalid(pointer, "enum", "must be an array");
  Json strings = Json::array();
  bool has_null = false, has_true = false, has_false = false, has_number = false;
  bool has_array = false, has_object = false;
  for (const Json& v : values) {
    if (v.is_string()) strings.push_back(v);
    has_null |= v.is_null();
    has_true |= v.is_boolean() && v.get<bool>();
    has_false |= v.is_boolean() && !v.get<bool>();
    has_number |= v.is_number();
    has_array |= v.is_array();
    has_object |= v.is_object();
  }
  if (has_number && !number_gaps(values, out)) *exact = false;  // numbers are left out
  if (has_array || has_object) *exact = false;  // their types are left out
  out->push_back(typed("string", {{kNotStrings, Json::array({Json{{"enum", strings}}})}}));
  if (!has_null) out->push_back(typed("null"));
  if (!has_true || !has_false) {
    out->push_back(has_true || has_false ? Json{{"const", !has_true}} : typed("boolean"));
  }
  if (!has_number) out->push_back(typed("number"));
  if (!has_array) out->push_back(typed("array"));
  if (!has_object) out->push_back(typed("object"));
}

Expr SchemaCompiler::compile_not(const Json& schema, const std::string& pointer, int depth) {
  const Json& negated = schema["not"];
  if (!negated.is_boolean() && !negated.is_object()) invalid(pointer, "not", "must be a schema");
  Json rest = schema;
  rest.erase("not");
  bool exact = true;  // `not` accepts the documented subsets
  std::vector<Json> alternatives = negate(negated, child_pointer(pointer, "not"), 0, &exact);
  if (alternatives.empty()) return b_.nothing();
  Json either = alternatives.size() == 1 ? alternatives[0] : Json{{"anyOf", alternatives}};
  if (!has_assertions(rest)) return compile(either, pointer, depth + 1);
  return compile(Json{{"allOf", Json::array({rest, either})}}, pointer, depth + 1);
}

}  // namespace afm::guided
