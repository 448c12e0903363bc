// Errors a session reports, mirroring the Swift framework's GenerationError cases.
//
// Every failure of a respond()/stream_response() call is a GenerationError; the session is
// left as it was before the call (the transcript and the KV cache do not change). Loading a
// model never throws: SystemLanguageModel::availability() says why it cannot be used.
#pragma once

#include <stdexcept>
#include <string>

namespace afm {

enum class GenerationErrorKind {
  kExceededContextWindowSize,  // prompt + response do not fit the context
  kConcurrentRequests,         // a second request while one is running on the same session
  kUnsupportedGuide,           // a guide or schema the guided engine cannot enforce
  kDecodingFailure,            // the output could not be turned into the requested value
  kToolCallError,              // a tool threw; tool_name() says which
  kGuardrailViolation,         // hook for content guardrails (raised by a Guardrail)
  kRefusal,                    // hook for model refusals (raised by a Guardrail)
  kUnavailable,                // the model could not be loaded or has no chat template
};

const char* generation_error_kind_name(GenerationErrorKind kind);

class GenerationError : public std::runtime_error {
 public:
  GenerationError(GenerationErrorKind kind, const std::string& message, std::string tool_name = {})
      : std::runtime_error(message), kind_(kind), tool_name_(std::move(tool_name)) {}
  GenerationErrorKind kind() const { return kind_; }
  const std::string& tool_name() const { return tool_name_; }

 private:
  GenerationErrorKind kind_;
  std::string tool_name_;
};

}  // namespace afm
