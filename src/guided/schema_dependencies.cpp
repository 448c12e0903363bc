// JSON Schema property dependencies: `dependentRequired`, `dependentSchemas` and the draft-07
// `dependencies` (an array value means dependentRequired, a schema value dependentSchemas).
//
// "If property a is present, then ..." is a choice per dependency: either a is absent, or a is
// present together with what it brings (more required names, or one more schema to satisfy).
// A grammar writes properties in one fixed order, so instead of tracking which triggers were
// written, the schema becomes the alternation of every combination of choices: 2^k plain
// variants for k dependencies, each expressed with `properties` (a: false), `required` and
// `allOf`. The variants are exact (their union is the schema's language) and may overlap,
// which an alternation allows. Triggers that are already required have one choice. At most
// kMaxDependencies choices are expanded (64 variants); more fail closed naming the keyword.
#include <string>
#include <vector>

#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

constexpr size_t kMaxDependencies = 6;

const char* const kDependencyKeywords[] = {"dependentRequired", "dependentSchemas", "dependencies"};

// One dependency: when `trigger` is present, `names` are required and `schema` (if any) holds.
struct Dependency {
  std::string trigger;
  std::vector<std::string> names;
  std::optional<Json> schema;
};

bool is_required(const Json& schema, const std::string& name) {
  if (!schema.contains("required") || !schema["required"].is_array()) return false;
  for (const Json& n : schema["required"]) {
    if (n == name) return true;
  }
  return false;
}

void add_required(Json* schema, const std::string& name) {
  if (!schema->contains("required")) (*schema)["required"] = Json::array();
  if (!is_required(*schema, name)) (*schema)["required"].push_back(name);
}

}  // namespace

bool has_dependencies(const Json& schema) {
  if (!schema.is_object()) return false;
  for (const char* key : kDependencyKeywords) {
    if (schema.contains(key)) return true;
  }
  return false;
}

std::vector<Json> SchemaCompiler::expand_dependencies(const Json& schema,
                                                      const std::string& pointer) const {
  Json base = schema;
  std::vector<Dependency> deps;
  for (const char* key : kDependencyKeywords) {
    if (!schema.contains(key)) continue;
    base.erase(key);
    const Json& map = schema[key];
    if (!map.is_object()) invalid(pointer, key, "must be an object");
    const bool names_only = std::string(key) == "dependentRequired";
    const bool schema_only = std::string(key) == "dependentSchemas";
    for (const auto& [trigger, value] : map.items()) {
      Dependency d{trigger, {}, std::nullopt};
      if (value.is_array() && !schema_only) {
        for (const Json& n : value) {
          if (!n.is_string()) invalid(pointer, key, "'" + trigger + "' must list property names");
          d.names.push_back(n.get<std::string>());
        }
      } else if ((value.is_object() || value.is_boolean()) && !names_only) {
        d.schema = value;
      } else {
        invalid(pointer, key, "'" + trigger + "' must be " +
                                  (names_only ? "an array of names" : "a schema"));
      }
      deps.push_back(std::move(d));
    }
  }
  if (base.contains("properties") && !base["properties"].is_object()) {
    invalid(pointer, "properties", "must be an object");
  }
  std::vector<Json> variants{base};
  for (const Dependency& d : deps) {
    std::vector<Json> next;
    for (const Json& v : variants) {
      if (!is_required(v, d.trigger)) {  // the trigger is absent
        Json absent = v;
        absent["properties"][d.trigger] = false;
        next.push_back(std::move(absent));
      }
      Json present = v;  // the trigger is present, with what it brings
      add_required(&present, d.trigger);
      for (const std::string& n : d.names) add_required(&present, n);
      if (d.schema) {
        if (!present.contains("allOf")) present["allOf"] = Json::array();
        if (!present["allOf"].is_array()) invalid(pointer, "allOf", "must be an array");
        present["allOf"].push_back(*d.schema);
      }
      next.push_back(std::move(present));
    }
    variants = std::move(next);
    if (variants.size() > (size_t{1} << kMaxDependencies)) {
      unsupported(pointer, schema.contains("dependencies") ? "dependencies" : "dependentRequired",
                  "more than " + std::to_string(kMaxDependencies) + " optional dependencies");
    }
  }
  return variants;
}

}  // namespace afm::guided
