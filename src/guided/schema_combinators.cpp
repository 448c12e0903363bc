// JSON Schema anyOf and allOf (by merging keywords); oneOf is in schema_one_of.cpp.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

const std::set<std::string> kMinKeywords = {"minLength", "minItems", "minimum", "exclusiveMinimum",
                                            "minProperties"};
const std::set<std::string> kMaxKeywords = {"maxLength", "maxItems", "maximum", "exclusiveMaximum",
                                            "maxProperties"};

}  // namespace

// `properties` and `required` of the schemas an allOf merges, gathered with hash indexes: an
// ordered_json object is a vector searched linearly, so merging branch by branch into it was
// quadratic in the number of names (1,000 branches of 40 properties: 2.6 s).
struct MemberMerge {
  bool any_properties = false, any_required = false;
  std::vector<std::pair<std::string, Json>> properties;  // in first-seen order
  std::unordered_map<std::string, size_t> property_index;
  Json required = Json::array();
  std::unordered_set<std::string> required_names;
  // oneOf and if/then/else met again after the merged schema has one: applied to the whole
  // merge at the end (wrap_deferred), in the order met.
  std::vector<Json> deferred;

  void add_properties(const Json& props) {
    any_properties = true;
    for (const auto& [name, sub] : props.items()) {
      auto [it, added] = property_index.emplace(name, properties.size());
      if (added) {
        properties.emplace_back(name, sub);
      } else if (Json& mine = properties[it->second].second; mine != sub) {
        mine = Json{{"allOf", Json::array({std::move(mine), sub})}};
      }
    }
  }

  void add_required(const Json& names) {
    any_required = true;
    for (const Json& name : names) {
      if (!name.is_string() || required_names.insert(name.get<std::string>()).second) {
        required.push_back(name);  // non-strings are reported by compile_object
      }
    }
  }

  void write_to(Json& dst) {
    if (any_properties) {
      // Names are unique by construction: append to the underlying vector of ordered_json's
      // object (operator[] would search it once per name).
      Json::object_t object;
      object.reserve(properties.size());
      auto& members = static_cast<std::vector<Json::object_t::value_type>&>(object);
      for (auto& [name, sub] : properties) members.emplace_back(name, std::move(sub));
      dst["properties"] = Json(std::move(object));
    }
    if (any_required) dst["required"] = std::move(required);
  }
};

Expr SchemaCompiler::compile_any_of(const Json& schema, const std::string& pointer, int depth) {
  const Json& branches = schema["anyOf"];
  if (!branches.is_array() || branches.empty()) invalid(pointer, "anyOf", "must be a non-empty array");
  Json siblings = schema;
  siblings.erase("anyOf");
  const std::string ptr = child_pointer(pointer, "anyOf");
  std::vector<Expr> options;
  for (size_t i = 0; i < branches.size(); ++i) {
    const std::string branch_ptr = child_pointer(ptr, std::to_string(i));
    if (!has_assertions(siblings)) {
      options.push_back(compile(branches[i], branch_ptr, depth + 1));
    } else {  // distribute the sibling keywords into each branch
      Json both = {{"allOf", Json::array({siblings, branches[i]})}};
      options.push_back(compile(both, branch_ptr, depth + 1));
    }
  }
  return b_.alt(std::move(options));
}

Json SchemaCompiler::inline_ref(const Json& branch, const std::string& pointer, int depth) {
  if (depth > 64) unsupported(pointer, "$ref", "references nested deeper than 64 inside allOf");
  if (!branch.is_object() || !branch.contains("$ref")) return branch;
  if (!branch["$ref"].is_string()) invalid(pointer, "$ref", "must be a string");
  std::string target_pointer;
  const Json& target = resolve_ref(branch["$ref"].get<std::string>(), pointer, &target_pointer);
  Json rest = branch;
  rest.erase("$ref");
  Json merged = Json::object();
  merged["allOf"] = Json::array({inline_ref(target, pointer, depth + 1), rest});
  return merge_all_of(merged, pointer, depth + 1);
}

