// Guides, GenerationSchema and DynamicGenerationSchema (include/afm/generation_schema.h), and
// the small non-template helpers of include/afm/generable.h.
#include <cmath>

#include "afm/errors.h"
#include "afm/generable.h"
#include "afm/generated_content.h"
#include "afm/generation_schema.h"

namespace afm {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void bad_guide(const std::string& where, const std::string& why) {
  throw GenerationError(GenerationErrorKind::kUnsupportedGuide, where + ": " + why);
}

const char* guide_name(Guide::Kind k) {
  switch (k) {
    case Guide::Kind::kMinimum: return "minimum";
    case Guide::Kind::kMaximum: return "maximum";
    case Guide::Kind::kRange: return "range";
    case Guide::Kind::kCount: return "count";
    case Guide::Kind::kMinCount: return "min_count";
    case Guide::Kind::kMaxCount: return "max_count";
    case Guide::Kind::kAnyOf: return "any_of";
    case Guide::Kind::kConstant: return "constant";
    case Guide::Kind::kPattern: return "pattern";
  }
  return "?";
}

// Tightens schema[key] (a bound) to `value` in the direction `lower`.
void tighten(Json& schema, const char* key, double value, bool lower, bool integer) {
  if (integer) {
    const double v = lower ? std::ceil(value) : std::floor(value);
    const int64_t iv = static_cast<int64_t>(v);
    if (!schema.contains(key) || (lower ? iv > schema[key].get<int64_t>() : iv < schema[key].get<int64_t>())) {
      schema[key] = iv;
    }
    return;
  }
  if (!schema.contains(key) || (lower ? value > schema[key].get<double>() : value < schema[key].get<double>())) {
    schema[key] = value;
  }
}

void apply_number_guide(Json& s, const Guide& g, bool integer) {
  if (g.kind != Guide::Kind::kMaximum) tighten(s, "minimum", g.low, true, integer);
  if (g.kind != Guide::Kind::kMinimum) tighten(s, "maximum", g.high, false, integer);
}

void apply_count_guide(Json& s, const Guide& g, const std::string& where) {
  if (g.low < 0 || g.high < 0) bad_guide(where, std::string(guide_name(g.kind)) + " must not be negative");
  if (g.kind != Guide::Kind::kMaxCount) s["minItems"] = static_cast<int64_t>(g.low);
  if (g.kind != Guide::Kind::kMinCount) s["maxItems"] = static_cast<int64_t>(g.high);
}

void apply_string_guide(Json& s, const Guide& g, const std::string& where) {
  if (s.contains("enum") || s.contains("const")) {
    bad_guide(where, std::string(guide_name(g.kind)) + " on a value that is already an enumeration");
  }
  switch (g.kind) {
    case Guide::Kind::kAnyOf:
      if (g.values.empty()) bad_guide(where, "any_of needs at least one choice");
      s["enum"] = g.values;
      break;
    case Guide::Kind::kConstant: s["const"] = g.text; break;
    case Guide::Kind::kPattern: s["pattern"] = g.text; break;
    default: break;
  }
}

bool is_number_guide(Guide::Kind k) {
  return k == Guide::Kind::kMinimum || k == Guide::Kind::kMaximum || k == Guide::Kind::kRange;
}
bool is_count_guide(Guide::Kind k) {
  return k == Guide::Kind::kCount || k == Guide::Kind::kMinCount || k == Guide::Kind::kMaxCount;
}

void check_nonempty(const Json& s, const std::string& where) {
  auto empty = [&](const char* lo, const char* hi) {
    return s.contains(lo) && s.contains(hi) && s[lo].get<double>() > s[hi].get<double>();
  };
  if (empty("minimum", "maximum")) bad_guide(where, "the range is empty (minimum > maximum)");
  if (empty("minItems", "maxItems")) bad_guide(where, "the count range is empty (min_count > max_count)");
}

}  // namespace

const char* generation_error_kind_name(GenerationErrorKind kind) {
  switch (kind) {
    case GenerationErrorKind::kExceededContextWindowSize: return "exceeded_context_window_size";
    case GenerationErrorKind::kConcurrentRequests: return "concurrent_requests";
    case GenerationErrorKind::kUnsupportedGuide: return "unsupported_guide";
    case GenerationErrorKind::kDecodingFailure: return "decoding_failure";
    case GenerationErrorKind::kToolCallError: return "tool_call_error";
    case GenerationErrorKind::kGuardrailViolation: return "guardrail_violation";
    case GenerationErrorKind::kRefusal: return "refusal";
    case GenerationErrorKind::kUnavailable: return "unavailable";
  }
  return "unknown";
}

