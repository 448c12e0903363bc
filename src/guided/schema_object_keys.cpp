// JSON Schema object keys through the regular layer (code_point_dfa.h): `patternProperties`
// beside `additionalProperties` and declared names, and `propertyNames`.
//
// A key's value schema depends on which patterns match it: every matching pattern's schema
// applies, and `additionalProperties` only where none does. So the keys that are not declared
// are cut into disjoint regions, one per set S of patterns (keys matched by exactly the patterns
// in S), each an automaton: the intersection of S's languages and the complements of the
// others', minus the declared names, within `propertyNames`. A region's value schema is the
// allOf of S's schemas (additionalProperties for S empty). Patterns with one schema are one
// pattern (their union), empty regions are dropped on the way, and at most kMaxPatternGroups
// distinct schemas are separated (2^k regions at worst). Declared and required names matched
// by patterns get the allOf of their own schema and the patterns'. Exact, except that keys
// written as additional properties may still repeat each other (as without patterns).
#include <algorithm>
#include <functional>
#include <set>

#include "guided/code_point_dfa.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

constexpr size_t kMaxPatternGroups = 8;

Json all_of_schemas(const std::vector<Json>& schemas) {
  if (schemas.size() == 1) return schemas[0];
  return Json{{"allOf", Json(schemas)}};
}

}  // namespace

ObjectKeyRules SchemaCompiler::object_key_rules(const Json& schema,
                                                const std::string& pointer) const {
  ObjectKeyRules rules;
  if (schema.contains("propertyNames")) rules.names = property_names_dfa(schema, pointer);
  if (!schema.contains("patternProperties")) return rules;
  const Json& patterns = schema["patternProperties"];
  if (!patterns.is_object()) invalid(pointer, "patternProperties", "must be an object");
  const std::string ptr = child_pointer(pointer, "patternProperties");
  for (const auto& [pattern, sub] : patterns.items()) {
    const std::string at = child_pointer(ptr, pattern);
    CodePointDfa keys = string_dfa(Json{{"pattern", pattern}}, at);
    const Json& value = sub;  // (a structured binding cannot be captured before C++20's clang 16)
    auto same = std::find_if(rules.groups.begin(), rules.groups.end(),
                             [&](const PatternGroup& g) { return g.schema == value; });
    if (same != rules.groups.end()) {
      same->keys = CodePointDfa::unite(same->keys, keys).minimized();
      continue;
    }
    if (rules.groups.size() == kMaxPatternGroups) {
      unsupported(pointer, "patternProperties",
                  "more than " + std::to_string(kMaxPatternGroups) + " distinct pattern schemas");
    }
    rules.groups.push_back({std::move(keys), sub, at});
  }
  return rules;
}

// propertyNames: the keys as strings. Only string keywords (and `type` allowing strings) can
// apply to a key; anything else would need the general schema language over keys.
CodePointDfa SchemaCompiler::property_names_dfa(const Json& schema, const std::string& pointer) const {
  const std::string ptr = child_pointer(pointer, "propertyNames");
  const Json& names = look_through_refs(schema["propertyNames"], ptr);
  if (names.is_boolean()) return names.get<bool>() ? CodePointDfa::everything() : CodePointDfa::nothing();
  if (!names.is_object()) invalid(pointer, "propertyNames", "must be a schema");
  static const std::set<std::string> kKeyKeywords = {"type",      "pattern",   "format", "minLength",
                                                     "maxLength", "enum",      "const"};
  for (const auto& [key, value] : names.items()) {
    if (!kKeyKeywords.count(key) && !is_annotation_keyword(key)) {
      unsupported(ptr, "propertyNames", "keyword '" + key + "' on property names");
    }
  }
  if (names.contains("type")) {
    const Json& t = names["type"];
    const bool strings = t == "string" || (t.is_array() && std::find(t.begin(), t.end(), "string") != t.end());
    if (!strings) return CodePointDfa::nothing();
  }
  return string_dfa(names, ptr);
}

bool ObjectKeyRules::allows(const std::string& name) const { return !names || names->matches(name); }

std::optional<Json> ObjectKeyRules::value_schema(const std::string& name, const Json* own) const {
  std::vector<Json> schemas;
  if (own != nullptr) schemas.push_back(*own);
  for (const PatternGroup& g : groups) {
    if (g.keys.matches(name)) schemas.push_back(g.schema);
  }
  if (schemas.empty()) return std::nullopt;
  return all_of_schemas(schemas);
}

std::optional<Expr> SchemaCompiler::regular_additional_members(const ObjectKeyRules& rules,
                                                               const std::vector<std::string>& names,
                                                               const Json& additional,
                                                               const std::string& pointer, int depth) {
  // Minimised, "every key" (no names) is one looping state: intersections skip the product.
  CodePointDfa base = CodePointDfa::from_strings(names).complement().minimized();
  if (rules.names) base = CodePointDfa::intersect(base, *rules.names).minimized();
  const Expr quote = b_.literal("\"");
  std::vector<Expr> regions;
  auto emit = [&](const CodePointDfa& keys, const std::vector<size_t>& chosen) {
    std::vector<Json> schemas;
    std::string at = child_pointer(pointer, "additionalProperties");
    for (size_t i : chosen) schemas.push_back(rules.groups[i].schema);
    if (!chosen.empty()) at = rules.groups[chosen[0]].pointer;
    const Json value = chosen.empty() ? additional : all_of_schemas(schemas);
    if (value == Json(false)) return;
    regions.push_back(b_.seq({quote, keys.lower(b_, CharEncoding::kJsonString), quote, colon(),
                              compile(value, at, depth + 1)}));
  };
  // Depth-first over the patterns: in or out of each, pruning empty intersections.
  std::vector<size_t> chosen;
  std::function<void(size_t, const CodePointDfa&)> split = [&](size_t i, const CodePointDfa& keys) {
    if (keys.empty()) return;
    if (i == rules.groups.size()) {
      emit(keys, chosen);
      return;
    }
    chosen.push_back(i);
    split(i + 1, CodePointDfa::intersect(keys, rules.groups[i].keys).minimized());
    chosen.pop_back();
    split(i + 1, CodePointDfa::intersect(keys, rules.groups[i].keys.complement()).minimized());
  };
  split(0, base);
  if (regions.empty()) return std::nullopt;
  return b_.alt(std::move(regions));
}

}  // namespace afm::guided
