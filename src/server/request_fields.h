// Typed access to the members of a request body, throwing OpenAI-style ApiErrors (400) that
// name the parameter: "Invalid type for 'temperature': expected a number, but got a string
// instead." Internal to the request parser (openai_request.cpp).
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "server/api_error.h"

namespace afm::server::fields {

using Json = nlohmann::ordered_json;

[[noreturn]] void wrong_type(const std::string& param, const char* expected, const Json& got);
[[noreturn]] void bad_value(const std::string& param, const std::string& message);
[[noreturn]] void unsupported(const std::string& param, const std::string& message);

// The member `key` of `obj`, or nullptr when absent or null (OpenAI treats null as not given).
const Json* member(const Json& obj, const char* key);
// The member, or a 400 "Missing required parameter" naming `param`.
const Json& required(const Json& obj, const char* key, const std::string& param);

const std::string& as_string(const Json& v, const std::string& param);
const Json& as_object(const Json& v, const std::string& param);
const Json& as_array(const Json& v, const std::string& param);
bool as_bool(const Json& v, const std::string& param);
double as_number(const Json& v, const std::string& param);
int64_t as_integer(const Json& v, const std::string& param);  // integers only, not 1.0
// obj[key] (present) as a number in [lo, hi]: "temperature must be in [0, 2], got 3".
double number_in(const Json& obj, const char* key, double lo, double hi);
// OpenAI's rule for function and schema names: 1-64 of a-z, A-Z, 0-9, '_', '-'.
bool valid_name(const std::string& s);

}  // namespace afm::server::fields
