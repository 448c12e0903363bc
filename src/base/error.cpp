#include "base/error.h"

namespace afm {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kFormat:
      return "format";
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

void throw_error(ErrorCode code, const std::string& message) { throw Error(code, message); }

namespace detail {
void check_failed(const char* expr, const char* file, int line) {
  throw Error(ErrorCode::kInternal, std::string("internal check failed: ") + expr + " at " + file +
                                        ":" + std::to_string(line));
}
}  // namespace detail

}  // namespace afm
