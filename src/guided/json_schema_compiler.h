// JSON Schema (draft 2020-12) -> Grammar producing JSON text that validates against it.
//
// Contract:
//  - Fail closed: a keyword the engine cannot enforce exactly throws afm::Error(kUnsupported)
//    naming the keyword and the JSON pointer of the schema that holds it; a malformed schema
//    throws kInvalidArgument (same naming); malformed JSON text throws kFormat. A schema that
//    compiles yields a grammar whose every sentence is valid (sound). Annotation keywords
//    (title, description, default, examples, $comment, ...) are accepted and ignored.
//  - Output form (docs/guided.md has the full rules): canonical JSON — strings escaped as
//    nlohmann::json::dump() does, numbers without leading zeros or "-0", object properties in
//    schema declaration order (declared ones first, then required-only names, then others).
//  - Schemas are untrusted: before any work, the document's nesting, number of values and oneOf
//    widths are checked against `budget` (schema_budget.h); during compilation, subschema
//    nesting (128, $ref chains included) and the grammar's size (`max_grammar_nodes`) are
//    bounded. Each exceeded bound throws kUnsupported naming it. Compile time is linear in the
//    schema's size (no recursion over its width or nesting).
// Thread safety: compile functions are reentrant; the returned Grammar is immutable and may be
// shared across threads. CompiledGrammarCache is safe to call from any number of threads.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "guided/grammar.h"
#include "guided/schema_budget.h"

namespace afm::guided {

enum class Whitespace {
  kCompact,  // {"a":1,"b":[1,2]}
  kSpaced,   // {"a": 1, "b": [1, 2]}  (one space after ':' and ',')
};

struct JsonSchemaOptions {
  Whitespace whitespace = Whitespace::kCompact;
  size_t max_grammar_nodes = 4u << 20;
  SchemaBudget budget;
  // Literal text the grammar requires before and after the JSON value (for example the fence
  // around a tool-call array); empty by default.
  std::string prefix, suffix;
  // A `format` name that neither JSON Schema nor afm defines ("semver", "topic", "path"...).
  // False (the default): an annotation, as draft 2020-12 reads every format without a
  // format-assertion vocabulary, so it adds no constraint (no validator could check it either).
  // True: the schema is refused (kUnsupported naming the format). JSON Schema's own formats that
  // afm cannot enforce (regex, uri-template, idn-email, idn-hostname) are refused either way.
  bool refuse_unknown_formats = false;
};

std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::ordered_json& schema,
                                                   const JsonSchemaOptions& options = {});
std::shared_ptr<const Grammar> compile_json_schema_text(std::string_view schema_text,
                                                        const JsonSchemaOptions& options = {});

// The canonical text the grammars produce for a JSON value (keys in the value's own order):
// integral floats that fit in 64 bits are written as integers ("1.0" -> "1").
std::string canonical_json(const nlohmann::ordered_json& value,
                           Whitespace whitespace = Whitespace::kCompact);

// Compiled grammars keyed by (options, schema text); least recently used entries are evicted
// when there are more than `capacity` or their grammars hold more than `max_bytes`
// (Grammar::memory_bytes(); a client sending never-seen large schemas must not grow the
// process: 256 grammars of 20,000 properties held 1.6 GB). A grammar over a quarter of
// `max_bytes` is returned but not kept, so one such schema cannot flush every other entry
// and a stream of them leaves the cache as it was. Compile errors are not cached (rethrown
// to every caller).
class CompiledGrammarCache {
 public:
  explicit CompiledGrammarCache(size_t capacity = 256, size_t max_bytes = size_t{128} << 20)
      : capacity_(capacity), max_bytes_(max_bytes) {}
  std::shared_ptr<const Grammar> get_or_compile(std::string_view schema_text,
                                                const JsonSchemaOptions& options = {});
  size_t size() const;
  size_t bytes() const;  // memory_bytes() of the grammars kept

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const Grammar> grammar;
    size_t bytes;
  };
  void evict_locked();
  size_t capacity_, max_bytes_;
  size_t bytes_ = 0;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // front = most recently used
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace afm::guided
