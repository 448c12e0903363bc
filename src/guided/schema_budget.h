// Size and depth budgets for untrusted JSON Schema documents, checked before any compile work.
//
// A schema comes from a client (an HTTP request, a tool's parameters, a file). Compiling is
// linear in the schema's size, but recursive helpers (copying, printing and comparing
// nlohmann values, the compiler's descent into subschemas) need bounded nesting, and the
// work of a request must be bounded up front. check_schema_budget() walks the document
// iteratively and throws afm::Error(kUnsupported) naming the budget and where it was exceeded;
// it never recurses, so a document nested 100,000 levels is refused in linear time.
// The server turns the error into a 400 (docs/server.md lists the budgets).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

namespace afm::guided {

struct SchemaBudget {
  size_t max_depth = 128;       // JSON nesting levels of the document (the request body's limit)
  size_t max_values = 100000;   // JSON values in the document (objects, arrays, scalars)
  size_t max_branches = 256;    // entries of one oneOf (its branches are compared pairwise)
};

// Throws afm::Error(kUnsupported) "json schema: ... budget ..." when `schema` exceeds `budget`.
void check_schema_budget(const nlohmann::ordered_json& schema, const SchemaBudget& budget = {});

// A JSON pointer shortened for error messages: at most ~`max_chars` characters, keeping its
// beginning and its end ("#/properties/a/.../items").
std::string short_pointer(const std::string& pointer, size_t max_chars = 120);

}  // namespace afm::guided
