// Options and loading shared by the commands that run a model (generate, chat, respond, bench,
// eval, serve): -m MODEL, -t THREADS, -c CTX, -b BATCH, --kv-type, and the sampling flags.
// Every numeric value is range-checked while parsing (option_checks.h).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "framework/speculator.h"
#include "model/context.h"
#include "model/model.h"
#include "sample/sampler.h"
#include "tokenizer/tokenizer.h"

namespace afm::cli {

struct EngineArgs {
  std::string model;
  int threads = 0;  // 0: the physical cores (resolve_threads)
  int64_t ctx = 0;
  int64_t batch = 512;
  std::string kv_type = "f16";
  std::string adapter;        // --adapter: a LoRA adapter GGUF ("" : none)
  float adapter_scale = 1.0f; // --adapter-scale: s = alpha / rank x this
};

// Speculative decoding (docs/speculative.md): --draft/--model-draft MODEL, --lookup N,
// --draft-max N.
struct SpeculationArgs {
  std::string draft;  // "" : no draft model
  int lookup = 0;     // longest n-gram of prompt lookup (0: off)
  int draft_max = 8;  // most drafted tokens per verification pass
};

void add_engine_options(CLI::App* cmd, EngineArgs& args);
void add_speculation_options(CLI::App* cmd, SpeculationArgs& args);
// The configuration for these arguments, loading the draft model (Error naming its file).
// Not yet checked against the target: check_speculation does that.
SpeculationConfig speculation_config(const SpeculationArgs& args);
void add_sampling_options(CLI::App* cmd, sample::SamplerConfig& config);
// -t/--threads with the range check; `help` says what the count applies to.
CLI::Option* add_threads_option(CLI::App* cmd, int& threads, const std::string& help);

// The compute threads for a -t value: 0 gives `default_threads` (<= 0: the physical cores
// available to the process); a value above the available logical cores is capped to them,
// with a one-line warning on stderr (a larger pool only waits for the CPUs at its barriers).
int resolve_threads(int requested, int default_threads = 0);

struct Engine {
  std::shared_ptr<const model::Model> model;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
  std::shared_ptr<const model::LoraAdapter> adapter;  // null without --adapter
  double load_ms = 0;
  size_t rss_after_load = 0;  // bytes; weights are mmapped, so this counts pages touched so far
};

// Loads the model, its tokenizer and the --adapter, checked against the model (Error naming
// the file on failure).
Engine load_engine(const EngineArgs& args);
// The context options for these arguments (threads resolved: see resolve_threads).
model::ContextOptions context_options(const EngineArgs& args);
// The same, with the engine's adapter attached (every sequence runs on it).
model::ContextOptions context_options(const EngineArgs& args, const Engine& engine);

}  // namespace afm::cli
