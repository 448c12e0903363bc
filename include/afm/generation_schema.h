// Schemas for guided generation: GenerationSchema (what the model must produce; a JSON Schema
// the guided engine enforces and the prompt shows), the guides that constrain a property, and
// DynamicGenerationSchema for schemas built at run time.
//
// Errors: a guide that can never be satisfied (an empty range, min_count > max_count, an empty
// any_of) or that does not apply to the property's type throws GenerationError
// (kUnsupportedGuide) naming the property, when the schema is built. A pattern the regex
// engine cannot enforce is reported the same way when the schema is first compiled.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace afm {

// A constraint on one property (Swift: GenerationGuide).
struct Guide {
  enum class Kind { kMinimum, kMaximum, kRange, kCount, kMinCount, kMaxCount, kAnyOf, kConstant, kPattern };
  Kind kind;
  double low = 0, high = 0;          // numbers and counts
  std::vector<std::string> values;   // any_of
  std::string text;                  // constant, pattern
};

namespace guide {
inline Guide minimum(double v) { return {Guide::Kind::kMinimum, v, 0, {}, {}}; }
inline Guide maximum(double v) { return {Guide::Kind::kMaximum, 0, v, {}, {}}; }
inline Guide range(double lo, double hi) { return {Guide::Kind::kRange, lo, hi, {}, {}}; }
inline Guide count(int64_t n) { return {Guide::Kind::kCount, double(n), double(n), {}, {}}; }
inline Guide min_count(int64_t n) { return {Guide::Kind::kMinCount, double(n), 0, {}, {}}; }
inline Guide max_count(int64_t n) { return {Guide::Kind::kMaxCount, 0, double(n), {}, {}}; }
inline Guide any_of(std::vector<std::string> choices) {
  return {Guide::Kind::kAnyOf, 0, 0, std::move(choices), {}};
}
inline Guide constant(std::string value) { return {Guide::Kind::kConstant, 0, 0, {}, std::move(value)}; }
// An ECMA-262 regular expression the whole string must match.
inline Guide pattern(std::string regex) { return {Guide::Kind::kPattern, 0, 0, {}, std::move(regex)}; }
}  // namespace guide

// The JSON Schema of a value type, with guides applied. `where` names the property in errors.
enum class ValueType { kString, kInteger, kNumber, kBoolean, kArray, kObject };
nlohmann::ordered_json apply_guides(nlohmann::ordered_json schema, ValueType type,
                                    const std::vector<Guide>& guides, const std::string& where);

class GenerationSchema {
 public:
  GenerationSchema() = default;
  // From a JSON Schema (draft 2020-12 subset; docs/guided.md lists what is enforced).
  GenerationSchema(nlohmann::ordered_json json_schema, std::string name = "response",
                   std::string description = {})
      : schema_(std::move(json_schema)), name_(std::move(name)), description_(std::move(description)) {}

  const nlohmann::ordered_json& json_schema() const { return schema_; }
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }

 private:
  nlohmann::ordered_json schema_ = nlohmann::ordered_json::object();
  std::string name_ = "response";
  std::string description_;
};

// Builds a GenerationSchema at run time (Swift: DynamicGenerationSchema).
class DynamicGenerationSchema {
 public:
  struct Property;

  static DynamicGenerationSchema string(std::vector<Guide> guides = {});
  static DynamicGenerationSchema integer(std::vector<Guide> guides = {});
  static DynamicGenerationSchema number(std::vector<Guide> guides = {});
  static DynamicGenerationSchema boolean();
  static DynamicGenerationSchema array(const DynamicGenerationSchema& items,
                                       std::vector<Guide> guides = {});
  // One of these strings (an enumeration).
  static DynamicGenerationSchema any_of(std::vector<std::string> choices);
  // One of these schemas.
  static DynamicGenerationSchema any_of(const std::vector<DynamicGenerationSchema>& choices);
  static DynamicGenerationSchema object(std::string name, std::string description,
                                        const std::vector<Property>& properties);

  GenerationSchema schema(std::string name = "response", std::string description = {}) const;
  const nlohmann::ordered_json& json_schema() const { return json_; }

 private:
  explicit DynamicGenerationSchema(nlohmann::ordered_json json) : json_(std::move(json)) {}
  nlohmann::ordered_json json_;
};

struct DynamicGenerationSchema::Property {
  std::string name;
  std::string description;
  DynamicGenerationSchema schema;
  bool optional = false;
};

}  // namespace afm
