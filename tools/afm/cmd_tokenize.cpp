// `afm tokenize (-m MODEL | --tokenizer tokenizer.json) (-p TEXT | -f FILE) [--json] [--lines]`
// --json: {"tokens": [ids]}; --lines (with --json): one JSON id list per input line, the line
// without its "\n" (for parity tests over large corpora).
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "base/error.h"
#include "base/mapped_file.h"
#include "command.h"
#include "gguf/reader.h"
#include "option_checks.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace afm::cli {

namespace {

struct TokenizeArgs {
  std::string model, tokenizer_json, prompt, file;
  bool json = false, lines = false;
};

tokenizer::Tokenizer load(const TokenizeArgs& a) {
  if (!a.model.empty()) return tokenizer::Tokenizer::from_gguf(gguf::File::open(a.model));
  return tokenizer::Tokenizer::from_json_file(a.tokenizer_json);
}

std::string ids_json(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "]";
}

// Token bytes for display: control bytes and bytes of split UTF-8 characters as \xNN.
std::string printable(const std::string& bytes) {
  std::string s;
  char buf[8];
  for (size_t i = 0; i < bytes.size();) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    size_t n = tokenizer::utf8_sequence_length(c);
    bool complete = (c >= 0x20 && c < 0x80) || (c >= 0xc0 && i + n <= bytes.size() && n > 1);
    for (size_t k = 1; complete && k < n; ++k)
      complete = (static_cast<unsigned char>(bytes[i + k]) & 0xc0) == 0x80;
    if (c == '\n') {
      s += "\\n";
    } else if (c == '\t') {
      s += "\\t";
    } else if (!complete) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      s += buf;
    } else {
      s.append(bytes, i, n);
      i += n;
      continue;
    }
    ++i;
  }
  return s;
}

void run_tokenize(const TokenizeArgs& a) {
  tokenizer::Tokenizer tok = load(a);
  std::string text = a.file.empty() ? a.prompt : read_file_to_string(a.file);
  if (a.lines) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) std::printf("%s\n", ids_json(tok.encode(line)).c_str());
    return;
  }
  std::vector<int32_t> ids = tok.encode(text);
  if (a.json) {
    std::printf("{\"tokens\": %s}\n", ids_json(ids).c_str());
    return;
  }
  for (int32_t id : ids) std::printf("%6d '%s'\n", id, printable(tok.token_bytes(id)).c_str());
}

void setup_tokenize(CLI::App& root) {
  auto a = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = root.add_subcommand("tokenize", "Turn text into token ids");
  auto* m = cmd->add_option("-m,--model", a->model, "GGUF model whose tokenizer to use");
  auto* t = cmd->add_option("--tokenizer", a->tokenizer_json, "Hugging Face tokenizer.json");
  m->excludes(t);
  auto* p = cmd->add_option("-p,--prompt", a->prompt, "Text to tokenize");
  auto* f = cmd->add_option("-f,--file", a->file, "File to tokenize");
  p->excludes(f);
  cmd->add_flag("--json", a->json, "Print {\"tokens\": [ids]}");
  cmd->add_flag("--lines", a->lines, "Tokenize each line separately; print one JSON list per line");
  cmd->callback([a, cmd] {
    if (a->model.empty() && a->tokenizer_json.empty()) {
      usage_error("tokenize needs -m MODEL or --tokenizer FILE");
    }
    if (cmd->count("--prompt") == 0 && a->file.empty()) {
      usage_error("tokenize needs -p TEXT or -f FILE");
    }
    run_tokenize(*a);
  });
}

}  // namespace

AFM_COMMAND(tokenize, setup_tokenize);

}  // namespace afm::cli
