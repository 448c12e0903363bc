// JSON text -> nlohmann::ordered_json in time linear in the text, for untrusted input.
//
// Why not ordered_json::parse: its object is a vector searched linearly on every insert, so a
// body with one object of n keys costs O(n^2) (a 1.3 MB request with 100,000 keys under
// `metadata` held a server worker for 17 s). This parser builds the same value through
// nlohmann's SAX interface, finding duplicate keys with a hash index per open object.
//
// Contract: on success `value` equals ordered_json::parse(text) (same member order; a repeated
// key keeps its first position and takes the last value, as nlohmann does). Nesting deeper
// than `max_depth` containers stops the parse (status kTooDeep) without building the rest;
// `value` then holds what was built so far (every container down to the limit), so a caller
// can name where the limit was passed. Syntax errors give kSyntax and nlohmann's message (with
// the byte offset). Never throws except bad_alloc.
// Thread safety: reentrant.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace afm {

enum class JsonParseStatus { kOk, kSyntax, kTooDeep };

struct ParsedJson {
  nlohmann::ordered_json value;  // kOk: the document; kTooDeep: the part built; else null
  JsonParseStatus status = JsonParseStatus::kOk;
  std::string message;           // empty when kOk
  bool ok() const { return status == JsonParseStatus::kOk; }
};

ParsedJson parse_ordered_json(std::string_view text, size_t max_depth = SIZE_MAX);

}  // namespace afm
