#include "guided/schema_key_order.h"

#include <algorithm>

namespace afm::guided {
namespace {

using Json = nlohmann::ordered_json;

void add_name(std::vector<std::string>& names, const std::string& n) {
  if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
}

// Object keys inside enum/const values, in the order the values list them.
void collect_value_keys(const Json& value, std::vector<std::string>& names) {
  if (value.is_object()) {
    for (const auto& [k, v] : value.items()) add_name(names, k);
  }
  if (value.is_structured()) {
    for (const auto& [k, v] : value.items()) collect_value_keys(v, names);
  }
}

void collect_names(const Json& schema, std::vector<std::string>& names) {
  if (schema.is_object()) {
    if (schema.contains("properties") && schema["properties"].is_object()) {
      for (const auto& [k, v] : schema["properties"].items()) add_name(names, k);
    }
    if (schema.contains("required") && schema["required"].is_array()) {
      for (const Json& n : schema["required"]) {
        if (n.is_string()) add_name(names, n.get<std::string>());
      }
    }
    if (schema.contains("dependentRequired") && schema["dependentRequired"].is_object()) {
      for (const auto& [trigger, required] : schema["dependentRequired"].items()) {
        add_name(names, trigger);
        if (!required.is_array()) continue;
        for (const Json& n : required) {
          if (n.is_string()) add_name(names, n.get<std::string>());
        }
      }
    }
  }
  if (schema.is_structured()) {
    for (const auto& [k, v] : schema.items()) {
      if (k == "const" || k == "enum") collect_value_keys(v, names);
      collect_names(v, names);
    }
  }
}

}  // namespace

std::vector<std::string> schema_key_order(const Json& schema) {
  std::vector<std::string> names;
  collect_names(schema, names);
  return names;
}

Json in_key_order(const Json& value, const std::vector<std::string>& order) {
  if (value.is_array()) {
    Json out = Json::array();
    for (const Json& v : value) out.push_back(in_key_order(v, order));
    return out;
  }
  if (!value.is_object()) return value;
  Json out = Json::object();
  for (const std::string& k : order) {
    if (value.contains(k)) out[k] = in_key_order(value[k], order);
  }
  for (const auto& [k, v] : value.items()) {
    if (!out.contains(k)) out[k] = in_key_order(v, order);
  }
  return out;
}

}  // namespace afm::guided
