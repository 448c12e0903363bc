// Errors the HTTP API reports, in OpenAI's shape:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "...", "code": "..."}}
//
// The request parser throws ApiError directly (it knows the parameter); everything else that
// escapes a request (afm::Error from the engine, std::exception, anything) is turned into one
// by api_error_from_exception(), so no exception crosses the server boundary and internal
// details never reach the client in a 500.
// Thread safety: plain values; the functions are reentrant.
#pragma once

#include <exception>
#include <nlohmann/json.hpp>
#include <string>

namespace afm::server {

struct ApiError : std::exception {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // empty: null
  std::string code;   // empty: null

  ApiError() = default;
  ApiError(int status, std::string message, std::string type, std::string param, std::string code);
  const char* what() const noexcept override { return message.c_str(); }

  // {"error": {...}}
  nlohmann::ordered_json to_json() const;
};

// 400 invalid_request_error naming `param` (may be empty).
ApiError invalid_request(std::string message, std::string param = {}, std::string code = {});

// Maps an exception to the API's error: afm::Error kInvalidArgument / kUnsupported / kFormat
// -> 400 with the engine's message (it names the problem: keyword and JSON pointer, tool,
// prompt length); ApiError -> itself; anything else -> 500 with a generic message (the detail
// is returned in `detail` for the server log only).
ApiError api_error_from_exception(std::exception_ptr error, std::string* detail = nullptr);

}  // namespace afm::server
