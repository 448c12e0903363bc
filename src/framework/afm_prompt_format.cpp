#include "framework/afm_prompt_format.h"

namespace afm {

std::string system_with_tools(std::string_view instructions, const nlohmann::ordered_json& tools) {
  return std::string(instructions) + std::string(kToolsMarker) + tools.dump();
}

std::string user_with_response_format(std::string_view prompt, std::string_view name,
                                      std::string_view description,
                                      const nlohmann::ordered_json& schema) {
  std::string out(prompt);
  out += kResponseFormatMarker;
  out.append("name: ").append(name).append("\n");
  out.append("description: ").append(description).append("\n");
  out.append("schema: ").append(schema.dump());
  return out;
}

std::string tool_call_block(const nlohmann::ordered_json& calls) {
  std::string out(kToolCallStartToken);
  out += kToolCallBodyOpen;
  out += calls.dump();
  out += kToolCallBodyClose;
  out += kToolCallEndToken;
  return out;
}

}  // namespace afm
