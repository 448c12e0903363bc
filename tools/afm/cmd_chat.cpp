// `afm chat -m MODEL [--system TEXT] [-n N] [--context-shift] [--lookup N] [--draft M]`: a
// conversation on stdin/stdout in the chat template named by the model's metadata (afm,
// ChatML, Llama-3; others are an error naming the template). Each turn evaluates only the tokens after the
// prefix already in the KV cache (chat_conversation.h).
//
// Lines starting with '/' are commands (/help, /reset, /exit), never sent to the model; "//"
// sends a line that starts with '/'. Replies go to stdout (tool-call blocks as readable lines,
// reply_printer.h); the banner, the "> " prompt (both only when stdin is a terminal) and
// errors go to stderr. A full context is one line on stderr and the conversation goes on.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "chat_conversation.h"
#include "command.h"
#include "engine_options.h"
#include "framework/chat_template.h"
#include "option_checks.h"
#include "reply_printer.h"

namespace afm::cli {
namespace {

struct ChatArgs {
  EngineArgs engine;
  SpeculationArgs speculation;
  sample::SamplerConfig sampling;
  std::string system;
  int64_t n_predict = -1;
  bool context_shift = false;
};

constexpr const char* kCommandHelp =
    "/help   this list\n"
    "/reset  forget the conversation (the --system message stays)\n"
    "/exit   leave (also /quit, or end of input: Ctrl-D)\n"
    "A line starting with // sends the rest of it, starting with /, to the model.\n";

enum class LineKind { kMessage, kEmpty, kCommand };

LineKind classify(const std::string& line) {
  if (line.empty()) return LineKind::kEmpty;
  if (line[0] == '/' && line.rfind("//", 0) != 0) return LineKind::kCommand;
  return LineKind::kMessage;
}

// Runs a command line; returns false for /exit.
bool run_command(const std::string& line, ChatConversation& chat) {
  const std::string word = line.substr(0, line.find_first_of(" \t"));
  if (word == "/exit" || word == "/quit") return false;
  if (word == "/help") {
    std::fputs(kCommandHelp, stderr);
  } else if (word == "/reset") {
    chat.reset();
    std::fputs("afm chat: conversation cleared\n", stderr);
  } else {
    std::fprintf(stderr,
                 "afm chat: unknown command '%s', not sent to the model (/help lists the "
                 "commands)\n",
                 word.c_str());
  }
  return true;
}

void write_stdout(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// One turn: the reply on stdout as it is generated; a full context is one line on stderr.
void answer(ChatConversation& chat, ReplyPrinter printer, const std::string& message) {
  try {
    chat.reply(message, [&](int32_t token) { printer.push(token); });
    printer.finish();
  } catch (const ContextFullError& full) {
    printer.finish(/*complete=*/false);
    std::fprintf(stderr, "afm chat: %s\n", full.what());
  }
}

void run_chat(const ChatArgs& a) {
  const Engine e = load_engine(a.engine);
  ChatTemplate chat_template = ChatTemplate::from_jinja(e.tokenizer->chat_template());
  ChatConversation chat(e, chat_template, context_options(a.engine, e), a.sampling,
                        {a.system, a.n_predict, a.context_shift,
                         speculation_config(a.speculation)});
  const bool interactive = isatty(STDIN_FILENO);
  if (interactive) {
    std::fprintf(stderr, "afm chat: %s, context %lld tokens%s; /help for commands\n",
                 std::filesystem::path(a.engine.model).filename().c_str(),
                 static_cast<long long>(chat.n_ctx()),
                 a.context_shift ? " (oldest turns dropped when full)" : "");
  }
  std::string line;
  for (;;) {
    if (interactive) std::fputs("> ", stderr);
    if (!std::getline(std::cin, line)) break;
    const LineKind kind = classify(line);
    if (kind == LineKind::kEmpty) continue;
    if (kind == LineKind::kCommand) {
      if (!run_command(line, chat)) break;
      continue;
    }
    answer(chat, ReplyPrinter(*e.tokenizer, chat_template, write_stdout),
           line.rfind("//", 0) == 0 ? line.substr(1) : line);
  }
}

void setup_chat(CLI::App& root) {
  auto a = std::make_shared<ChatArgs>();
  CLI::App* cmd = root.add_subcommand(
      "chat", "Chat with a model using its chat template (/help in the chat lists commands)");
  add_engine_options(cmd, a->engine);
  add_sampling_options(cmd, a->sampling);
  add_speculation_options(cmd, a->speculation);
  cmd->add_option("--system", a->system, "System instructions");
  cmd->add_option("-n,--n-predict", a->n_predict,
                  "Most tokens per reply (>= 1); -1 = until the end of the turn")
      ->capture_default_str()
      ->check(token_limit());
  cmd->add_flag("--context-shift", a->context_shift,
                "When the context is full, drop the oldest turns after the system message "
                "(until half the context is free) instead of refusing the message");
  cmd->callback([a] { run_chat(*a); });
}

}  // namespace

AFM_COMMAND(chat, setup_chat);

}  // namespace afm::cli
