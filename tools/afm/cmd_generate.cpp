// `afm generate -m MODEL -p PROMPT [-n N] [--temp T] [--top-k K] [--top-p P] [--seed S]
//  [-t THREADS] [--draft MODEL] [--lookup N] [--stream] [--json]`: continues the raw prompt (no chat template; BOS only
// when the model's metadata asks for it). Timings go to stderr; --json prints one object:
// {"tokens": [...], "text": "...", "prompt_tokens": n, "timings": {...}}.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "base/mapped_file.h"
#include "base/process_stats.h"
#include "command.h"
#include "engine_options.h"
#include "framework/generation.h"
#include "option_checks.h"

namespace afm::cli {
namespace {

struct GenerateArgs {
  EngineArgs engine;
  SpeculationArgs speculation;
  sample::SamplerConfig sampling;
  std::string prompt, file;
  int64_t n_predict = 128;
  bool stream = false, json = false, ignore_eos = false;
};

void print_timings(const GenerationStats& s, const Engine& e, int threads) {
  std::fprintf(stderr,
               "afm: load %.1f ms, rss after load %.1f MiB, after generation %.1f MiB, %d threads\n"
               "afm: prompt eval %.2f ms / %lld tokens (%.2f tokens/s)\n"
               "afm:        eval %.2f ms / %lld tokens (%.2f tokens/s)\n",
               e.load_ms, e.rss_after_load / 1048576.0, resident_set_bytes() / 1048576.0, threads,
               s.prefill_ms,
               static_cast<long long>(s.prompt_tokens),
               s.prefill_ms > 0 ? 1000.0 * s.prompt_tokens / s.prefill_ms : 0.0, s.decode_ms,
               static_cast<long long>(s.generated),
               s.decode_ms > 0 ? 1000.0 * s.generated / s.decode_ms : 0.0);
  if (s.speculation.rounds > 0 || s.speculation.proposed > 0) {
    const SpeculationStats& p = s.speculation;
    std::fprintf(stderr, "afm: speculation: %llu drafted, %llu accepted (%.1f%%), %llu passes\n",
                 static_cast<unsigned long long>(p.proposed),
                 static_cast<unsigned long long>(p.accepted),
                 p.proposed > 0 ? 100.0 * p.accepted / p.proposed : 0.0,
                 static_cast<unsigned long long>(p.rounds));
  }
}

void run_generate(const GenerateArgs& a) {
  const Engine e = load_engine(a.engine);
  const std::string text = a.file.empty() ? a.prompt : read_file_to_string(a.file);
  const std::vector<int32_t> prompt = e.tokenizer->encode(text, {.parse_special = true,
                                                                 .add_bos = e.tokenizer->add_bos()});
  if (prompt.empty()) throw_error(ErrorCode::kInvalidArgument, "the prompt is empty");
  model::Context ctx(e.model, context_options(a.engine, e));
  const SpeculationConfig spec = speculation_config(a.speculation);
  check_speculation(spec, *e.model, *e.tokenizer);
  std::unique_ptr<Speculator> speculator;
  if (spec.enabled()) {
    model::ContextOptions draft_context = context_options(a.engine);
    draft_context.n_ctx = ctx.n_ctx();
    speculator = std::make_unique<Speculator>(spec, draft_context);
  }
  sample::Sampler sampler(a.sampling);
  tokenizer::IncrementalDecoder decoder(*e.tokenizer);
  std::vector<int32_t> generated, history;
  std::string out;
  GenerationRequest req;
  req.prompt = prompt;
  req.max_tokens = a.n_predict;
  if (!a.ignore_eos) req.stop_tokens = end_of_generation_tokens(*e.tokenizer);
  req.speculator = speculator.get();
  req.on_token = [&](int32_t id) {
    generated.push_back(id);
    const std::string piece = decoder.push(id);
    out += piece;
    if (a.stream && !a.json) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  };
  const GenerationStats stats = generate(ctx, sampler, req, history);
  const std::string tail = decoder.flush();
  out += tail;
  if (a.json) {
    nlohmann::json j;
    j["tokens"] = generated;
    j["text"] = out;
    j["prompt_tokens"] = prompt.size();
    j["timings"] = {{"prefill_ms", stats.prefill_ms}, {"decode_ms", stats.decode_ms}};
    if (speculator) {
      j["speculation"] = {{"drafted", stats.speculation.proposed},
                          {"accepted", stats.speculation.accepted},
                          {"passes", stats.speculation.rounds}};
    }
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    const std::string& rest = a.stream ? tail : out;
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::printf("\n");
  }
  print_timings(stats, e, ctx.n_threads());
}

void setup_generate(CLI::App& root) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = root.add_subcommand("generate", "Continue a prompt with a model (no chat template)");
  add_engine_options(cmd, a->engine);
  auto* p = cmd->add_option("-p,--prompt", a->prompt, "Prompt text")->check(not_empty());
  auto* f = cmd->add_option("-f,--file", a->file, "Read the prompt from a file");
  p->excludes(f);
  cmd->add_option("-n,--n-predict", a->n_predict,
                  "Tokens to generate (>= 1); -1 = until a stop token or the context is full")
      ->capture_default_str()
      ->check(token_limit());
  add_sampling_options(cmd, a->sampling);
  add_speculation_options(cmd, a->speculation);
  cmd->add_flag("--stream", a->stream, "Print text as it is generated");
  cmd->add_flag("--json", a->json, "Print one JSON object with tokens, text and timings");
  cmd->add_flag("--ignore-eos", a->ignore_eos, "Do not stop at end-of-generation tokens");
  cmd->callback([a, cmd] {
    if (cmd->count("--prompt") == 0 && a->file.empty()) {
      usage_error("generate needs -p PROMPT or -f FILE");
    }
    run_generate(*a);
  });
}

}  // namespace

AFM_COMMAND(generate, setup_generate);

}  // namespace afm::cli
