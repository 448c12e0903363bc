// `afm serve -m MODEL [--host 127.0.0.1] [--port 8080] [--api-key K] [--slots N] [-c CTX]
//  [-t THREADS] [--max-body BYTES] [--http-threads N] [--adapter NAME=FILE ...]
//  [--adapter-scale S] [--model-draft MODEL] [--lookup N]`: the OpenAI-compatible HTTP server
// (docs/server.md). Prints "listening on http://HOST:PORT" on stderr once it accepts
// connections; SIGINT / SIGTERM cancel running generations and stop it cleanly (exit 0).
// Running requests share forward passes (continuous batching) on one pool of -t threads
// (default: the physical cores). With --no-batching each slot runs its own passes and -t is
// per slot (default: the physical cores divided among the slots).
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/cpu_count.h"
#include "base/error.h"
#include "base/malloc_policy.h"
#include "base/physical_memory.h"
#include "command.h"
#include "engine_options.h"
#include "framework/chat_service.h"
#include "framework/loaded_model.h"
#include "model/lora.h"
#include "option_checks.h"
#include "server/http_server.h"

namespace afm::cli {
namespace {

struct ServeArgs {
  std::string model;
  bool no_batching = false;
  int slots = 0;  // 0: chosen from the KV cache size (default_slots)
  std::vector<std::string> adapters;  // NAME=FILE
  float adapter_scale = 1.0f;
  server::HttpServerOptions http;
  ChatServiceOptions service;
  SpeculationArgs speculation;
};

// Signals are taken by one waiting thread rather than a handler, so stopping the server
// (locks, condition variables) happens in ordinary code. Every thread inherits the mask, so it
// must be set before the first thread starts.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);  // internal: wakes the waiter when the server ends on its own
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Without a --slots: up to 8 requests batched at once, fewer when 8 KV caches of the context
// would take more than a quarter of the machine's memory. With --no-batching, one slot per
// core pair at most would leave each with too few threads, so the default stays 1.
int default_slots(const LoadedModel& model, const ChatServiceOptions& o) {
  if (!o.batching) return 1;
  model::StateOptions s;
  s.n_ctx = model::default_n_ctx(model.weights()->hparams(), o.n_ctx);
  s.n_batch = 1;
  const size_t per_slot = std::max<size_t>(1, model.weights()->new_state(s)->kv_bytes());
  const uint64_t budget = physical_memory_bytes() / 4;
  return static_cast<int>(std::clamp<uint64_t>(budget / per_slot, 1, 8));
}

// Threads per slot: -t capped at the CPUs, or the physical cores shared among the slots.
int threads_per_slot(int requested, int n_slots) {
  const int threads = resolve_threads(requested, std::max(1, physical_cores() / n_slots));
  if (requested > 0 && threads * n_slots > available_cores()) {
    std::fprintf(stderr,
                 "afm serve: warning: %d slots x %d threads is more than the %d CPUs available; "
                 "busy slots will slow each other down\n",
                 n_slots, threads, available_cores());
  }
  return threads;
}

// NAME=FILE pairs; names are unique, non-empty and free of ':' and '/'.
std::vector<std::pair<std::string, std::string>> parse_adapter_specs(
    const std::vector<std::string>& specs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    if (eq == std::string::npos || name.empty() || eq + 1 == spec.size() ||
        name.find_first_of(":/") != std::string::npos) {
      usage_error("--adapter must be NAME=FILE (a name without ':' or '/'), got '" + spec + "'");
    }
    for (const auto& [other, file] : out) {
      if (other == name) usage_error("--adapter name '" + name + "' is given twice");
    }
    out.emplace_back(name, spec.substr(eq + 1));
  }
  return out;
}

// The bounded caches a request can fill, for GET /metrics: growth here is a cache filling up to
// its bound, not a leak.
std::vector<server::Metric> cache_metrics(const ChatCacheStats& c) {
  auto g = [](const char* name, const char* help, size_t v) {
    return server::gauge(name, help, static_cast<double>(v));
  };
  return {g("afm_grammar_cache_entries", "Compiled grammars kept", c.grammar_entries),
          g("afm_grammar_cache_bytes", "Bytes held by the compiled grammars kept", c.grammar_bytes),
          g("afm_mask_caches", "Token-mask caches alive", c.mask_caches),
          g("afm_mask_cache_states", "Parse states in the token-mask caches", c.mask_states),
          g("afm_mask_cache_bytes", "Bytes held by the token-mask caches", c.mask_bytes),
          g("afm_loop_index_bytes", "Bytes held by the vocabularies' loop indexes",
            c.loop_index_bytes)};
}

// What the server has done and is doing, for a balancer or a dashboard.
std::vector<server::Metric> serving_metrics(const ChatService& service) {
  const ChatUsageStats u = service.usage_stats();
  const model::BatchEngineStats b = service.batch_stats();
  const SpeculationStats sp = service.speculation_stats();
  auto counter = [](const char* name, const char* help, uint64_t v) {
    return server::Metric{name, help, "counter", {{"", static_cast<double>(v)}}};
  };
  auto g = [](const char* name, const char* help, double v) { return server::gauge(name, help, v); };
  return {counter("afm_chat_requests_total", "Chat completions answered", u.requests),
          counter("afm_prompt_tokens_total", "Prompt tokens of answered requests", u.prompt_tokens),
          counter("afm_prompt_tokens_cached_total",
                  "Prompt tokens reused from a slot's KV cache (prefix cache hits)",
                  u.cached_prompt_tokens),
          counter("afm_completion_tokens_total", "Tokens generated", u.completion_tokens),
          g("afm_requests_queued", "Requests waiting for a slot",
            static_cast<double>(service.queued_requests())),
          g("afm_requests_running", "Requests holding a slot", static_cast<double>(b.active)),
          counter("afm_batch_steps_total", "Batched forward passes", b.steps),
          counter("afm_batch_tokens_total", "Tokens evaluated by batched passes", b.tokens),
          counter("afm_batch_sequences_total",
                  "Sequences summed over batched passes (divided by steps: the mean batch size)",
                  b.sequences),
          g("afm_batch_size_max", "The most sequences one pass has run",
            static_cast<double>(b.max_sequences)),
          counter("afm_speculative_passes_total",
                  "Verification passes that carried drafted tokens", sp.rounds),
          counter("afm_speculative_drafted_tokens_total",
                  "Tokens drafted by prompt lookup or the draft model", sp.proposed),
          counter("afm_speculative_accepted_tokens_total",
                  "Drafted tokens the model sampled too (acceptance = accepted / drafted)",
                  sp.accepted),
          counter("afm_speculative_forced_tokens_total",
                  "Tokens the grammar forced, verified without drafting (jump-forward)",
                  sp.forced)};
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Model id `id` answered by `service` on `adapter`.
server::ServedModel serve_as(const std::shared_ptr<ChatService>& service, std::string id,
                             int64_t created, const ChatAdapter& adapter,
                             std::optional<server::AdapterInfo> info) {
  return {std::move(id), created,
          [service, adapter](const ChatRequest& request, const server::DeltaFn& on_delta,
                             const server::CancelledFn& cancelled) {
            ChatRequest r = request;
            r.adapter = adapter;
            return service->complete(r, on_delta, cancelled);
          },
          std::move(info)};
}

// The model's tokenizer for the /tokenize routes (server/tokenizer_api.h).
server::ServedTokenizer server_tokenizer(const std::shared_ptr<const LoadedModel>& model, int64_t n_ctx) {
  const tokenizer::Tokenizer& tok = model->tokenizer();
  server::ServedTokenizer t;
  t.encode = [model](std::string_view text, bool add_bos) {
    const tokenizer::Tokenizer& tk = model->tokenizer();
    return tk.encode(text, {.parse_special = true, .add_bos = add_bos && tk.add_bos()});
  };
  t.decode = [model](std::span<const int32_t> ids) { return model->tokenizer().decode(ids); };
  t.vocab_size = std::min<int64_t>(tok.vocab_size(), model->weights()->hparams().n_vocab);
  t.context = n_ctx;
  if (tok.bos_id()) t.bos_token = tok.token_bytes(*tok.bos_id());
  if (tok.eos_id()) t.eos_token = tok.token_bytes(*tok.eos_id());
  t.chat_template = tok.chat_template();
  return t;
}

void run_serve(ServeArgs a) {
  a.service.batching = !a.no_batching;
  if (a.http.api_key.empty()) {
    if (const char* key = std::getenv("AFM_API_KEY")) a.http.api_key = key;
  }
  keep_large_allocations_mapped();  // before any thread: see base/malloc_policy.h
  const sigset_t signals = block_stop_signals();
  std::shared_ptr<const LoadedModel> model = LoadedModel::load(a.model);
  if (!model->chat_template()) {  // a base model: text completions only
    std::fprintf(stderr, "afm serve: /v1/chat/completions will answer 400: %s; "
                 "/v1/completions works\n", model->unavailable_reason().c_str());
  }
  a.service.speculation = speculation_config(a.speculation);
  a.service.n_slots = a.slots > 0 ? a.slots : default_slots(*model, a.service);
  a.service.n_threads = a.service.batching ? resolve_threads(a.service.n_threads, physical_cores())
                                           : threads_per_slot(a.service.n_threads, a.service.n_slots);
  auto service = std::make_shared<ChatService>(model, a.service);
  const int64_t created = unix_now();
  // The base model, then one id per adapter; every id runs on the same slots (chat_service.h:
  // a slot's cache is reused only on its own adapter). Adapters loaded later through the admin
  // routes (docs/server.md) join the same way.
  std::vector<server::ServedModel> served;
  served.push_back(serve_as(service, model->id(), created, ChatAdapter{}, std::nullopt));
  for (const auto& [name, path] : parse_adapter_specs(a.adapters)) {
    auto adapter = model::LoraAdapter::load(path, model->weights()->file());
    served.push_back(serve_as(service, model->id() + ":" + name, created,
                              ChatAdapter{adapter, a.adapter_scale},
                              server::AdapterInfo{name, path, a.adapter_scale}));
  }
  a.http.load_adapter = [service, model](const std::string& id, const server::AdapterInfo& info) {
    auto adapter = model::LoraAdapter::load(info.path, model->weights()->file());
    return serve_as(service, id, unix_now(), ChatAdapter{adapter, info.scale}, info);
  };

  a.http.tokenizer = server_tokenizer(model, service->n_ctx());
  a.http.metrics = [service] {
    std::vector<server::Metric> all = cache_metrics(service->cache_stats());
    for (server::Metric& m : serving_metrics(*service)) all.push_back(std::move(m));
    return all;
  };
  server::HttpServer http(std::move(served), a.http);
  http.bind();
  std::fprintf(stderr, "afm serve: model '%s', context %lld tokens, %d slot(s) %s %d thread(s)%s\n",
               model->id().c_str(), static_cast<long long>(service->n_ctx()), a.service.n_slots,
               a.service.batching ? "batched on" : "x", a.service.n_threads,
               a.http.api_key.empty() ? "" : ", API key required");
  if (a.service.speculation.enabled()) {
    std::fprintf(stderr, "afm serve: speculative decoding with %s%s%s (up to %d drafted tokens)\n",
                 a.speculation.lookup > 0 ? "prompt lookup" : "",
                 a.speculation.lookup > 0 && a.service.speculation.draft ? " and " : "",
                 a.service.speculation.draft ? a.speculation.draft.c_str() : "",
                 a.speculation.draft_max);
  }
  std::fprintf(stderr, "listening on http://%s:%d\n", a.http.host.c_str(), http.port());

  std::atomic<bool> server_ended{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (!server_ended) std::fprintf(stderr, "afm serve: %s, stopping\n", strsignal(sig));
    http.stop();
  });
  http.run();
  server_ended = true;
  pthread_kill(waiter.native_handle(), SIGUSR1);  // no-op wake when a signal already came
  waiter.join();
}

void setup_serve(CLI::App& root) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* cmd = root.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API");
  cmd->add_option("-m,--model", a->model, "GGUF model file")->required();
  cmd->add_option("--host", a->http.host, "Address to bind (127.0.0.1: this machine only)")
      ->capture_default_str();
  cmd->add_option("--port", a->http.port, "TCP port; 0 = any free port")
      ->capture_default_str()
      ->check(between(0, 65535));
  cmd->add_option("--api-key", a->http.api_key,
                  "Require 'Authorization: Bearer KEY' on /v1 (default: $AFM_API_KEY; none)");
  cmd->add_option("--slots", a->slots,
                  "Requests generated at once, each with its own KV cache; more wait in order "
                  "(default: 8, fewer if 8 caches would take over a quarter of the memory; 1 "
                  "with --no-batching)")
      ->check(between(1, 64));
  cmd->add_flag("--no-batching", a->no_batching,
                "Run each slot's forward passes on its own threads instead of sharing "
                "batched passes (for comparison)");
  cmd->add_option("--step-tokens", a->service.step_tokens,
                  "Batching: tokens per shared forward pass; longer prompts are split over "
                  "passes so running requests keep getting tokens")
      ->capture_default_str()
      ->check(between(1, 8192));
  cmd->add_option("-c,--ctx-size", a->service.n_ctx,
                  "Context size per slot in tokens (default 0: the model's, <= 4096)")
      ->check(at_least(0));
  add_speculation_options(cmd, a->speculation);
  add_threads_option(cmd, a->service.n_threads,
                     "Compute threads (default 0: the physical cores; with --no-batching per "
                     "slot, the cores divided among the slots); capped at the available CPUs");
  cmd->add_option("--adapter", a->adapters,
                  "NAME=FILE: also serve the model with this LoRA adapter as model id "
                  "'BASE:NAME' (repeatable; the base stays one copy in memory)");
  cmd->add_option("--adapter-scale", a->adapter_scale, "Scale of every --adapter (alpha / rank x this)")
      ->capture_default_str()
      ->check(between(-100, 100));
  cmd->add_option("--max-body", a->http.max_body_bytes, "Largest request body in bytes (413 above)")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_flag("--no-playground", [a](int64_t) { a->http.playground = false; },
                "Do not serve the web playground at /");
  cmd->add_option("--http-threads", a->http.http_threads,
                  "Connection workers (requests beyond --slots wait on one each)")
      ->capture_default_str()
      ->check(between(2, 1024));
  cmd->callback([a] { run_serve(*a); });
}

}  // namespace

AFM_COMMAND(serve, setup_serve);

}  // namespace afm::cli
