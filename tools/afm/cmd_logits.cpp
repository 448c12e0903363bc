// `afm logits -m MODEL (--tokens 1,2,3 | -p TEXT) [--logits] [--json]`: runs the model over a
// token sequence and prints, for every position, the most likely next token and its logit
// (with --logits, every logit). For comparing against other runtimes position by position.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "command.h"
#include "engine_options.h"
#include "option_checks.h"

namespace afm::cli {
namespace {

struct LogitsArgs {
  EngineArgs engine;
  std::vector<int32_t> tokens;
  std::string prompt;
  bool logits = false, json = false;
};

void run_logits(const LogitsArgs& a) {
  const Engine e = load_engine(a.engine);
  const std::vector<int32_t> tokens =
      a.tokens.empty() ? e.tokenizer->encode(a.prompt, {.parse_special = true, .add_bos = e.tokenizer->add_bos()})
                       : a.tokens;
  if (tokens.empty()) throw_error(ErrorCode::kInvalidArgument, "no tokens to evaluate");
  model::ContextOptions opts = context_options(a.engine, e);
  if (opts.n_ctx == 0) opts.n_ctx = static_cast<int64_t>(tokens.size());
  model::Context ctx(e.model, opts);
  const std::vector<float> all = ctx.eval_all(tokens);
  const int64_t n_vocab = e.model->hparams().n_vocab;
  nlohmann::json j = {{"tokens", tokens}, {"argmax", nlohmann::json::array()},
                      {"max_logit", nlohmann::json::array()}};
  for (size_t t = 0; t < tokens.size(); ++t) {
    const float* row = all.data() + t * n_vocab;
    const int64_t best = std::max_element(row, row + n_vocab) - row;
    j["argmax"].push_back(best);
    j["max_logit"].push_back(row[best]);
    if (a.logits) j["logits"].push_back(std::vector<float>(row, row + n_vocab));
    if (!a.json) std::printf("%6zu %8d -> %8lld  %.6f\n", t, tokens[t], static_cast<long long>(best), row[best]);
  }
  if (a.json) std::printf("%s\n", j.dump().c_str());
}

void setup_logits(CLI::App& root) {
  auto a = std::make_shared<LogitsArgs>();
  CLI::App* cmd = root.add_subcommand("logits", "Print the model's top next token (or every logit) at every position");
  add_engine_options(cmd, a->engine);
  auto* t = cmd->add_option("--tokens", a->tokens, "Token ids (comma separated)")->delimiter(',');
  auto* p = cmd->add_option("-p,--prompt", a->prompt, "Text to tokenize and evaluate")
                ->check(not_empty());
  t->excludes(p);
  cmd->add_flag("--logits", a->logits, "Include every logit (with --json)");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a, cmd] {
    if (a->tokens.empty() && cmd->count("--prompt") == 0) {
      usage_error("logits needs --tokens or -p");
    }
    run_logits(*a);
  });
}

}  // namespace

AFM_COMMAND(logits, setup_logits);

}  // namespace afm::cli
