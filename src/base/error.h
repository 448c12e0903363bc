// Typed errors for input-dependent failures, and AFM_CHECK for invariants.
//
// Contract: functions that read untrusted input (files, schemas, requests) throw afm::Error
// with a code and a message that names the problem and where it is (byte offset, JSON
// pointer, argument). AFM_CHECK failures are programming errors: they throw
// ErrorCode::kInternal so that a bug in one request never takes a server down.
#pragma once

#include <stdexcept>
#include <string>

namespace afm {

enum class ErrorCode {
  kIo,               // a file could not be opened, read, written or renamed
  kFormat,           // bytes that do not follow their format (GGUF, safetensors, JSON ...)
  kInvalidArgument,  // a caller or command-line argument is wrong
  kUnsupported,      // valid input that this build cannot handle (a new tensor type ...)
  kNotFound,         // a named key, tensor or file is missing
  kInternal,         // an invariant failed: a bug in afm
};

const char* error_code_name(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] void throw_error(ErrorCode code, const std::string& message);

namespace detail {
[[noreturn]] void check_failed(const char* expr, const char* file, int line);
}  // namespace detail

}  // namespace afm

#define AFM_CHECK(cond)                                                  \
  do {                                                                   \
    if (!(cond)) ::afm::detail::check_failed(#cond, __FILE__, __LINE__); \
  } while (0)
