// Structured output as a JSON value: what respond(prompt, schema) returns and what streaming
// snapshots carry (then possibly partial: the last string may be unfinished, later
// properties absent). Properties keep the order they were generated in.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace afm {

class GeneratedContent {
 public:
  GeneratedContent() = default;
  explicit GeneratedContent(nlohmann::ordered_json value, bool complete = true)
      : value_(std::move(value)), complete_(complete) {}

  const nlohmann::ordered_json& json() const { return value_; }
  bool is_complete() const { return complete_; }
  // Compact JSON text of the value.
  std::string json_string() const { return value_.dump(); }
  // The property `name` of an object value, or null.
  const nlohmann::ordered_json& operator[](const std::string& name) const;

 private:
  nlohmann::ordered_json value_;
  bool complete_ = false;
};

}  // namespace afm
