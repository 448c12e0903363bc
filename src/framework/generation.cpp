#include "framework/generation.h"

#include <algorithm>
#include <chrono>

#include "framework/chat_template_kind.h"
#include "framework/token_evaluator.h"

namespace afm {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::vector<int32_t> end_of_generation_tokens(const tokenizer::Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  if (tokenizer.eos_id()) ids.push_back(*tokenizer.eos_id());
  for (const char* name : {"<turn_end>", "<|im_end|>", "<|eot_id|>", "<|end_of_text|>",
                           "<|endoftext|>", "<|eom_id|>"}) {
    const auto id = tokenizer.added_token_id(name);
    if (id && std::find(ids.begin(), ids.end(), *id) == ids.end()) ids.push_back(*id);
  }
  return ids;
}

GenerationStats generate(model::Context& context, sample::Sampler& sampler,
                         const GenerationRequest& request, std::vector<int32_t>& history) {
  GenerationStats stats;
  const int64_t n_vocab = context.model().hparams().n_vocab;
  std::vector<float> logits(n_vocab);
  auto start = std::chrono::steady_clock::now();
  std::span<const float> out = context.eval(request.prompt);
  stats.prefill_ms = ms_since(start);
  stats.prompt_tokens = static_cast<int64_t>(request.prompt.size());
  history.insert(history.end(), request.prompt.begin(), request.prompt.end());
  start = std::chrono::steady_clock::now();
  const SpeculationStats before = request.speculator ? request.speculator->stats() : SpeculationStats{};
  TokenEvaluator evaluator(context, request.speculator, request.stop_tokens);
  while (request.max_tokens < 0 || stats.generated < request.max_tokens) {
    std::copy(out.begin(), out.end(), logits.begin());
    const int32_t token = sampler.sample(logits, history);
    ++stats.generated;
    if (std::find(request.stop_tokens.begin(), request.stop_tokens.end(), token) !=
        request.stop_tokens.end()) {
      stats.stopped_by_token = true;
      break;
    }
    history.push_back(token);
    if (request.on_token && !request.on_token(token)) break;
    if (evaluator.full()) break;  // the token is emitted, not evaluated
    const int64_t remaining = request.max_tokens < 0 ? -1 : request.max_tokens - stats.generated;
    out = evaluator.next(token, history, remaining);
  }
  evaluator.close_round();
  if (request.speculator) stats.speculation = request.speculator->stats() - before;
  stats.decode_ms = ms_since(start);
  return stats;
}

}  // namespace afm
