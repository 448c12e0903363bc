// Tools the model may call during a session (Swift: Tool).
//
// A tool has a name, a description and a Generable Arguments type (or a GenerationSchema);
// the model's calls are constrained to declared names and to arguments valid for that tool's
// schema. call() runs on a worker thread; several calls of one turn run concurrently, so a
// tool must be safe to call from several threads at once. An exception thrown by call()
// ends the request with GenerationError(kToolCallError) naming the tool.
#pragma once

#include <string>
#include <variant>

#include "afm/generable.h"
#include "afm/generated_content.h"
#include "afm/generation_schema.h"

namespace afm {

// What a tool returns: text, or structured content (shown to the model as compact JSON).
using ToolOutput = std::variant<std::string, GeneratedContent>;

class Tool {
 public:
  virtual ~Tool() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual GenerationSchema arguments_schema() const = 0;
  virtual ToolOutput call(const GeneratedContent& arguments) = 0;
};

// A tool whose arguments are a Generable struct: implement call(const Args&).
template <class Args>
class TypedTool : public Tool {
 public:
  GenerationSchema arguments_schema() const override { return generation_schema<Args>(); }
  ToolOutput call(const GeneratedContent& arguments) final {
    return call(from_generated_content<Args>(arguments));
  }
  virtual ToolOutput call(const Args& arguments) = 0;
};

}  // namespace afm
