// A GGUF metadata value: a scalar, a string, or an array (of scalars, strings or arrays).
//
// Arrays keep their declared element type even when empty, so a file round-trips exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "gguf/types.h"

namespace afm::gguf {

class Value;

struct Array {
  ValueType element_type = ValueType::kUint8;
  std::vector<Value> items;
};

class Value {
 public:
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, Array, uint64_t, int64_t, double>;

  Value() : v_(uint8_t{0}) {}
  template <typename T>
  explicit Value(T v) : v_(std::move(v)) {}
  explicit Value(const char* s) : v_(std::string(s)) {}

  ValueType type() const { return static_cast<ValueType>(v_.index()); }
  const Storage& storage() const { return v_; }

  bool is_integer() const;
  bool is_string() const { return type() == ValueType::kString; }
  bool is_array() const { return type() == ValueType::kArray; }

  // Typed accessors; throw Error(kFormat) naming `key` when the value has another type or
  // does not fit. as_u64/as_i64 accept every integer type; as_f64 accepts every number.
  uint64_t as_u64(std::string_view key) const;
  int64_t as_i64(std::string_view key) const;
  double as_f64(std::string_view key) const;
  bool as_bool(std::string_view key) const;
  const std::string& as_string(std::string_view key) const;
  const Array& as_array(std::string_view key) const;

  // Helpers for writers.
  static Value string_array(const std::vector<std::string>& items);
  template <typename T>
  static Value array_of(ValueType element_type, const std::vector<T>& items) {
    Array a;
    a.element_type = element_type;
    a.items.reserve(items.size());
    for (const T& x : items) a.items.emplace_back(x);
    return Value(std::move(a));
  }

  bool operator==(const Value& other) const;

 private:
  Storage v_;
};

bool operator==(const Array& a, const Array& b);

// Renders a value for humans (`afm info`): long arrays are elided.
std::string to_display_string(const Value& v, size_t max_items = 8);

}  // namespace afm::gguf
