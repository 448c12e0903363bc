// uniqueItems: which arrays the compiler may mark unique. UniqueItemsGuard (unique_items.h)
// compares element texts, so every value an element can take must have exactly one text in
// the grammar. Compiled grammars fix the whitespace, escape a character one way only, write
// integers without leading zeros or "-0" and declared properties in one order, and inside a
// unique array's items write numbers in one text each (SchemaCompiler::unique_number), so
// strings, numbers, booleans, null, arrays of those and objects without undeclared keys
// qualify. Refused, naming the place: objects that may have undeclared keys (they come in any
// order), items that may be any value, enum or const values with fractions or multi-key
// objects (written as given: 1.5 and 1.50 are one value, and an object's keys may come in
// another order than the properties beside them). Unique arrays inside the items qualify (the guard
// follows them all). The check is static and conservative: it reads every
// subschema an element can reach, $ref targets once each.
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "guided/schema_budget.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

bool type_allows(const Json& schema, const char* type) {
  if (!schema.contains("type")) return true;
  const Json& t = schema["type"];
  if (t.is_string()) return t == type;
  if (!t.is_array()) return true;
  for (const Json& u : t) {
    if (u == type) return true;
  }
  return false;
}

// A value with one text: no fractions, no object with two keys (their order is the value's).
bool literal_has_one_text(const Json& v) {
  if (v.is_number_float()) {  // canonical_json writes an integral one as an integer
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18;
  }
  if (v.is_object() && v.size() > 1) return false;
  if (v.is_object() || v.is_array()) {
    for (const auto& [key, sub] : v.items()) {
      if (!literal_has_one_text(sub)) return false;
    }
  }
  return true;
}

// The JSON Schema type of a value ("integer" for integral numbers).
const char* json_type_name(const Json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_null()) return "null";
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  const double d = v.get<double>();
  return d == std::floor(d) ? "integer" : "number";
}

bool has_combinator(const Json& s) {
  return s.contains("anyOf") || s.contains("oneOf") || s.contains("allOf") || s.contains("$ref");
}

}  // namespace

namespace {

// What a subschema inherits from the schemas it is merged with (the parent of an anyOf /
// oneOf / allOf / if branch, the schema holding a $ref: the compiler merges their keywords
// into it): the types they allow, whether their objects are closed (additionalProperties
// false, no patternProperties), whether they give arrays an items schema.
struct UniqueContext {
  uint8_t types = 0x7f;  // bit per JSON type, kTypeBits order
  bool closed = false;
  bool items = false;
  bool operator<(const UniqueContext& o) const {
    return std::tie(types, closed, items) < std::tie(o.types, o.closed, o.items);
  }
};

constexpr const char* kTypeBits[] = {"null", "boolean", "object", "array", "string", "number", "integer"};
constexpr uint8_t kObject = 1 << 2, kArray = 1 << 3;

uint8_t own_types(const Json& s) {
  if (!s.is_object() || !s.contains("type")) return 0x7f;
  uint8_t bits = 0;
  for (int t = 0; t < 7; ++t) bits |= type_allows(s, kTypeBits[t]) ? (1 << t) : 0;
  if (bits & (1 << 5)) bits |= 1 << 6;  // a number may be an integer
  return bits;
}

}  // namespace

