#include "framework/session_support.h"

#include <future>

#include "afm/errors.h"

namespace afm {

sample::SamplerConfig sampler_config(const GenerationOptions& options) {
  sample::SamplerConfig c;
  c.repeat_penalty = 1.0f;
  c.min_p = 0.0f;
  c.top_k = 0;
  c.top_p = 1.0f;
  c.seed = options.sampling.seed;
  c.temperature = static_cast<float>(options.temperature.value_or(1.0));
  switch (options.sampling.kind) {
    case SamplingMode::Kind::kGreedy: c.temperature = 0.0f; break;
    case SamplingMode::Kind::kTopK: c.top_k = options.sampling.top_k; break;
    case SamplingMode::Kind::kTopP: c.top_p = static_cast<float>(options.sampling.top_p); break;
  }
  try {
    sample::validate(c);
  } catch (const std::exception& e) {
    throw GenerationError(GenerationErrorKind::kDecodingFailure, std::string("options: ") + e.what());
  }
  return c;
}

Transcript instructions_transcript(std::string instructions) {
  Transcript t;
  if (!instructions.empty()) {
    t.push_back(TranscriptEntry{TranscriptEntry::Kind::kInstructions, std::move(instructions)});
  }
  return t;
}

std::vector<ChatMessage> transcript_messages(const Transcript& transcript) {
  std::vector<ChatMessage> out;
  for (const TranscriptEntry& e : transcript) {
    switch (e.kind) {
      case TranscriptEntry::Kind::kInstructions: out.push_back({"system", e.text}); break;
      case TranscriptEntry::Kind::kPrompt: out.push_back({"user", e.text}); break;
      case TranscriptEntry::Kind::kResponse: out.push_back({"assistant", e.text}); break;
      case TranscriptEntry::Kind::kToolOutput: out.push_back({"tool", e.text, {}, e.tool_name}); break;
      case TranscriptEntry::Kind::kToolCalls: {
        ChatMessage m{"assistant", ""};
        for (const auto& c : e.calls) m.tool_calls.push_back(ToolCall{"", c.name, c.arguments});
        out.push_back(std::move(m));
        break;
      }
    }
  }
  return out;
}

TranscriptEntry prompt_entry(const std::string& prompt, const GenerationSchema* schema,
                             bool show_schema) {
  TranscriptEntry e{TranscriptEntry::Kind::kPrompt, prompt};
  if (schema && show_schema) e.schema = schema->json_schema();
  return e;
}

std::string open_turn(const ChatTemplate& tmpl, const std::string& role) {
  static const std::string kMarker = "\x01";  // never part of a template's own text
  const std::string whole = tmpl.render_message({role, kMarker});
  return whole.substr(0, whole.find(kMarker));
}

std::vector<std::string> call_tools_concurrently(const std::vector<std::shared_ptr<Tool>>& tools,
                                                 const std::vector<ToolCall>& calls) {
  std::vector<std::future<std::string>> running;
  for (const ToolCall& call : calls) {
    Tool* tool = nullptr;
    for (const auto& t : tools) {
      if (t->name() == call.name) tool = t.get();
    }
    if (!tool) {
      throw GenerationError(GenerationErrorKind::kToolCallError,
                            "the model called an undeclared tool '" + call.name + "'", call.name);
    }
    running.push_back(std::async(std::launch::async, [tool, args = call.arguments] {
      ToolOutput out = tool->call(GeneratedContent(args));
      if (const auto* text = std::get_if<std::string>(&out)) return *text;
      return std::get<GeneratedContent>(out).json_string();
    }));
  }
  std::vector<std::string> outputs;
  for (size_t i = 0; i < running.size(); ++i) {
    try {
      outputs.push_back(running[i].get());
    } catch (const std::exception& e) {
      for (size_t j = i + 1; j < running.size(); ++j) running[j].wait();
      throw GenerationError(GenerationErrorKind::kToolCallError,
                            "tool '" + calls[i].name + "' failed: " + e.what(), calls[i].name);
    }
  }
  return outputs;
}

nlohmann::ordered_json parse_json(const std::string& text) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    throw GenerationError(GenerationErrorKind::kDecodingFailure,
                          "the response is not valid JSON: " + text.substr(0, 200));
  }
  return j;
}

}  // namespace afm
