// Test helper: GGUF metadata values <-> typed JSON ({"type": "u32", "value": 7},
// {"type": "array", "element_type": "string", "items": [...typed values...]}), so Python
// oracle tests can compare our reader and writer with the `gguf` package value by value.
#pragma once

#include <nlohmann/json.hpp>

#include "gguf/value.h"

namespace afm::gguf::testing {

nlohmann::json value_to_json(const Value& v);
Value value_from_json(const nlohmann::json& j);

}  // namespace afm::gguf::testing
