#include "gguf/gguf_json.h"

#include <stdexcept>
#include <string>

namespace afm::gguf::testing {

namespace {

ValueType type_from_name(const std::string& name) {
  for (uint32_t i = 0; i <= static_cast<uint32_t>(ValueType::kFloat64); ++i) {
    if (value_type_name(static_cast<ValueType>(i)) == name) return static_cast<ValueType>(i);
  }
  throw std::runtime_error("unknown value type name " + name);
}

}  // namespace

nlohmann::json value_to_json(const Value& v) {
  nlohmann::json j = {{"type", std::string(value_type_name(v.type()))}};
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Array>) {
          j["element_type"] = std::string(value_type_name(x.element_type));
          nlohmann::json items = nlohmann::json::array();
          for (const Value& item : x.items) items.push_back(value_to_json(item));
          j["items"] = items;
        } else if constexpr (std::is_same_v<T, float>) {
          j["value"] = static_cast<double>(x);
        } else {
          j["value"] = x;
        }
      },
      v.storage());
  return j;
}

Value value_from_json(const nlohmann::json& j) {
  switch (type_from_name(j.at("type").get<std::string>())) {
    case ValueType::kUint8:
      return Value(j.at("value").get<uint8_t>());
    case ValueType::kInt8:
      return Value(j.at("value").get<int8_t>());
    case ValueType::kUint16:
      return Value(j.at("value").get<uint16_t>());
    case ValueType::kInt16:
      return Value(j.at("value").get<int16_t>());
    case ValueType::kUint32:
      return Value(j.at("value").get<uint32_t>());
    case ValueType::kInt32:
      return Value(j.at("value").get<int32_t>());
    case ValueType::kFloat32:
      return Value(j.at("value").get<float>());
    case ValueType::kBool:
      return Value(j.at("value").get<bool>());
    case ValueType::kString:
      return Value(j.at("value").get<std::string>());
    case ValueType::kUint64:
      return Value(j.at("value").get<uint64_t>());
    case ValueType::kInt64:
      return Value(j.at("value").get<int64_t>());
    case ValueType::kFloat64:
      return Value(j.at("value").get<double>());
    case ValueType::kArray: {
      Array a;
      a.element_type = type_from_name(j.at("element_type").get<std::string>());
      for (const auto& item : j.at("items")) a.items.push_back(value_from_json(item));
      return Value(std::move(a));
    }
  }
  throw std::runtime_error("bad value");
}

}  // namespace afm::gguf::testing
