// Reading typed fields of the trainer's JSON files with errors that name the field.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

#include "base/error.h"

namespace afm::train {

// Sets `out` from j[name] when present; throws afm::Error(kInvalidArgument)
// "<context> <prefix>/<name>: must be ..." when the JSON type is wrong.
template <typename T>
void read_json_field(const nlohmann::json& j, const std::string& prefix, const char* name,
                     T& out, const char* context) {
  auto it = j.find(name);
  if (it == j.end()) return;
  const char* rule = nullptr;
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) rule = "must be a string";
  } else if constexpr (std::is_integral_v<T>) {
    if (!it->is_number_integer()) rule = "must be an integer";
  } else {
    if (!it->is_number()) rule = "must be a number";
  }
  if (rule != nullptr)
    throw_error(ErrorCode::kInvalidArgument,
                std::string(context) + " " + prefix + "/" + name + ": " + rule);
  out = it->get<T>();
}

}  // namespace afm::train
