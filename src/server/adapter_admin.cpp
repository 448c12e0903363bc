#include "server/adapter_admin.h"

#include "server/openai_protocol.h"
#include "server/request_fields.h"

namespace afm::server {

using namespace fields;

namespace {

bool valid_adapter_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

AdapterInfo parse_adapter_load(std::string_view body_text) {
  const Json body = parse_json_body(body_text);
  if (!body.is_object()) wrong_type("body", "an object", body);
  for (const auto& [key, value] : body.items()) {
    if (key != "name" && key != "path" && key != "scale")
      throw invalid_request("Unrecognized request argument supplied: " + key, key,
                            "unknown_parameter");
  }
  AdapterInfo info;
  info.name = as_string(required(body, "name", "name"), "name");
  if (!valid_adapter_name(info.name))
    bad_value("name", "name must be 1-64 of a-z, A-Z, 0-9, '_', '-' and '.'");
  info.path = as_string(required(body, "path", "path"), "path");
  if (info.path.empty()) bad_value("path", "path must not be empty");
  if (member(body, "scale")) info.scale = static_cast<float>(number_in(body, "scale", -100, 100));
  return info;
}

nlohmann::ordered_json adapter_json(const ServedModel& m) {
  Json j = {{"id", m.id}, {"object", "adapter"}, {"created", m.created}};
  if (m.adapter) {
    j["name"] = m.adapter->name;
    j["path"] = m.adapter->path;
    j["scale"] = m.adapter->scale;
  }
  return j;
}

}  // namespace afm::server
