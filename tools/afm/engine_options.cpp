#include "engine_options.h"

#include <chrono>
#include <cstdio>

#include "base/cpu_count.h"
#include "base/error.h"
#include "base/process_stats.h"
#include "framework/loaded_model.h"
#include "model/registry.h"
#include "option_checks.h"

namespace afm::cli {

CLI::Option* add_threads_option(CLI::App* cmd, int& threads, const std::string& help) {
  return cmd->add_option("-t,--threads", threads, help)->check(at_least(0));
}

void add_engine_options(CLI::App* cmd, EngineArgs& a) {
  cmd->add_option("-m,--model", a.model, "GGUF model file")->required();
  add_threads_option(cmd, a.threads,
                     "Compute threads (default 0: the physical cores available; capped at the "
                     "available CPUs)");
  cmd->add_option("-c,--ctx-size", a.ctx,
                  "Context size in tokens (default 0: the model's, <= 4096)")
      ->check(at_least(0));
  cmd->add_option("-b,--batch-size", a.batch, "Prompt tokens per forward pass")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--kv-type", a.kv_type,
                  "KV cache type: f16, f32, or q8 (int8; the model's learned scales if it has "
                  "them, else one absmax scale per head and position)")
      ->check(CLI::IsMember({"f16", "f32", "q8"}));
  cmd->add_option("--adapter", a.adapter,
                  "LoRA adapter GGUF (llama.cpp layout, docs/adapters.md), applied unmerged")
      ->check(CLI::ExistingFile);
  cmd->add_option("--adapter-scale", a.adapter_scale,
                  "Adapter strength: the update is alpha / rank x this (0: the base model)")
      ->capture_default_str()
      ->check(between(-100, 100));
}

void add_speculation_options(CLI::App* cmd, SpeculationArgs& a) {
  cmd->add_option("--draft,--model-draft", a.draft,
                  "Draft model GGUF with the model's vocabulary: speculative decoding (the "
                  "output is the same; docs/speculative.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--lookup", a.lookup,
                  "Prompt lookup: draft tokens by matching the last N-gram (N <= this) against "
                  "the prompt and output so far (0 = off)")
      ->capture_default_str()
      ->check(between(0, 16));
  cmd->add_option("--draft-max", a.draft_max,
                  "Most drafted tokens per verification pass (adapts below it)")
      ->capture_default_str()
      ->check(between(1, 32));
}

SpeculationConfig speculation_config(const SpeculationArgs& a) {
  SpeculationConfig c;
  c.lookup = a.lookup;
  c.max_draft = a.draft_max;
  if (!a.draft.empty()) c.draft = LoadedModel::load(a.draft);
  return c;
}

void add_sampling_options(CLI::App* cmd, sample::SamplerConfig& c) {
  cmd->add_option("--temp", c.temperature, "Temperature; 0 = greedy")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--top-k", c.top_k, "Top-k; 0 = off")->capture_default_str()->check(at_least(0));
  cmd->add_option("--top-p", c.top_p, "Top-p; 1 = off")
      ->capture_default_str()
      ->check(above_up_to(0, 1));
  cmd->add_option("--min-p", c.min_p, "Min-p; 0 = off")
      ->capture_default_str()
      ->check(between(0, 1));
  cmd->add_option("--repeat-penalty", c.repeat_penalty, "Repetition penalty; 1 = off")
      ->capture_default_str()
      ->check(above(0));
  cmd->add_option("--repeat-last-n", c.repeat_last_n, "Penalty window; -1 = all, 0 = off")
      ->capture_default_str()
      ->check(at_least(-1));
  cmd->add_option("--presence-penalty", c.presence_penalty, "Presence penalty")
      ->capture_default_str()
      ->check(finite_number());
  cmd->add_option("--frequency-penalty", c.frequency_penalty, "Frequency penalty")
      ->capture_default_str()
      ->check(finite_number());
  cmd->add_option("-s,--seed", c.seed, "Random seed")->capture_default_str()->check(at_least(0));
}

int resolve_threads(int requested, int default_threads) {
  if (requested <= 0) return default_threads > 0 ? default_threads : physical_cores();
  const int available = available_cores();
  if (requested <= available) return requested;
  std::fprintf(stderr, "afm: warning: -t %d is more than the %d CPUs available; using %d\n",
               requested, available, available);
  return available;
}

Engine load_engine(const EngineArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  Engine e;
  e.model = model::load_model(a.model);
  e.tokenizer = load_model_tokenizer(*e.model, a.model);
  if (!a.adapter.empty()) e.adapter = model::LoraAdapter::load(a.adapter, e.model->file());
  e.rss_after_load = resident_set_bytes();
  e.load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return e;
}

model::ContextOptions context_options(const EngineArgs& a) {
  model::ContextOptions o;
  o.n_ctx = a.ctx;
  o.n_threads = resolve_threads(a.threads);
  o.n_batch = a.batch;
  o.kv_type = a.kv_type == "f32"  ? ops::KvType::kF32
              : a.kv_type == "q8" ? ops::KvType::kQ8
                                  : ops::KvType::kF16;
  return o;
}

model::ContextOptions context_options(const EngineArgs& a, const Engine& e) {
  model::ContextOptions o = context_options(a);
  o.adapter = e.adapter;
  o.adapter_scale = a.adapter_scale;
  return o;
}

}  // namespace afm::cli
