// Public entry points of the JSON Schema compiler, canonical serialisation and the cache.
#include "guided/json_schema_compiler.h"

#include <cmath>

#include "base/error.h"
#include "base/json_parse.h"
#include "guided/schema_budget.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::ordered_json& schema,
                                                   const JsonSchemaOptions& options) {
  check_schema_budget(schema, options.budget);
  SchemaCompiler compiler(schema, options);
  return compiler.compile_root();
}

std::shared_ptr<const Grammar> compile_json_schema_text(std::string_view schema_text,
                                                        const JsonSchemaOptions& options) {
  // Linear in the text; a document nested past the budget stops one level below it, and the
  // budget walk over the part built names where.
  ParsedJson parsed = parse_ordered_json(schema_text, options.budget.max_depth + 1);
  if (parsed.status == JsonParseStatus::kTooDeep) check_schema_budget(parsed.value, options.budget);
  if (!parsed.ok()) {
    throw_error(ErrorCode::kFormat, "json schema: not valid JSON: " + parsed.message);
  }
  return compile_json_schema(parsed.value, options);
}

std::string canonical_json(const nlohmann::ordered_json& value, Whitespace whitespace) {
  const char* comma = whitespace == Whitespace::kCompact ? "," : ", ";
  const char* colon = whitespace == Whitespace::kCompact ? ":" : ": ";
  std::string out;
  if (value.is_object()) {
    out += "{";
    bool first = true;
    for (const auto& [key, v] : value.items()) {
      if (!first) out += comma;
      first = false;
      out += nlohmann::ordered_json(key).dump() + colon + canonical_json(v, whitespace);
    }
    return out + "}";
  }
  if (value.is_array()) {
    out += "[";
    for (size_t i = 0; i < value.size(); ++i) {
      if (i > 0) out += comma;
      out += canonical_json(value[i], whitespace);
    }
    return out + "]";
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
      return std::to_string(static_cast<int64_t>(d));
    }
  }
  return value.dump();
}

std::shared_ptr<const Grammar> CompiledGrammarCache::get_or_compile(
    std::string_view schema_text, const JsonSchemaOptions& options) {
  std::string key = std::to_string(static_cast<int>(options.whitespace)) + ":" +
                    std::to_string(options.max_grammar_nodes) + ":" +
                    std::to_string(options.budget.max_depth) + ":" +
                    std::to_string(options.budget.max_values) + ":" +
                    std::to_string(options.budget.max_branches) + ":" +
                    std::to_string(options.prefix.size()) + ":" + options.prefix +
                    std::to_string(options.suffix.size()) + ":" + options.suffix +
                    (options.refuse_unknown_formats ? "F" : "f") + std::string(schema_text);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->grammar;
    }
  }
  // Compile outside the lock; if two threads race, the first insert wins.
  std::shared_ptr<const Grammar> grammar = compile_json_schema_text(schema_text, options);
  const size_t bytes = grammar->memory_bytes() + key.size();
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) return it->second->grammar;
  if (bytes > max_bytes_ / 4) return grammar;
  lru_.push_front({key, grammar, bytes});
  index_[key] = lru_.begin();
  bytes_ += bytes;
  evict_locked();
  return grammar;
}

void CompiledGrammarCache::evict_locked() {
  while (lru_.size() > capacity_ || bytes_ > max_bytes_) {
    bytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

size_t CompiledGrammarCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

size_t CompiledGrammarCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lru_.size();
}

}  // namespace afm::guided
