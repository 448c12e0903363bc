// `afm schema compile --schema FILE.json [-m MODEL | --tokenizer FILE] [--json]
//                     [--refuse-unknown-formats]`
//   Compiles a JSON Schema to a grammar and prints a one-line summary (with a tokenizer: the
//   vocabulary size, the first token mask and the forced prefix). An unsupported or malformed
//   schema exits 1 with the error naming the keyword and the JSON pointer.
// `afm schema sample --schema FILE.json [-m MODEL | --tokenizer FILE] [--n N] [--seed S]
//                    [--max-tokens M]`
//   Prints N instances, one per line, each a random walk through the token masks: every step
//   picks uniformly among the allowed tokens (EOS included once the text is complete) and
//   stops at EOS, or when the text is complete and no token is allowed. A walk that reaches
//   M tokens first is reported on stderr, never printed, and makes the command exit 1.
//   Without a tokenizer the vocabulary is the 256 single bytes plus EOS.
// Both take `--grammar FILE.gbnf [--root NAME]` instead of `--schema`: a GBNF grammar file
// (llama.cpp's notation, see src/guided/gbnf_parser.h), its errors naming line:column.
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "command.h"
#include "framework/loaded_model.h"
#include "gguf/reader.h"
#include "guided/gbnf_parser.h"
#include "guided/json_schema_compiler.h"
#include "guided/token_matcher.h"
#include "option_checks.h"
#include "tokenizer/tokenizer.h"