Json SchemaCompiler::merge_all_of(const Json& schema, const std::string& pointer, int depth) {
  if (depth > 128) unsupported(pointer, "allOf", "allOf nested deeper than 128");
  const Json& branches = schema["allOf"];
  if (!branches.is_array() || branches.empty()) invalid(pointer, "allOf", "must be a non-empty array");
  Json result = Json::object();
  MemberMerge members;
  Json own = Json::object();
  for (const auto& [key, value] : schema.items()) {
    if (key != "allOf" && !is_annotation_keyword(key)) own[key] = value;
  }
  merge_into(result, own, pointer, members);
  for (const Json& raw : branches) {
    Json branch = inline_ref(raw, pointer, depth + 1);
    if (branch.is_boolean()) {
      if (!branch.get<bool>()) return Json(false);
      continue;
    }
    if (!branch.is_object()) invalid(pointer, "allOf", "branches must be schemas");
    if (branch.contains("allOf")) branch = merge_all_of(branch, pointer, depth + 1);
    if (branch.is_boolean()) {
      if (!branch.get<bool>()) return Json(false);
      continue;
    }
    merge_into(result, branch, pointer, members);
  }
  members.write_to(result);
  for (const Json& extra : members.deferred) {
    result = wrap_deferred(std::move(result), extra, pointer, depth);
  }
  return result;
}

namespace {

constexpr size_t kMaxAllOfProduct = 256;  // branches of an anyOf built from two

Json all_of(std::vector<Json> parts) { return Json{{"allOf", Json(std::move(parts))}}; }

}  // namespace

// R and a keyword R already has, as one schema (exact):
//  - oneOf B: R and exactly one b of B is exactly one of (R and b);
//  - if I then T else E: (R and I and T) or (R and not I and E), T and E true when absent.
// Each oneOf branch is merged at once, so that the oneOf narrowing (schema_one_of.cpp) reads
// the branches' properties and required names.
Json SchemaCompiler::wrap_deferred(Json merged, const Json& extra, const std::string& pointer,
                                   int depth) {
  if (extra.contains("oneOf")) {
    if (!extra["oneOf"].is_array()) invalid(pointer, "oneOf", "must be a non-empty array");
    Json branches = Json::array();
    for (const Json& b : extra["oneOf"]) {
      branches.push_back(merge_all_of(all_of({merged, b}), pointer, depth + 1));
    }
    return Json{{"oneOf", std::move(branches)}};
  }
  const Json then = extra.value("then", Json::object());
  const Json otherwise = extra.value("else", Json::object());
  return Json{{"anyOf", Json::array({all_of({merged, extra["if"], then}),
                                     all_of({merged, Json{{"not", extra["if"]}}, otherwise})})}};
}