void SchemaCompiler::check_unique_items(const Json& array_schema, const std::string& pointer,
                                        uint64_t min_items) const {
  auto refuse = [&](const std::string& where, const std::string& why) {
    unsupported(pointer, "uniqueItems", "items " + why + " (at " + short_pointer(where) + ")");
  };
  struct Pending {
    const Json* node;
    std::string ptr;
    UniqueContext context;
  };
  std::vector<Pending> pending;
  auto push_schemas = [&](const Json& parent, const std::string& parent_ptr, const char* key,
                          const UniqueContext& context) {
    if (!parent.contains(key)) return;
    const Json& v = parent[key];
    const std::string ptr = child_pointer(parent_ptr, key);
    const std::string k = key;
    if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) pending.push_back({&v[i], child_pointer(ptr, std::to_string(i)), context});
    } else if (v.is_object() && (k == "properties" || k == "patternProperties" || k == "dependentSchemas")) {
      for (const auto& [name, sub] : v.items()) pending.push_back({&sub, child_pointer(ptr, name), context});
    } else {
      pending.push_back({&v, ptr, context});
    }
  };
  if (!array_schema.contains("items") && !array_schema.contains("prefixItems")) {
    refuse(pointer, "may be any value (no items schema)");
  }
  for (const char* key : {"items", "prefixItems", "additionalItems"}) {
    push_schemas(array_schema, pointer, key, UniqueContext{});
  }
  std::set<std::pair<const Json*, UniqueContext>> done;
  while (!pending.empty()) {
    Pending item = std::move(pending.back());
    pending.pop_back();
    if (!done.insert({item.node, item.context}).second) continue;
    const Json& s = *item.node;
    const std::string& ptr = item.ptr;
    if (!s.is_object() && !s.is_boolean()) continue;  // compile() reports it
    if (s.is_object() && (s.contains("enum") || s.contains("const"))) {
      for (const Json& v : s.contains("const") ? Json::array({s["const"]}) : s["enum"]) {
        if (!literal_has_one_text(v)) {
          refuse(ptr, "have enum/const value " + v.dump() +
                          " (a fraction or a multi-key object has several texts)");
        }
      }
      continue;  // every other keyword only narrows these texts
    }
    // This schema merged with what it inherits.
    UniqueContext here;
    here.types = item.context.types & own_types(s);
    const bool patterns = s.is_object() && s.contains("patternProperties");
    here.closed = (item.context.closed ||
                   (s.is_object() && s.value("additionalProperties", Json(true)) == Json(false))) &&
                  !patterns;
    here.items = item.context.items || (s.is_object() && (s.contains("items") || s.contains("prefixItems")));
    // anyOf / oneOf / allOf / $ref: the values are those of the branches (or target), each
    // checked below with this context. Otherwise the values are this schema's own.
    const bool free_objects = (here.types & kObject) && !here.closed;
    const bool free_arrays = (here.types & kArray) && !here.items;
    if (!(s.is_object() && has_combinator(s)) && (free_objects || free_arrays)) {
      refuse(ptr, here.types == 0x7f ? "may be any value (no type)"
                  : free_objects     ? "may be objects with undeclared keys (they come in any order)"
                                     : "may be arrays of any values");
    }
    if (!s.is_object()) continue;
    if (s.contains("$ref") && s["$ref"].is_string()) {
      std::string target_ptr;
      pending.push_back({&resolve_ref(s["$ref"].get<std::string>(), ptr, &target_ptr), target_ptr, here});
    }
    for (const char* key : {"anyOf", "oneOf", "allOf", "if", "then", "else", "dependentSchemas"}) {
      push_schemas(s, ptr, key, here);
    }
    for (const char* key : {"items", "prefixItems", "additionalItems", "properties"}) {
      push_schemas(s, ptr, key, UniqueContext{});
    }
    if (s.contains("additionalProperties") && s["additionalProperties"].is_object()) {
      push_schemas(s, ptr, "additionalProperties", UniqueContext{});
    }
  }
  if (min_items >= 2) check_unique_items_count(array_schema, pointer, min_items);
}

// minItems >= 2 needs that many distinct values; shown for the plain cases only: an enum or
// const with enough values (of the type, if one is given), strings without pattern, format or
// maxLength 0 (a million one-character strings, and minItems is at most 100000), integers
// open on a side or with a wide enough range.
void SchemaCompiler::check_unique_items_count(const Json& array_schema, const std::string& pointer,
                                              uint64_t min_items) const {
  static const Json kNone = false;
  const Json& items =
      array_schema.contains("items") ? look_through_refs(array_schema["items"], pointer) : kNone;
  auto only = [&](std::initializer_list<const char*> allowed) {
    for (auto it = items.begin(); it != items.end(); ++it) {
      const std::string& key = it.key();
      if (!is_assertion_keyword(key)) continue;
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
        return false;
      }
    }
    return true;
  };
  bool enough = false;
  if (items.is_object() && !array_schema.contains("prefixItems")) {
    if (items.contains("enum") && items["enum"].is_array() && only({"enum", "type"})) {
      std::set<std::string> values;
      for (const Json& v : items["enum"]) {
        const char* type = json_type_name(v);
        if (type_allows(items, type) || (type == std::string("integer") && type_allows(items, "number"))) {
          values.insert(canonical_json(v));
        }
      }
      enough = values.size() >= min_items;
    } else if (items.value("type", Json()) == "string" && only({"type", "minLength", "maxLength"})) {
      enough = items.value("maxLength", Json(1)) != Json(0);
    } else if (items.value("type", Json()) == "integer" && only({"type", "minimum", "maximum"})) {
      const Json& lo = items.value("minimum", Json());
      const Json& hi = items.value("maximum", Json());
      enough = !lo.is_number() || !hi.is_number() ||
               std::floor(hi.get<double>()) - std::ceil(lo.get<double>()) + 1 >=
                   static_cast<double>(min_items);
    }
  }
  if (!enough) {
    unsupported(pointer, "uniqueItems", "minItems " + std::to_string(min_items) +
                                            " with items afm cannot show to have that many distinct values");
  }
}

}  // namespace afm::guided