Json apply_guides(Json schema, ValueType type, const std::vector<Guide>& guides,
                  const std::string& where) {
  for (const Guide& g : guides) {
    const bool numeric = type == ValueType::kInteger || type == ValueType::kNumber;
    if (is_number_guide(g.kind) && numeric) {
      apply_number_guide(schema, g, type == ValueType::kInteger);
    } else if (is_count_guide(g.kind) && type == ValueType::kArray) {
      apply_count_guide(schema, g, where);
    } else if (!is_number_guide(g.kind) && !is_count_guide(g.kind) && type == ValueType::kString) {
      apply_string_guide(schema, g, where);
    } else {
      bad_guide(where, std::string("the ") + guide_name(g.kind) +
                           " guide does not apply to a property of this type");
    }
  }
  check_nonempty(schema, where);
  return schema;
}

const Json& GeneratedContent::operator[](const std::string& name) const {
  static const Json kNull;
  if (!value_.is_object()) return kNull;
  auto it = value_.find(name);
  return it == value_.end() ? kNull : *it;
}

namespace detail {

void decoding_failure(const std::string& where, const std::string& why) {
  throw GenerationError(GenerationErrorKind::kDecodingFailure, where + ": " + why);
}

void guard_schema_depth(int depth, const char* type_name) {
  if (depth > 32) {
    throw GenerationError(GenerationErrorKind::kUnsupportedGuide,
                          std::string(type_name) +
                              ": Generable types nested more than 32 deep (recursive types are "
                              "not supported)");
  }
}

}  // namespace detail

DynamicGenerationSchema DynamicGenerationSchema::string(std::vector<Guide> guides) {
  return DynamicGenerationSchema(apply_guides(Json{{"type", "string"}}, ValueType::kString, guides, "string"));
}
DynamicGenerationSchema DynamicGenerationSchema::integer(std::vector<Guide> guides) {
  return DynamicGenerationSchema(apply_guides(Json{{"type", "integer"}}, ValueType::kInteger, guides, "integer"));
}
DynamicGenerationSchema DynamicGenerationSchema::number(std::vector<Guide> guides) {
  return DynamicGenerationSchema(apply_guides(Json{{"type", "number"}}, ValueType::kNumber, guides, "number"));
}
DynamicGenerationSchema DynamicGenerationSchema::boolean() {
  return DynamicGenerationSchema(Json{{"type", "boolean"}});
}
DynamicGenerationSchema DynamicGenerationSchema::array(const DynamicGenerationSchema& items,
                                                       std::vector<Guide> guides) {
  return DynamicGenerationSchema(apply_guides(Json{{"type", "array"}, {"items", items.json_}},
                                              ValueType::kArray, guides, "array"));
}
DynamicGenerationSchema DynamicGenerationSchema::any_of(std::vector<std::string> choices) {
  return string({guide::any_of(std::move(choices))});
}
DynamicGenerationSchema DynamicGenerationSchema::any_of(
    const std::vector<DynamicGenerationSchema>& choices) {
  if (choices.empty()) bad_guide("any_of", "needs at least one choice");
  Json list = Json::array();
  for (const auto& c : choices) list.push_back(c.json_);
  return DynamicGenerationSchema(Json{{"anyOf", list}});
}
DynamicGenerationSchema DynamicGenerationSchema::object(std::string name, std::string description,
                                                        const std::vector<Property>& properties) {
  Json props = Json::object(), required = Json::array();
  for (const Property& p : properties) {
    if (props.contains(p.name)) bad_guide(name + "." + p.name, "the property is declared twice");
    Json s = p.schema.json_;
    if (!p.description.empty()) s["description"] = p.description;
    props[p.name] = std::move(s);
    if (!p.optional) required.push_back(p.name);
  }
  Json out = {{"type", "object"}};
  if (!description.empty()) out["description"] = description;
  out["properties"] = std::move(props);
  out["required"] = std::move(required);
  out["additionalProperties"] = false;
  (void)name;
  return DynamicGenerationSchema(std::move(out));
}

GenerationSchema DynamicGenerationSchema::schema(std::string name, std::string description) const {
  return GenerationSchema(json_, std::move(name), std::move(description));
}

}  // namespace afm
