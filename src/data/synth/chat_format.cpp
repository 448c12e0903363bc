#include "data/synth/chat_format.h"

#include <algorithm>

namespace afm::data::synth {

std::string compact(const Json& j) { return j.dump(); }

std::string system_with_tools(std::string_view instructions, const Json& tools) {
  return std::string(instructions) + std::string(kToolsMarker) + compact(tools);
}

std::string user_with_response_format(std::string_view prompt, std::string_view name,
                                      std::string_view description, const Json& schema) {
  std::string out(prompt);
  out += kResponseFormatMarker;
  out.append("name: ").append(name).append("\n");
  out.append("description: ").append(description).append("\n");
  out.append("schema: ").append(compact(schema));
  return out;
}

std::string tool_calls(const Json& calls) {
  return std::string(kToolCallOpen) + compact(calls) + std::string(kToolCallClose);
}

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
