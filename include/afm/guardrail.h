// Content checks around a session's requests (Swift: Guardrails). afm ships no classifier;
// an application plugs its own in with LanguageModelSession::set_guardrail().
//
// check_prompt runs before the model sees the prompt; check_response runs on the final answer
// (text or compact JSON) before it enters the transcript. To reject, throw
// GenerationError(kGuardrailViolation) or GenerationError(kRefusal); the session is then left
// as it was before the request. Called on the thread that called respond().
#pragma once

#include <string>

namespace afm {

class Guardrail {
 public:
  virtual ~Guardrail() = default;
  virtual void check_prompt(const std::string& /*prompt*/) {}
  virtual void check_response(const std::string& /*response*/) {}
};

}  // namespace afm
