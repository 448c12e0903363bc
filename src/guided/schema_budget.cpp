// Iterative budget walk over a schema document (see schema_budget.h).
#include "guided/schema_budget.h"

#include <string>
#include <vector>

#include "base/error.h"

namespace afm::guided {

namespace {

using Json = nlohmann::ordered_json;

// One visited value: where it hangs in its parent, for the pointer of an error.
struct Visit {
  const Json* value;
  size_t parent;             // index into the visit list; SIZE_MAX for the root
  const std::string* key;    // object member name, or null for an array element
  size_t index;              // array element index
  size_t depth;              // 1 for the root
};

std::string escape_token(const std::string& token) {
  std::string out;
  for (char c : token) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

std::string pointer_of(const std::vector<Visit>& visits, size_t at) {
  std::vector<std::string> tokens;
  for (size_t i = at; visits[i].parent != SIZE_MAX; i = visits[i].parent) {
    tokens.push_back(visits[i].key ? escape_token(*visits[i].key)
                                   : std::to_string(visits[i].index));
  }
  std::string pointer;
  for (size_t i = tokens.size(); i-- > 0;) pointer += "/" + tokens[i];
  return pointer;
}

[[noreturn]] void over_budget(const std::vector<Visit>& visits, size_t at, const std::string& what,
                              const std::string& budget) {
  throw_error(ErrorCode::kUnsupported, "json schema: " + what + " at " +
                                           short_pointer(pointer_of(visits, at)) +
                                           " (budget: " + budget + ")");
}

}  // namespace

std::string short_pointer(const std::string& pointer, size_t max_chars) {
  std::string shown = "#" + pointer;
  if (shown.size() <= max_chars) return shown;
  const size_t keep = max_chars / 2;
  return shown.substr(0, keep) + "..." + shown.substr(shown.size() - keep) + " (" +
         std::to_string(pointer.size()) + " characters)";
}

void check_schema_budget(const Json& schema, const SchemaBudget& budget) {
  std::vector<Visit> visits;
  std::vector<size_t> stack;  // indexes into visits, depth-first
  auto add = [&](Visit v) {
    visits.push_back(v);
    if (visits.size() > budget.max_values) {
      over_budget(visits, visits.size() - 1,
                  "the schema has more than " + std::to_string(budget.max_values) + " JSON values",
                  "schema size");
    }
    stack.push_back(visits.size() - 1);
  };
  add({&schema, SIZE_MAX, nullptr, 0, 1});
  while (!stack.empty()) {
    const size_t at = stack.back();
    stack.pop_back();
    const Visit v = visits[at];
    if (v.depth > budget.max_depth) {
      over_budget(visits, at,
                  "the schema nests deeper than " + std::to_string(budget.max_depth) + " levels",
                  "schema depth");
    }
    if (v.value->is_object()) {
      for (auto it = v.value->begin(); it != v.value->end(); ++it) {
        if (it.key() == "oneOf" && it->is_array() && it->size() > budget.max_branches) {
          over_budget(visits, at,
                      "oneOf has " + std::to_string(it->size()) + " branches, more than " +
                          std::to_string(budget.max_branches),
                      "oneOf branches, compared pairwise");
        }
        add({&*it, at, &it.key(), 0, v.depth + 1});
      }
    } else if (v.value->is_array()) {
      for (size_t i = 0; i < v.value->size(); ++i) {
        add({&(*v.value)[i], at, nullptr, i, v.depth + 1});
      }
    }
  }
}

}  // namespace afm::guided
