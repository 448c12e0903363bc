// The order in which compiled schema grammars write object keys, so a JSON value whose keys
// come in another order can still be checked against a grammar (JSON objects are unordered;
// the grammars fix one order so that generation needs no lookahead).
//
// Contract: schema_key_order() lists property names in the order the schema document first
// declares them anywhere in it: "properties" keys, then "required" entries, then each
// dependentRequired trigger followed by the names it requires (the order the compiler's
// members follow), and keys inside const / enum values. in_key_order() rewrites every object
// of a value with the listed keys first, in that order, and the others after in the value's own
// order. Both are total: any JSON is accepted. Thread safety: reentrant.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace afm::guided {

std::vector<std::string> schema_key_order(const nlohmann::ordered_json& schema);

nlohmann::ordered_json in_key_order(const nlohmann::ordered_json& value,
                                    const std::vector<std::string>& order);

}  // namespace afm::guided
