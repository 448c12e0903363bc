// `afm bench -m MODEL [-p 512] [-n 128] [-d 0] [-t N] [-r 3] [--verify K] [--json]`: prompt
// processing (one batch of p tokens) and text generation (n single-token steps) in tokens/s,
// mean and standard deviation over r repetitions after a warm-up, as llama-bench measures. Each
// test starts from an empty context, or with -d D from D tokens already in the cache (untimed,
// llama-bench's -d: "pp512 @ d4096"). --verify K adds speculative verification: passes of K
// tokens whose rows are each exact (LogitRows::kAllExact), and what one pass costs in decode
// steps.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "backend/cpu/gemm.h"
#include "base/process_stats.h"
#include "command.h"
#include "engine_options.h"
#include "gguf/types.h"
#include "option_checks.h"

namespace afm::cli {
namespace {

struct BenchArgs {
  EngineArgs engine;
  int64_t n_prompt = 512, n_gen = 128;
  int repetitions = 3;
  int64_t verify = 0;  // tokens per verification pass (0: no such test)
  int64_t depth = 0;   // tokens in the cache before each test
  bool json = false;
  bool full_prefill = false, sequential_tracks = false;
};

struct Result {
  std::string test;
  std::vector<double> seconds;
  int64_t tokens;
  double mean_tps() const {
    double s = 0;
    for (double t : seconds) s += tokens / t;
    return s / seconds.size();
  }
  double stddev_tps() const {
    const double m = mean_tps();
    double s = 0;
    for (double t : seconds) s += (tokens / t - m) * (tokens / t - m);
    return seconds.size() > 1 ? std::sqrt(s / (seconds.size() - 1)) : 0.0;
  }
};

double seconds_of(const std::function<void()>& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The weight type holding the most bytes: what llama-bench prints as the model's type.
std::string dominant_type(const gguf::File& file, uint64_t& bytes, uint64_t& params) {
  std::map<std::string, uint64_t> by_type;
  bytes = params = 0;
  for (const gguf::TensorInfo& t : file.tensors()) {
    by_type[std::string(gguf::tensor_type_traits(t.type).name)] += t.n_bytes;
    bytes += t.n_bytes;
    params += t.n_elements();
  }
  std::string best;
  for (const auto& [name, n] : by_type)
    if (best.empty() || n > by_type[best]) best = name;
  return best;
}

// Puts the context at filler.size() positions, untimed: the filler is evaluated once and later
// calls truncate back to it (evaluating it again only where the cache cannot keep a prefix).
void reset_to_depth(model::Context& ctx, const std::vector<int32_t>& filler) {
  const auto depth = static_cast<int64_t>(filler.size());
  if (depth > 0 && ctx.n_past() >= depth && depth >= ctx.min_exact_truncate()) {
    ctx.truncate(depth);
    return;
  }
  ctx.truncate(0);
  if (depth > 0) ctx.eval(filler);
}

// "pp512", or "pp512 @ d4096" (llama-bench's name) when the test starts at a depth.
std::string test_name(const std::string& test, int64_t depth) {
  return depth > 0 ? test + " @ d" + std::to_string(depth) : test;
}

// Passes of a.verify tokens, each row exact, from the depth: n_gen / verify passes.
Result verify_result(const BenchArgs& a, model::Context& ctx, const std::vector<int32_t>& gen,
                     const std::vector<int32_t>& filler) {
  const int64_t k = a.verify, passes = std::max<int64_t>(1, static_cast<int64_t>(gen.size()) / k);
  std::vector<int32_t> tokens(passes * k);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = gen[i % gen.size()];
  std::vector<float> rows;
  Result r{test_name("verify" + std::to_string(k), a.depth), {}, passes * k};
  for (int i = -1; i < a.repetitions; ++i) {
    reset_to_depth(ctx, filler);
    const double s = seconds_of([&] {
      for (int64_t p = 0; p < (i < 0 ? 1 : passes); ++p) {
        ctx.eval_all_exact(std::span<const int32_t>(tokens).subspan(p * k, k), rows);
      }
    });
    if (i >= 0) r.seconds.push_back(s);
  }
  return r;
}

// One verification pass of k tokens in decode steps: k x (decode t/s) / (verification t/s).
double pass_cost_in_steps(const std::vector<Result>& results, int64_t k) {
  double tg = 0, verify = 0;
  for (const Result& r : results) {
    if (r.test.rfind("tg", 0) == 0) tg = r.mean_tps();
    if (r.test.rfind("verify", 0) == 0) verify = r.mean_tps();
  }
  return tg > 0 && verify > 0 ? k * tg / verify : 0.0;
}

void run_bench(const BenchArgs& a) {
  const Engine e = load_engine(a.engine);
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int32_t> dist(0, static_cast<int32_t>(e.model->hparams().n_vocab - 1));
  std::vector<int32_t> prompt(a.n_prompt), gen(std::max<int64_t>(a.n_gen, 1)), filler(a.depth);
  for (int32_t& t : prompt) t = dist(rng);
  for (int32_t& t : gen) t = dist(rng);
  for (int32_t& t : filler) t = dist(rng);
  model::ContextOptions opts = context_options(a.engine, e);
  opts.n_ctx = std::max<int64_t>(opts.n_ctx, a.depth + std::max(a.n_prompt + a.n_gen, a.verify * 4) + 1);
  opts.n_batch = std::max<int64_t>({a.n_prompt, a.verify, 1});
  opts.full_prefill = a.full_prefill;
  opts.sequential_tracks = a.sequential_tracks;
  model::Context ctx(e.model, opts);
  std::vector<Result> results;
  if (a.n_prompt > 0) {
    Result r{test_name("pp" + std::to_string(a.n_prompt), a.depth), {}, a.n_prompt};
    for (int i = -1; i < a.repetitions; ++i) {  // i = -1: warm-up
      reset_to_depth(ctx, filler);
      const double s = seconds_of([&] { ctx.eval(prompt); });
      if (i >= 0) r.seconds.push_back(s);
    }
    results.push_back(r);
  }
  if (a.n_gen > 0) {
    Result r{test_name("tg" + std::to_string(a.n_gen), a.depth), {}, a.n_gen};
    for (int i = -1; i < a.repetitions; ++i) {
      reset_to_depth(ctx, filler);
      const double s = seconds_of([&] {
        for (int64_t t = 0; t < (i < 0 ? 1 : a.n_gen); ++t) ctx.eval(std::span<const int32_t>(&gen[t], 1));
      });
      if (i >= 0) r.seconds.push_back(s);
    }
    results.push_back(r);
  }
  if (a.verify > 0) results.push_back(verify_result(a, ctx, gen, filler));
  uint64_t bytes = 0, params = 0;
  const std::string type = dominant_type(e.model->file(), bytes, params);
  const std::string isa = cpu::best_gemm_kernels().isa;
  if (a.json) {
    nlohmann::json j = {{"model", a.engine.model}, {"arch", e.model->hparams().arch},
                        {"type", type}, {"size_bytes", bytes}, {"params", params},
                        {"threads", ctx.n_threads()}, {"isa", isa},
                        {"rss_bytes", resident_set_bytes()}, {"n_ctx", ctx.n_ctx()},
                        {"kv_type", ops::kv_type_name(opts.kv_type)},
                        {"kv_bytes", ctx.state().kv_bytes()},
                        {"kv_bytes_per_token", ctx.state().kv_bytes_per_token()},
                        {"depth", a.depth},
                        {"full_prefill", a.full_prefill},
                        {"sequential_tracks", a.sequential_tracks}};
    for (const Result& r : results) {
      j["results"].push_back({{"test", r.test}, {"tokens_per_second", r.mean_tps()},
                              {"stddev", r.stddev_tps()}, {"seconds", r.seconds}});
    }
    if (a.verify > 0) j["verify_pass_cost_in_decode_steps"] = pass_cost_in_steps(results, a.verify);
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("| %-10s | %9s | %8s | %-6s | %7s | %-7s | %16s | %16s |\n", "arch", "size", "params",
              "type", "threads", "isa", "test", "t/s");
  std::printf("|%s|\n", std::string(103, '-').c_str());
  for (const Result& r : results) {
    std::printf("| %-10s | %6.1f MiB | %6.1f M | %-6s | %7d | %-7s | %16s | %8.2f ± %5.2f |\n",
                e.model->hparams().arch.c_str(), bytes / 1048576.0, params / 1e6, type.c_str(),
                ctx.n_threads(), isa.c_str(), r.test.c_str(), r.mean_tps(), r.stddev_tps());
  }
  if (a.verify > 0 && a.n_gen > 0) {
    std::printf("a verification pass of %lld tokens costs %.2f decode steps\n",
                static_cast<long long>(a.verify), pass_cost_in_steps(results, a.verify));
  }
  std::printf("KV cache (%s, %lld positions): %.2f MiB, %zu bytes per further token\n",
              ops::kv_type_name(opts.kv_type), static_cast<long long>(ctx.n_ctx()),
              ctx.state().kv_bytes() / 1048576.0, ctx.state().kv_bytes_per_token());
}

void setup_bench(CLI::App& root) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = root.add_subcommand("bench", "Measure prompt processing and generation speed");
  add_engine_options(cmd, a->engine);
  cmd->add_option("-p,--n-prompt", a->n_prompt, "Prompt tokens (pp test); 0 = skip")
      ->capture_default_str()->check(at_least(0));
  cmd->add_option("-n,--n-gen", a->n_gen, "Generated tokens (tg test); 0 = skip")
      ->capture_default_str()->check(at_least(0));
  cmd->add_option("-r,--repetitions", a->repetitions, "Repetitions per test")
      ->capture_default_str()->check(at_least(1));
  cmd->add_option("-d,--depth", a->depth,
                  "Tokens already in the cache when each test starts (untimed; llama-bench's -d)")
      ->capture_default_str()->check(at_least(0));
  cmd->add_option("--verify", a->verify,
                  "Also time speculative verification passes of this many tokens, every row "
                  "exact (0 = skip)")
      ->check(between(0, 64));
  cmd->add_flag("--json", a->json, "Print the results as JSON");
  cmd->add_flag("--full-prefill", a->full_prefill,
                "Run every layer on every prompt position (disables afm-device's Block-2 skip)");
  cmd->add_flag("--sequential-tracks", a->sequential_tracks,
                "Run afm-server's tracks one after another instead of concurrently");
  cmd->callback([a] {
    if (a->n_prompt == 0 && a->n_gen == 0) usage_error("bench -p 0 -n 0 measures nothing");
    run_bench(*a);
  });
}

}  // namespace

AFM_COMMAND(bench, setup_bench);

}  // namespace afm::cli
