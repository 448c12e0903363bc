#include "gguf/value.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "base/error.h"

namespace afm::gguf {

namespace {
[[noreturn]] void type_mismatch(std::string_view key, const char* wanted, ValueType got) {
  throw_error(ErrorCode::kFormat, "metadata key '" + std::string(key) + "': expected " + wanted +
                                      ", found " + std::string(value_type_name(got)));
}
}  // namespace

bool Value::is_integer() const {
  switch (type()) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kUint16:
    case ValueType::kInt16:
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kUint64:
    case ValueType::kInt64:
      return true;
    default:
      return false;
  }
}

int64_t Value::as_i64(std::string_view key) const {
  if (!is_integer()) type_mismatch(key, "an integer", type());
  if (const auto* u = std::get_if<uint64_t>(&v_)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw_error(ErrorCode::kFormat,
                  "metadata key '" + std::string(key) + "': value out of range");
    }
    return static_cast<int64_t>(*u);
  }
  return std::visit(
      [](const auto& x) -> int64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          return static_cast<int64_t>(x);
        } else {
          return 0;
        }
      },
      v_);
}

uint64_t Value::as_u64(std::string_view key) const {
  if (const auto* u = std::get_if<uint64_t>(&v_)) return *u;
  int64_t v = as_i64(key);
  if (v < 0) {
    throw_error(ErrorCode::kFormat,
                "metadata key '" + std::string(key) + "': negative value " + std::to_string(v));
  }
  return static_cast<uint64_t>(v);
}

double Value::as_f64(std::string_view key) const {
  if (const auto* f = std::get_if<float>(&v_)) return *f;
  if (const auto* d = std::get_if<double>(&v_)) return *d;
  if (!is_integer()) type_mismatch(key, "a number", type());
  if (const auto* u = std::get_if<uint64_t>(&v_)) return static_cast<double>(*u);
  return static_cast<double>(as_i64(key));
}

bool Value::as_bool(std::string_view key) const {
  if (const auto* b = std::get_if<bool>(&v_)) return *b;
  type_mismatch(key, "a bool", type());
}

const std::string& Value::as_string(std::string_view key) const {
  if (const auto* s = std::get_if<std::string>(&v_)) return *s;
  type_mismatch(key, "a string", type());
}

const Array& Value::as_array(std::string_view key) const {
  if (const auto* a = std::get_if<Array>(&v_)) return *a;
  type_mismatch(key, "an array", type());
}

Value Value::string_array(const std::vector<std::string>& items) {
  return array_of(ValueType::kString, items);
}

bool operator==(const Array& a, const Array& b) {
  return a.element_type == b.element_type && a.items == b.items;
}

bool Value::operator==(const Value& other) const { return v_ == other.v_; }

namespace {
void render(std::ostringstream& out, const Value& v, size_t max_items) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          std::string s = x.size() > 80 ? x.substr(0, 77) + "..." : x;
          for (char& c : s) {
            if (c == '\n' || c == '\r' || c == '\t') c = ' ';
          }
          out << '"' << s << '"';
        } else if constexpr (std::is_same_v<T, Array>) {
          out << '[';
          for (size_t i = 0; i < x.items.size() && i < max_items; ++i) {
            if (i > 0) out << ", ";
            render(out, x.items[i], max_items);
          }
          if (x.items.size() > max_items) out << ", ... (" << x.items.size() << " items)";
          out << ']';
        } else if constexpr (std::is_same_v<T, bool>) {
          out << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
          out << static_cast<int>(x);
        } else {
          out << x;
        }
      },
      v.storage());
}
}  // namespace

std::string to_display_string(const Value& v, size_t max_items) {
  std::ostringstream out;
  render(out, v, max_items);
  return out.str();
}

}  // namespace afm::gguf
