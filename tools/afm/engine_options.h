// Options and loading shared by the commands that run a model (generate, chat, bench, eval):
// -m MODEL, -t THREADS, -c CTX, -b BATCH, --kv-type, and the sampling flags.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "model/context.h"
#include "model/model.h"
#include "sample/sampler.h"
#include "tokenizer/tokenizer.h"

namespace afm::cli {

struct EngineArgs {
  std::string model;
  int threads = 0;
  int64_t ctx = 0;
  int64_t batch = 512;
  std::string kv_type = "f16";
};

void add_engine_options(CLI::App* cmd, EngineArgs& args);
void add_sampling_options(CLI::App* cmd, sample::SamplerConfig& config);

struct Engine {
  std::shared_ptr<const model::Model> model;
  std::unique_ptr<tokenizer::Tokenizer> tokenizer;
  double load_ms = 0;
  size_t rss_after_load = 0;  // bytes; weights are mmapped, so this counts pages touched so far
};

// Loads the model and its tokenizer (Error naming the file on failure).
Engine load_engine(const EngineArgs& args);
model::ContextOptions context_options(const EngineArgs& args);

}  // namespace afm::cli
