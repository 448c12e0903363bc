#include "data/synth/chat_format.h"

#include <algorithm>

namespace afm::data::synth {

std::string compact(const Json& j) { return j.dump(); }

Json tool_spec(std::string_view name, std::string_view description, const Json& parameters) {
  return Json{{"name", name}, {"description", description}, {"parameters", parameters}};
}

Json object_schema(const Json& properties, const std::vector<std::string>& optional) {
  Json required = Json::array();
  for (const auto& [key, value] : properties.items()) {
    if (std::find(optional.begin(), optional.end(), key) == optional.end()) required.push_back(key);
  }
  return Json{{"type", "object"},
              {"properties", properties},
              {"required", required},
              {"additionalProperties", false}};
}

}  // namespace afm::data::synth