void SchemaCompiler::merge_into(Json& dst, const Json& src, const std::string& pointer,
                                MemberMerge& members) {
  auto restricts_others = [](const Json& s) {
    return s.contains("additionalProperties") && s["additionalProperties"] != Json(true);
  };
  // A branch whose additionalProperties restricts the keys it does not declare keeps its
  // meaning in the merge only if the other side declares no name it lacks (a name both declare
  // is checked by both property schemas, merged) and has no patternProperties.
  auto declares = [](const Json& s, const std::string& name) {
    return s.contains("properties") && s["properties"].is_object() && s["properties"].contains(name);
  };
  // Names src declares that the merged branches so far (members) do not, or src's patterns.
  auto src_adds_keys = [&] {
    if (src.contains("patternProperties")) return true;
    if (!src.contains("properties") || !src["properties"].is_object()) return false;
    for (const auto& [name, sub] : src["properties"].items()) {
      if (!members.property_index.count(name)) return true;
    }
    return false;
  };
  // Names the merged branches so far declare that src does not, or their patterns.
  auto dst_adds_keys = [&] {
    if (dst.contains("patternProperties")) return true;
    for (const auto& [name, sub] : members.properties) {
      if (!declares(src, name)) return true;
    }
    return false;
  };
  if ((restricts_others(dst) && src_adds_keys()) || (restricts_others(src) && dst_adds_keys()) ||
      (dst.contains("prefixItems") && src.contains("items")) ||
      (src.contains("prefixItems") && dst.contains("items"))) {
    unsupported(pointer, "allOf",
                "additionalProperties/items in one branch with properties/patternProperties/prefixItems in another");
  }
  if (src.contains("properties")) {
    if (!src["properties"].is_object()) invalid(pointer, "properties", "must be an object");
    members.add_properties(src["properties"]);
  }
  if (src.contains("required")) {
    if (!src["required"].is_array()) invalid(pointer, "required", "must be an array of strings");
    members.add_required(src["required"]);
  }
  // if / then / else act together, within their own schema: a then / else without an `if`
  // beside it has no effect, and two branches' conditions cannot share one set of keywords:
  // the second applies to the whole merge (wrap_deferred).
  const bool second_conditional = src.contains("if") && dst.contains("if");
  const bool own_conditional = src.contains("if") && !second_conditional;
  if (second_conditional) {
    Json c = Json::object();
    for (const char* k : {"if", "then", "else"}) {
      if (src.contains(k)) c[k] = src[k];
    }
    members.deferred.push_back(std::move(c));
  }
  for (const auto& [key, value] : src.items()) {
    if (is_annotation_keyword(key) || key == "properties" || key == "required") continue;
    if ((key == "if" || key == "then" || key == "else") && !own_conditional) continue;
    if (!dst.contains(key)) {
      dst[key] = value;
      continue;
    }
    Json& mine = dst[key];
    if (mine == value || !is_assertion_keyword(key)) continue;  // an unknown keyword: annotation
    if (key == "type") {
      Json a = mine.is_array() ? mine : Json::array({mine});
      Json b = value.is_array() ? value : Json::array({value});
      Json both = Json::array();
      for (const Json& t : a) {
        for (const Json& u : b) {
          if (t == u || (t == "integer" && u == "number")) both.push_back(t);
          else if (t == "number" && u == "integer") both.push_back(u);
        }
      }
      mine = both;
    } else if (key == kNotStrings && mine.is_array() && value.is_array()) {
      mine.insert(mine.end(), value.begin(), value.end());
    } else if (key == "items" || key == "additionalProperties") {
      mine = Json{{"allOf", Json::array({mine, value})}};
    } else if (key == "not") {  // not A and not B is not (A or B)
      mine = Json{{"anyOf", Json::array({mine, value})}};
    } else if (key == "anyOf" && mine.is_array() && value.is_array()) {
      // (a1 or a2) and (b1 or b2): the pairs, each branch both.
      if (mine.size() * value.size() > kMaxAllOfProduct) {
        unsupported(pointer, "allOf", "two anyOf of more than " +
                                          std::to_string(kMaxAllOfProduct) + " pairs");
      }
      Json pairs = Json::array();
      for (const Json& a : mine) {
        for (const Json& b : value) pairs.push_back(Json{{"allOf", Json::array({a, b})}});
      }
      mine = std::move(pairs);
    } else if (key == "uniqueItems" && mine.is_boolean() && value.is_boolean()) {
      mine = mine.get<bool>() || value.get<bool>();
    } else if (key == "oneOf") {
      members.deferred.push_back(Json{{"oneOf", value}});
    } else if (kMinKeywords.count(key) && mine.is_number() && value.is_number()) {
      if (value > mine) mine = value;
    } else if (kMaxKeywords.count(key) && mine.is_number() && value.is_number()) {
      if (value < mine) mine = value;
    } else if (key == "enum" || key == "const") {
      Json keep = Json::array();
      Json a = key == "const" ? Json::array({mine}) : mine;
      for (const Json& v : a.is_array() ? a : Json::array()) {
        for (const Json& u : value.is_array() && key == "enum" ? value : Json::array({value})) {
          if (canonical_json(u) == canonical_json(v)) keep.push_back(v);
        }
      }
      dst.erase(key);
      dst["enum"] = keep;
    } else {
      unsupported(pointer, "allOf", "cannot merge '" + key + "' appearing in several branches");
    }
  }
}

}  // namespace afm::guided