namespace afm::cli {

namespace {

using guided::Grammar;
using guided::TokenMatcher;
using guided::TokenVocabulary;

struct SchemaArgs {
  std::string schema, grammar, root = "root", model, tokenizer_json;
  bool json = false, refuse_unknown_formats = false;
  int n = 1;
  uint64_t seed = 0;
  int max_tokens = 1000;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::shared_ptr<const TokenVocabulary> byte_vocabulary() {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  bytes.emplace_back("<eos>");
  std::vector<bool> special(bytes.size(), false);
  special.back() = true;
  return std::make_shared<TokenVocabulary>(std::move(bytes), std::move(special), 256);
}

// The vocabulary named by -m / --tokenizer, or nullptr when neither is given.
std::shared_ptr<const TokenVocabulary> load_vocabulary(const SchemaArgs& a) {
  if (a.model.empty() && a.tokenizer_json.empty()) return nullptr;
  const tokenizer::Tokenizer tok = !a.model.empty()
                                       ? tokenizer::Tokenizer::from_gguf(gguf::File::open(a.model))
                                       : tokenizer::Tokenizer::from_json_file(a.tokenizer_json);
  return make_token_vocabulary(tok, tok.eos_id());
}

// The grammar of --schema or --grammar (exactly one of them).
std::shared_ptr<const Grammar> compile_input(const SchemaArgs& a) {
  if (a.schema.empty() == a.grammar.empty()) {
    usage_error("give --schema FILE.json or --grammar FILE.gbnf");
  }
  if (!a.grammar.empty()) return guided::compile_gbnf(read_file_to_string(a.grammar), a.root);
  guided::JsonSchemaOptions options;
  options.refuse_unknown_formats = a.refuse_unknown_formats;
  return guided::compile_json_schema_text(read_file_to_string(a.schema), options);
}

std::vector<int32_t> allowed_ids(const std::vector<uint32_t>& words, int32_t vocab_size) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < vocab_size; ++id) {
    if ((words[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1) ids.push_back(id);
  }
  return ids;
}

void run_compile(const SchemaArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<const Grammar> grammar = compile_input(a);
  nlohmann::ordered_json out;
  out["ok"] = true;
  out["nonterminals"] = grammar->num_nonterminals();
  out["productions"] = grammar->num_productions();
  out["empty_language"] = grammar->empty_language();
  out["compile_ms"] = ms_since(t0);
  if (auto vocab = load_vocabulary(a)) {
    TokenMatcher matcher(grammar, vocab);
    t0 = std::chrono::steady_clock::now();
    const std::vector<uint32_t> mask = matcher.next_token_mask();
    out["first_mask_ms"] = ms_since(t0);
    out["vocab_size"] = vocab->size();
    out["first_mask_allowed"] = allowed_ids(mask, vocab->size()).size();
    out["forced_prefix"] = matcher.forced_bytes();
  }
  if (a.json) {
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  std::printf("ok: %zu nonterminals, %zu productions, compiled in %.2f ms%s\n",
              grammar->num_nonterminals(), grammar->num_productions(),
              out["compile_ms"].get<double>(),
              grammar->empty_language() ? " (the schema admits no instance)" : "");
  if (out.contains("vocab_size")) {
    std::printf("tokens: %d in the vocabulary, %zu allowed first (mask in %.2f ms), forced %s\n",
                out["vocab_size"].get<int>(), out["first_mask_allowed"].get<size_t>(),
                out["first_mask_ms"].get<double>(),
                out["forced_prefix"]
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                    .c_str());
  }
}

// One random walk; nullopt when it reaches max_tokens before ending.
std::optional<std::string> random_walk(TokenMatcher& m, std::mt19937_64& rng, int max_tokens) {
  const TokenVocabulary& vocab = m.vocabulary();
  std::string text;
  for (int step = 0; step < max_tokens; ++step) {
    const std::vector<int32_t> ids = allowed_ids(m.next_token_mask(), vocab.size());
    if (ids.empty()) {
      if (m.is_complete()) return text;
      throw_error(ErrorCode::kUnsupported,
                  "schema sample: no token of this vocabulary continues the text after " +
                      std::to_string(text.size()) + " bytes");
    }
    const int32_t id = ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)];
    AFM_CHECK(m.accept_token(id));
    if (m.is_terminated()) return text;
    text += vocab.token_bytes(id);
  }
  return std::nullopt;
}

void run_sample(const SchemaArgs& a) {
  std::shared_ptr<const Grammar> grammar = compile_input(a);
  if (grammar->empty_language()) {
    throw_error(ErrorCode::kInvalidArgument, "schema sample: the schema admits no instance");
  }
  std::shared_ptr<const TokenVocabulary> vocab = load_vocabulary(a);
  if (!vocab) vocab = byte_vocabulary();
  std::mt19937_64 rng(a.seed);
  int failed = 0;
  for (int i = 0; i < a.n; ++i) {
    TokenMatcher matcher(grammar, vocab);
    std::optional<std::string> text = random_walk(matcher, rng, a.max_tokens);
    if (text) {
      // fwrite, not %s: a grammar may produce NUL bytes.
      std::fwrite(text->data(), 1, text->size(), stdout);
      std::fputc('\n', stdout);
    } else {
      std::fprintf(stderr, "afm: sample %d reached --max-tokens %d before the grammar ended\n", i,
                   a.max_tokens);
      ++failed;
    }
  }
  std::fflush(stdout);
  if (failed > 0) {
    throw_error(ErrorCode::kInvalidArgument,
                "schema sample: " + std::to_string(failed) + " of " + std::to_string(a.n) +
                    " walks reached --max-tokens " + std::to_string(a.max_tokens));
  }
}

void add_common_options(CLI::App* cmd, SchemaArgs& a) {
  auto* schema = cmd->add_option("--schema", a.schema, "JSON Schema file");
  auto* grammar =
      cmd->add_option("--grammar", a.grammar, "GBNF grammar file (instead of --schema)");
  schema->excludes(grammar);
  cmd->add_option("--root", a.root, "Start rule of --grammar (default: root)")->needs(grammar);
  cmd->add_flag("--refuse-unknown-formats", a.refuse_unknown_formats,
                "Refuse a schema whose `format` names no known format (default: an annotation)")
      ->needs(schema);
  auto* m = cmd->add_option("-m,--model", a.model, "GGUF model whose tokenizer to use");
  auto* t = cmd->add_option("--tokenizer", a.tokenizer_json, "Hugging Face tokenizer.json");
  m->excludes(t);
}

void setup_schema(CLI::App& root) {
  CLI::App* schema =
      root.add_subcommand("schema", "Compile JSON Schemas or GBNF grammars; sample instances");
  schema->require_subcommand(1);

  auto c = std::make_shared<SchemaArgs>();
  CLI::App* compile = schema->add_subcommand("compile", "Compile a schema; print a summary");
  add_common_options(compile, *c);
  compile->add_flag("--json", c->json, "Print the summary as one JSON object");
  compile->callback([c] { run_compile(*c); });

  auto s = std::make_shared<SchemaArgs>();
  CLI::App* sample = schema->add_subcommand("sample", "Print instances from random token walks");
  add_common_options(sample, *s);
  sample->add_option("--n", s->n, "Number of instances")->check(between(1, 1000000));
  sample->add_option("--seed", s->seed, "Random seed")->check(at_least(0));
  sample->add_option("--max-tokens", s->max_tokens, "Token limit per walk")
      ->check(between(1, 100000000));
  sample->callback([s] { run_sample(*s); });
}

}  // namespace

AFM_COMMAND(schema, setup_schema);

}  // namespace afm::cli
