// `afm respond -m MODEL -p PROMPT [--schema FILE.json] [--system TEXT] [-n N] [sampling]
//  [--draft MODEL] [--lookup N] [--json]`
//   One assistant turn in the model's chat template. With --schema the answer is JSON valid for
//   the schema (guided generation; an unsupported keyword is an error naming it and its JSON
//   pointer) and is printed as one line; without, the answer text is streamed to stdout.
//   --json prints {"text", "finish_reason", "prompt_tokens", "completion_tokens", "prefill_ms",
//   "decode_ms"} and, when speculating, "speculation": {"drafted", "accepted", "forced",
//   "passes"}.
//   A schema answer cut off by -n or the context prints nothing on stdout: exit 1 with one line
//   saying what to change (close objects, bound strings and arrays, or raise -n / -c).
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "base/error.h"
#include "command.h"
#include "engine_options.h"
#include "framework/chat_service.h"
#include "option_checks.h"

namespace afm::cli {
namespace {

struct RespondArgs {
  EngineArgs engine;
  SpeculationArgs speculation;
  sample::SamplerConfig sampling;
  std::string prompt, schema_file, system;
  int64_t max_tokens = 512;
  bool json = false;
};

nlohmann::ordered_json read_schema(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error(ErrorCode::kIo, "cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (schema.is_discarded()) throw_error(ErrorCode::kFormat, path + ": not valid JSON");
  return schema;
}

// Why a schema answer stopped before its JSON was complete, and what to change.
std::string incomplete_json_message(const RespondArgs& a, const ChatResult& r, int64_t n_ctx) {
  const bool by_limit = a.max_tokens >= 0 && r.completion_tokens >= a.max_tokens;
  const std::string where = by_limit
                                ? "-n " + std::to_string(a.max_tokens) + " tokens"
                                : "the end of the context (" + std::to_string(n_ctx) + " tokens)";
  return "the answer reached " + where +
         " before the JSON was complete: close objects with \"additionalProperties\": false, "
         "bound strings and arrays with maxLength / maxItems, or raise " +
         (by_limit ? "-n" : "-c");
}

void run_respond(const RespondArgs& a) {
  const auto model = LoadedModel::load(a.engine.model);
  std::shared_ptr<const model::LoraAdapter> adapter;
  if (!a.engine.adapter.empty()) {
    adapter = model::LoraAdapter::load(a.engine.adapter, model->weights()->file());
  }
  ChatService service(model, {.n_slots = 1,
                              .n_ctx = a.engine.ctx,
                              .n_threads = resolve_threads(a.engine.threads),
                              .adapter = adapter,
                              .adapter_scale = a.engine.adapter_scale,
                              .speculation = speculation_config(a.speculation)});
  ChatRequest request;
  if (!a.system.empty()) request.messages.push_back({"system", a.system});
  request.messages.push_back({"user", a.prompt});
  if (!a.schema_file.empty()) request.response_schema = read_schema(a.schema_file);
  request.sampling = a.sampling;
  request.max_tokens = a.max_tokens;
  const bool stream = !a.json && !request.response_schema;
  const ChatResult r = service.complete(request, [&](const ChatDelta& d) {
    if (stream) {
      std::fwrite(d.text.data(), 1, d.text.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  });
  // A cut-off JSON answer is not printed: a script would read it as the answer.
  if (request.response_schema && r.finish_reason == "length") {
    throw_error(ErrorCode::kInvalidArgument, incomplete_json_message(a, r, service.n_ctx()));
  }
  if (a.json) {
    nlohmann::ordered_json out = {{"text", r.text},
                                        {"finish_reason", r.finish_reason},
                                        {"prompt_tokens", r.prompt_tokens},
                                        {"completion_tokens", r.completion_tokens},
                                        {"prefill_ms", r.prefill_ms},
                                        {"decode_ms", r.decode_ms}};
    if (a.speculation.lookup > 0 || !a.speculation.draft.empty()) {
      out["speculation"] = {{"drafted", r.speculation.proposed},
                            {"accepted", r.speculation.accepted},
                            {"forced", r.speculation.forced},
                            {"passes", r.speculation.rounds}};
    }
    std::printf("%s\n", out.dump().c_str());
  } else if (request.response_schema) {
    std::printf("%s\n", r.text.c_str());
  } else {
    std::printf("\n");
  }
}

void setup_respond(CLI::App& root) {
  auto a = std::make_shared<RespondArgs>();
  a->sampling.temperature = 0;  // greedy unless asked
  CLI::App* cmd =
      root.add_subcommand("respond", "One chat turn; with --schema, guided JSON output");
  add_engine_options(cmd, a->engine);
  add_sampling_options(cmd, a->sampling);
  add_speculation_options(cmd, a->speculation);
  cmd->add_option("-p,--prompt", a->prompt, "The user's message")->required()->check(not_empty());
  cmd->add_option("--schema", a->schema_file, "JSON Schema the answer must satisfy");
  cmd->add_option("--system", a->system, "System instructions");
  cmd->add_option("-n,--max-tokens", a->max_tokens,
                  "Most tokens in the answer (>= 1); -1 = until the context is full")
      ->capture_default_str()
      ->check(token_limit());
  cmd->add_flag("--json", a->json, "Print one JSON object with the answer and token counts");
  cmd->callback([a] { run_respond(*a); });
}

}  // namespace

AFM_COMMAND(respond, setup_respond);

}  // namespace afm::cli
