#include "server/request_fields.h"

#include <cctype>
#include <cstdio>

namespace afm::server::fields {
namespace {

const char* type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    default:
      return "an unknown value";
  }
}

std::string format_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

[[noreturn]] void wrong_type(const std::string& param, const char* expected, const Json& got) {
  throw invalid_request("Invalid type for '" + param + "': expected " + expected + ", but got " +
                            type_name(got) + " instead.",
                        param, "invalid_type");
}

[[noreturn]] void bad_value(const std::string& param, const std::string& message) {
  throw invalid_request(message, param, "invalid_value");
}

[[noreturn]] void unsupported(const std::string& param, const std::string& message) {
  throw invalid_request(message, param, "unsupported_parameter");
}

const Json* member(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

const Json& required(const Json& obj, const char* key, const std::string& param) {
  const Json* v = member(obj, key);
  if (!v)
    throw invalid_request("Missing required parameter: '" + param + "'.", param,
                          "missing_required_parameter");
  return *v;
}

const std::string& as_string(const Json& v, const std::string& param) {
  if (!v.is_string()) wrong_type(param, "a string", v);
  return v.get_ref<const std::string&>();
}

const Json& as_object(const Json& v, const std::string& param) {
  if (!v.is_object()) wrong_type(param, "an object", v);
  return v;
}

const Json& as_array(const Json& v, const std::string& param) {
  if (!v.is_array()) wrong_type(param, "an array", v);
  return v;
}

bool as_bool(const Json& v, const std::string& param) {
  if (!v.is_boolean()) wrong_type(param, "a boolean", v);
  return v.get<bool>();
}

double as_number(const Json& v, const std::string& param) {
  if (!v.is_number()) wrong_type(param, "a number", v);
  return v.get<double>();
}

int64_t as_integer(const Json& v, const std::string& param) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      bad_value(param, param + " is too large");
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (!v.is_number_integer()) wrong_type(param, "an integer", v);
  return v.get<int64_t>();
}

double number_in(const Json& obj, const char* key, double lo, double hi) {
  const double x = as_number(*member(obj, key), key);
  if (!(x >= lo && x <= hi)) {
    bad_value(key, std::string(key) + " must be in [" + format_number(lo) + ", " +
                       format_number(hi) + "], got " + format_number(x));
  }
  return x;
}

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

}  // namespace afm::server::fields
