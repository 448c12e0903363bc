// `afm chat -m MODEL [--system TEXT]`: an interactive conversation on stdin/stdout using the
// chat template named by the model's metadata (afm, ChatML, Llama-3; others are an error
// naming the template). Each turn re-renders the conversation and prefills only the tokens
// after the prefix already in the KV cache. Lines "/reset" and "/exit" are commands.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "command.h"
#include "engine_options.h"
#include "framework/chat_template.h"
#include "framework/generation.h"

namespace afm::cli {
namespace {

struct ChatArgs {
  EngineArgs engine;
  sample::SamplerConfig sampling;
  std::string system;
  int64_t n_predict = -1;
};

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

void run_chat(const ChatArgs& a) {
  const Engine e = load_engine(a.engine);
  const ChatTemplate chat_template = ChatTemplate::from_jinja(e.tokenizer->chat_template());
  model::Context ctx(e.model, context_options(a.engine));
  sample::Sampler sampler(a.sampling);
  const std::vector<int32_t> stops = end_of_generation_tokens(*e.tokenizer);
  std::vector<ChatMessage> messages;
  if (!a.system.empty()) messages.push_back({"system", a.system});
  std::vector<int32_t> cached;  // the tokens whose K/V the context holds
  const bool interactive = isatty(STDIN_FILENO);
  std::string line;
  for (;;) {
    if (interactive) std::fprintf(stderr, "> ");
    if (!std::getline(std::cin, line) || line == "/exit") break;
    if (line == "/reset") {
      messages.erase(std::remove_if(messages.begin(), messages.end(),
                                    [](const ChatMessage& m) { return m.role != "system"; }),
                     messages.end());
      continue;
    }
    messages.push_back({"user", line});
    const std::vector<int32_t> tokens = e.tokenizer->encode(
        chat_template.render(messages, true), {.parse_special = true, .add_bos = e.tokenizer->add_bos()});
    // Keep at least one token to evaluate so there are logits to sample from.
    const size_t reuse = std::min(common_prefix(cached, tokens), tokens.size() - 1);
    ctx.truncate(static_cast<int64_t>(reuse));
    cached.assign(tokens.begin(), tokens.begin() + reuse);
    tokenizer::IncrementalDecoder decoder(*e.tokenizer);
    std::string reply;
    GenerationRequest req;
    req.prompt = std::span<const int32_t>(tokens).subspan(reuse);
    req.max_tokens = a.n_predict;
    req.stop_tokens = stops;
    req.on_token = [&](int32_t id) {
      const std::string piece = decoder.push(id);
      reply += piece;
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;
    };
    generate(ctx, sampler, req, cached);
    const std::string tail = decoder.flush();
    reply += tail;
    std::printf("%s\n", tail.c_str());
    std::fflush(stdout);
    messages.push_back({"assistant", reply});
  }
}

void setup_chat(CLI::App& root) {
  auto a = std::make_shared<ChatArgs>();
  CLI::App* cmd = root.add_subcommand("chat", "Chat with a model using its chat template");
  add_engine_options(cmd, a->engine);
  add_sampling_options(cmd, a->sampling);
  cmd->add_option("--system", a->system, "System instructions");
  cmd->add_option("-n,--n-predict", a->n_predict, "Most tokens per reply; -1 = until end of turn")
      ->capture_default_str();
  cmd->callback([a] { run_chat(*a); });
}

}  // namespace

AFM_COMMAND(chat, setup_chat);

}  // namespace afm::cli
