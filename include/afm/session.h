// A conversation with a model (Swift: LanguageModelSession).
//
// The session owns a KV cache that holds exactly the rendering of its transcript, so each
// turn evaluates only its new tokens (Response::usage says how many). Tools declared at
// construction may be called by the model during any turn: calls are constrained to the
// declared names and argument schemas, run concurrently, their outputs go into the
// transcript, and the model continues until it answers.
//
// Thread safety: one request at a time per session; a second concurrent request throws
// GenerationError(kConcurrentRequests). Different sessions run independently.
// Errors: every failure is a GenerationError (see errors.h) and leaves the session as it was.
// A full context is kExceededContextWindowSize ("context full: N of M tokens"), or, with
// ContextOverflow::kDropOldestTurns, makes the model stop seeing the oldest turns.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "afm/errors.h"
#include "afm/generable.h"
#include "afm/generated_content.h"
#include "afm/guardrail.h"
#include "afm/generation_schema.h"
#include "afm/model.h"
#include "afm/options.h"
#include "afm/tool.h"
#include "afm/transcript.h"

namespace afm {

struct Usage {
  int64_t prompt_tokens = 0;     // tokens of the context before each model call, summed
  int64_t prefilled_tokens = 0;  // of those, evaluated by this request (the rest were cached)
  int64_t response_tokens = 0;
};

template <class T>
struct Response {
  T content;
  std::vector<TranscriptEntry> entries;  // what this request appended to the transcript
  Usage usage;
};

// What a request does when the conversation and its new prompt do not fit the context.
enum class ContextOverflow {
  // GenerationError(kExceededContextWindowSize) "context full: N of M tokens"; the session is
  // unchanged and later requests that fit still work (the Swift framework's behaviour).
  kError,
  // The oldest turns after the instructions leave the model's view (transcript() keeps them)
  // until the prompt, with room for the response (maximum_response_tokens, else a quarter of
  // the context), fits in at most half the context. The instructions and the current turn are
  // always shown; a current turn that alone does not fit is still kExceededContextWindowSize.
  kDropOldestTurns,
};

class LanguageModelSession {
 public:
  LanguageModelSession(SystemLanguageModel model, std::vector<std::shared_ptr<Tool>> tools = {},
                       std::string instructions = {});
  // Continues a transcript (for example one saved from another session).
  LanguageModelSession(SystemLanguageModel model, std::vector<std::shared_ptr<Tool>> tools,
                       Transcript transcript);
  ~LanguageModelSession();
  LanguageModelSession(const LanguageModelSession&) = delete;
  LanguageModelSession& operator=(const LanguageModelSession&) = delete;

  // Text.
  Response<std::string> respond(const std::string& prompt, const GenerationOptions& options = {});
  // Structured content valid for `schema`. include_schema_in_prompt: show the schema to the
  // model (it is enforced either way).
  Response<GeneratedContent> respond(const std::string& prompt, const GenerationSchema& schema,
                                     const GenerationOptions& options = {},
                                     bool include_schema_in_prompt = true);
  // A Generable value.
  template <class T>
  Response<T> respond(const std::string& prompt, const GenerationOptions& options = {},
                      bool include_schema_in_prompt = true) {
    Response<GeneratedContent> r =
        respond(prompt, generation_schema<T>(), options, include_schema_in_prompt);
    return {from_generated_content<T>(r.content), std::move(r.entries), r.usage};
  }

  // Streaming: on_snapshot receives the whole response so far after every token.
  Response<std::string> stream_response(const std::string& prompt,
                                        const std::function<void(const std::string&)>& on_snapshot,
                                        const GenerationOptions& options = {});
  Response<GeneratedContent> stream_response(
      const std::string& prompt, const GenerationSchema& schema,
      const std::function<void(const GeneratedContent&)>& on_snapshot,
      const GenerationOptions& options = {}, bool include_schema_in_prompt = true);
  template <class T>
  Response<T> stream_response(const std::string& prompt,
                              const std::function<void(const PartiallyGenerated<T>&)>& on_snapshot,
                              const GenerationOptions& options = {},
                              bool include_schema_in_prompt = true) {
    Response<GeneratedContent> r = stream_response(
        prompt, generation_schema<T>(),
        [&](const GeneratedContent& c) { on_snapshot(partially_generated<T>(c)); }, options,
        include_schema_in_prompt);
    return {from_generated_content<T>(r.content), std::move(r.entries), r.usage};
  }

  // Evaluates the instructions (and, optionally, the start of the next prompt) ahead of time.
  void prewarm(const std::string& prompt_prefix = {});

  // Checks every later request's prompt and response (nullptr: none).
  void set_guardrail(std::shared_ptr<Guardrail> guardrail);
  // How later requests handle a full context (default kError). Not while responding.
  void set_context_overflow(ContextOverflow policy);

  const Transcript& transcript() const;
  bool is_responding() const;
  const SystemLanguageModel& model() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace afm
