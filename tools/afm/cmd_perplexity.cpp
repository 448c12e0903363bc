// `afm perplexity -m MODEL -f TEXT [--chunk 512] [--chunks N] [--json]`: perplexity of a model on a
// text, scored the way llama-perplexity scores it so the numbers compare: the text is
// tokenized, cut into chunks of c tokens, each chunk is evaluated from an empty cache, and only
// the second half of each chunk is scored (every scored token then has at least c/2 tokens of
// context). For comparing types and compression of one model (docs/compression.md).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "base/progress.h"
#include "command.h"
#include "engine_options.h"

namespace afm::cli {
namespace {

struct PerplexityArgs {
  EngineArgs engine;
  std::string file;
  int64_t chunk = 512, max_chunks = 0;
  bool json = false;
};

// -log p(next) for positions [from, n - 1) of one chunk's logits (n_vocab per position).
double chunk_nll(const std::vector<float>& logits, const int32_t* tokens, int64_t n,
                 int64_t from, int64_t n_vocab) {
  double sum = 0;
  for (int64_t t = from; t + 1 < n; ++t) {
    const float* row = logits.data() + t * n_vocab;
    double max = row[0];
    for (int64_t v = 1; v < n_vocab; ++v) max = std::max(max, double{row[v]});
    double z = 0;
    for (int64_t v = 0; v < n_vocab; ++v) z += std::exp(double{row[v]} - max);
    sum += max + std::log(z) - row[tokens[t + 1]];
  }
  return sum;
}

void run_perplexity(const PerplexityArgs& a) {
  const Engine e = load_engine(a.engine);
  const std::vector<int32_t> tokens = e.tokenizer->encode(read_file_to_string(a.file), {});
  int64_t chunks = static_cast<int64_t>(tokens.size()) / a.chunk;
  if (a.max_chunks > 0) chunks = std::min(chunks, a.max_chunks);
  if (chunks == 0) {
    throw_error(ErrorCode::kInvalidArgument,
                a.file + " has " + std::to_string(tokens.size()) + " tokens, fewer than one chunk of " +
                    std::to_string(a.chunk) + " (lower -c)");
  }
  model::ContextOptions opts = context_options(a.engine, e);
  opts.n_ctx = a.chunk;
  const int64_t n_vocab = e.model->hparams().n_vocab, first = a.chunk / 2;
  double nll = 0;
  int64_t scored = 0;
  nlohmann::json per_chunk = nlohmann::json::array();
  ProgressBar bar("perplexity", static_cast<uint64_t>(chunks), ProgressBar::Unit::kItems);
  for (int64_t c = 0; c < chunks; ++c) {
    model::Context ctx(e.model, opts);
    const std::vector<int32_t> part(tokens.begin() + c * a.chunk, tokens.begin() + (c + 1) * a.chunk);
    const double chunk = chunk_nll(ctx.eval_all(part), part.data(), a.chunk, first, n_vocab);
    const int64_t n = a.chunk - 1 - first;
    nll += chunk, scored += n;
    per_chunk.push_back(std::exp(chunk / n));
    bar.update(static_cast<uint64_t>(c + 1));
    bar.set_detail("ppl " + std::to_string(std::exp(nll / scored)));
  }
  bar.finish();
  const double ppl = std::exp(nll / scored);
  if (a.json) {
    nlohmann::ordered_json j = {{"model", a.engine.model}, {"file", a.file},
                                {"tokens", tokens.size()}, {"chunk", a.chunk},
                                {"chunks", chunks},        {"scored_tokens", scored},
                                {"nll", nll / scored},     {"perplexity", ppl},
                                {"chunk_perplexity", per_chunk}};
    std::printf("%s\n", j.dump().c_str());
    return;
  }
  std::printf("perplexity %.4f (%.4f nats/token) over %lld tokens: %lld chunks of %lld, the "
              "second half of each scored\n",
              ppl, nll / scored, static_cast<long long>(scored), static_cast<long long>(chunks),
              static_cast<long long>(a.chunk));
}

void setup_perplexity(CLI::App& root) {
  auto a = std::make_shared<PerplexityArgs>();
  CLI::App* cmd = root.add_subcommand(
      "perplexity", "Perplexity of a model on a text file (scored like llama-perplexity)");
  add_engine_options(cmd, a->engine);
  cmd->add_option("-f,--file", a->file, "Text file (read as UTF-8, no special tokens)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--chunk", a->chunk, "Tokens per chunk; the second half of each is scored")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 20));
  cmd->add_option("--chunks", a->max_chunks, "Score at most this many chunks (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { run_perplexity(*a); });
}

}  // namespace

AFM_COMMAND(perplexity, setup_perplexity);

}  // namespace afm::cli
