#include "server/api_error.h"

#include <utility>

#include "base/error.h"

namespace afm::server {

ApiError::ApiError(int status_, std::string message_, std::string type_, std::string param_,
                   std::string code_)
    : status(status_),
      message(std::move(message_)),
      type(std::move(type_)),
      param(std::move(param_)),
      code(std::move(code_)) {}

nlohmann::ordered_json ApiError::to_json() const {
  nlohmann::ordered_json e;
  e["message"] = message;
  e["type"] = type;
  e["param"] = param.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(param);
  e["code"] = code.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(code);
  return {{"error", std::move(e)}};
}

ApiError invalid_request(std::string message, std::string param, std::string code) {
  return ApiError(400, std::move(message), "invalid_request_error", std::move(param),
                  std::move(code));
}

ApiError api_error_from_exception(std::exception_ptr error, std::string* detail) {
  auto internal = [&](const std::string& what) {
    if (detail) *detail = what;
    return ApiError(500, "The server had an error while processing your request.", "server_error",
                    "", "");
  };
  try {
    std::rethrow_exception(error);
  } catch (const ApiError& e) {
    if (detail) *detail = e.message;
    return e;
  } catch (const Error& e) {
    if (detail) *detail = e.what();
    switch (e.code()) {
      case ErrorCode::kInvalidArgument:
      case ErrorCode::kFormat:
        return invalid_request(e.what(), "", "invalid_value");
      case ErrorCode::kUnsupported:
        return invalid_request(e.what(), "", "unsupported_value");
      default:
        return internal(e.what());
    }
  } catch (const std::exception& e) {
    return internal(e.what());
  } catch (...) {
    return internal("unknown exception");
  }
}

}  // namespace afm::server
