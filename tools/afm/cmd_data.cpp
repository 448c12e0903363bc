// `afm data corpus|synth|shards`: the training-data pipeline (docs/data.md).
//
//   afm data corpus --out DIR [--sources NAME,...] [--root DIR] [--json]
//   afm data synth --seed S --n N --out FILE [--tasks extraction,tools,...] [--format text|jsonl]
//                  [--json]
//   afm data sft --model MODEL.gguf --input F.jsonl --out DIR [--max-tokens N]
//                [--val-fraction F] [--seed S] [--json]
//   afm data shards --tokenizer tokenizer.json --input FILE... --out DIR [--val-fraction 0.01]
//                   [--seed S] [--shard-tokens N] [-t THREADS] [--eos TOKEN] [--json]
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "command.h"
#include "data/corpus_builder.h"
#include "data/sft_render.h"
#include "data/shard_builder.h"
#include "data/synth/synth.h"
#include "data/synth/word_pieces.h"
#include "data_preferences.h"
#include "gguf/reader.h"
#include "option_checks.h"
#include "tokenizer/tokenizer.h"

namespace afm::cli {

namespace {

double megabytes(uint64_t bytes) { return static_cast<double>(bytes) / 1e6; }

struct CorpusArgs {
  std::string out, root = "/";
  std::vector<std::string> sources;
  bool json = false;
};

void run_corpus(const CorpusArgs& a) {
  data::CorpusOptions options{a.out, a.sources, a.root};
  const data::CorpusSummary summary = data::build_corpus(options);
  if (a.json) {
    std::printf("%s\n", summary.to_json().dump(2).c_str());
    return;
  }
  for (const data::CorpusFileSummary& f : summary.files) {
    std::printf("%-17s %-20s %-14s %8.2f MB %8llu documents\n", f.name.c_str(), f.package.c_str(),
                f.version.empty() ? "?" : f.version.c_str(), megabytes(f.bytes),
                static_cast<unsigned long long>(f.documents));
  }
  std::printf("wrote %s/sources.json\n", a.out.c_str());
}

struct SynthArgs {
  uint64_t seed = 0, n = 0;
  std::string out;
  std::vector<std::string> tasks;
  std::string format = "text";
  int invented_names = 0, bare_arithmetic = 0, varied_phrasing = 0, broad_variety = 0,
      schema_constraints = 0, restated_arithmetic = 0, wide_phrasing = 0,
      schema_variation = 0, spelled_names = 0;
  std::string spelling_model;
  bool json = false;
};

// The word pieces of the model's tokenizer, for --spelled-names.
std::shared_ptr<const data::synth::WordPieces> load_word_pieces(const std::string& model) {
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::from_gguf(gguf::File::open(model));
  std::vector<std::string> token_bytes;
  token_bytes.reserve(static_cast<size_t>(tok.vocab_size()));
  for (int32_t id = 0; id < tok.vocab_size(); ++id) token_bytes.push_back(tok.token_bytes(id));
  return std::make_shared<const data::synth::WordPieces>(
      data::synth::word_pieces_from_tokens(token_bytes));
}

void run_synth(const SynthArgs& a) {
  data::synth::SynthOptions options{a.seed, a.n, a.out, {}};
  if (a.format == "jsonl") options.format = data::synth::SynthFormat::kJsonl;
  options.knobs = {a.invented_names, a.bare_arithmetic, a.varied_phrasing, a.broad_variety,
                   a.schema_constraints, a.restated_arithmetic, a.wide_phrasing,
                   a.schema_variation, a.spelled_names};
  if (a.spelled_names > 0) {
    if (a.spelling_model.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "--spelled-names needs --spelling-model (the GGUF whose tokenizer's word "
                  "pieces make the names)");
    }
    options.knobs.word_pieces = load_word_pieces(a.spelling_model);
  }
  for (const std::string& t : a.tasks) options.tasks.push_back(data::synth::parse_task(t));
  const data::synth::SynthSummary s = data::synth::write_synthetic(options);
  if (a.json) {
    nlohmann::ordered_json j = {{"file", a.out},
                                {"seed", a.seed},
                                {"documents", s.documents},
                                {"bytes", s.bytes},
                                {"tasks", s.per_task}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::string per_task;
  for (const auto& [name, count] : s.per_task) {
    per_task += (per_task.empty() ? "" : ", ") + name + " " + std::to_string(count);
  }
  std::printf("wrote %s: %llu documents, %.2f MB (%s)\n", a.out.c_str(),
              static_cast<unsigned long long>(s.documents), megabytes(s.bytes), per_task.c_str());
}

struct ShardsArgs {
  data::ShardOptions options;
  std::string out;
  bool json = false;
};

void run_shards(ShardsArgs a) {
  a.options.out_dir = a.out;
  const data::ShardResult r = data::build_shards(a.options);
  const uint64_t tokens = r.meta.train.tokens + r.meta.val.tokens;
  const double secs = r.seconds > 0 ? r.seconds : 1e-9;
  if (a.json) {
    nlohmann::ordered_json j = r.meta.to_json();
    j["timings"] = {{"seconds", r.seconds},
                    {"mb_per_s", megabytes(r.input_bytes) / secs},
                    {"tokens_per_s", static_cast<double>(tokens) / secs}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  for (const char* split : {"train", "val"}) {
    const data::SplitMeta& s = split[0] == 't' ? r.meta.train : r.meta.val;
    std::printf("%-5s %4zu shards %12llu tokens %9llu documents\n", split, s.shards.size(),
                static_cast<unsigned long long>(s.tokens),
                static_cast<unsigned long long>(s.documents));
  }
  std::printf("%.2f MB in %.2f s: %.2f MB/s, %.0f tokens/s (eos %d, %u-byte tokens) -> %s\n",
              megabytes(r.input_bytes), r.seconds, megabytes(r.input_bytes) / secs,
              static_cast<double>(tokens) / secs, r.meta.eos_id, r.meta.token_bytes, a.out.c_str());
}

void add_corpus(CLI::App& data) {
  auto a = std::make_shared<CorpusArgs>();
  CLI::App* cmd = data.add_subcommand("corpus", "Extract English text from Debian packages");
  cmd->add_option("--out", a->out, "Output directory: <source>.txt files and sources.json")
      ->required();
  cmd->add_option("--sources", a->sources,
                  "Comma-separated sources (default all): kjv, gcide, wordnet, "
                  "debian-reference, jargon, fortunes")
      ->delimiter(',');
  cmd->add_option("--root", a->root, "File-system root the packages are installed under");
  cmd->add_flag("--json", a->json, "Print sources.json");
  cmd->callback([a] { run_corpus(*a); });
}

void add_synth(CLI::App& data) {
  auto a = std::make_shared<SynthArgs>();
  CLI::App* cmd = data.add_subcommand("synth", "Write synthetic chat documents from a seed");
  cmd->add_option("--seed", a->seed, "Random seed (default 0); same seed, same bytes")
      ->check(at_least(0));
  cmd->add_option("--n", a->n, "Number of documents")->required()->check(at_least(1));
  cmd->add_option("--out", a->out, "Output document file (written atomically)")->required();
  cmd->add_option("--tasks", a->tasks,
                  "Comma-separated tasks (default: the first four): extraction, tools, "
                  "arithmetic, classification; chat (small talk, only when named)")
      ->delimiter(',');
  cmd->add_option("--format", a->format,
                  "text: a document file for `afm data shards`; jsonl: one OpenAI-shaped "
                  "conversation per line for `afm train sft`")
      ->check(CLI::IsMember({"text", "jsonl"}))
      ->capture_default_str();
  cmd->add_option("--invented-names", a->invented_names,
                  "Percent of person, city, company, occupation and event names made up from "
                  "syllables instead of drawn from the word lists (teaches copying names from "
                  "the text)")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--varied-phrasing", a->varied_phrasing,
                  "Percent of extraction texts rephrased: a made-up label or source around the "
                  "text, person facts in shuffled order (teaches finding fields by role)")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--bare-arithmetic", a->bare_arithmetic,
                  "Percent of arithmetic items that are bare two-digit sums and differences "
                  "worked column by column, instead of word problems")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--broad-variety", a->broad_variety,
                  "Percent of items drawn more broadly: invented names from a wider letter "
                  "inventory or spliced from two listed names, real-word labels around "
                  "extraction texts, tool requests in more phrasings with greetings and thanks")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--schema-constraints", a->schema_constraints,
                  "Percent of extraction schemas given minimum/maximum and minLength/maxLength "
                  "on their fields (always satisfied by the answers)")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--restated-arithmetic", a->restated_arithmetic,
                  "Percent of bare sums and differences asked in wider phrasings (operands in "
                  "either order, two-amount stories) and answered by restating the expression "
                  "before working it column by column")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--wide-phrasing", a->wide_phrasing,
                  "Percent of arithmetic questions and tool requests composed from a phrase "
                  "grammar (operation words with operands in either order; date, currency and "
                  "unit spellings; cities in many clauses) instead of fixed sentence lists")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--schema-variation", a->schema_variation,
                  "Percent of extraction schemas asking for a subset of the fields (at least "
                  "two) in shuffled order, half without descriptions; the answer follows the "
                  "schema")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--spelled-names", a->spelled_names,
                  "Percent of invented names built from the word pieces of --spelling-model's "
                  "tokenizer (a space-led word start, then continuations), so every word start "
                  "it knows begins some copied value")
      ->capture_default_str()
      ->check(between(0, 100));
  cmd->add_option("--spelling-model", a->spelling_model,
                  "GGUF whose tokenizer gives --spelled-names its word pieces");
  cmd->add_flag("--json", a->json, "Print a JSON summary");
  cmd->callback([a] { run_synth(*a); });
}

void add_shards(CLI::App& data) {
  auto a = std::make_shared<ShardsArgs>();
  data::ShardOptions& o = a->options;
  o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CLI::App* cmd = data.add_subcommand("shards", "Tokenize document files into packed shards");
  cmd->add_option("--tokenizer", o.tokenizer_path, "Hugging Face tokenizer.json")->required();
  cmd->add_option("--input", o.inputs, "Document files (one or more)")->required()->expected(1, -1);
  cmd->add_option("--out", a->out, "Output directory for the shards and meta.json")->required();
  cmd->add_option("--val-fraction", o.val_fraction, "Share of documents for validation (0.01)")
      ->check(between(0, 1));
  cmd->add_option("--seed", o.seed, "Seed of the train/validation split (default 0)")
      ->check(at_least(0));
  cmd->add_option("--shard-tokens", o.shard_tokens, "Tokens per shard, about (100000000)")
      ->check(at_least(1));
  cmd->add_option("-t,--threads", o.threads, "Encoding threads (default: all cores)")
      ->check(between(1, 4096));
  cmd->add_option("--eos", o.eos_token, "Token that ends each document (default <|endoftext|>)");
  cmd->add_flag("--json", a->json, "Print meta.json with timings");
  cmd->callback([a] { run_shards(*a); });
}

struct SftArgs {
  data::SftRenderOptions options;
  bool json = false;
};

void run_sft(const SftArgs& a) {
  const data::SftRenderSummary s = data::render_sft_jsonl(a.options);
  if (a.json) {
    nlohmann::ordered_json j = {{"out", a.options.out_dir},
                                {"conversations", s.conversations},
                                {"train", s.train},
                                {"val", s.val},
                                {"skipped_long", s.skipped_long},
                                {"train_tokens", s.train_tokens},
                                {"train_trained_tokens", s.train_trained_tokens},
                                {"val_trained_tokens", s.val_trained_tokens}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("wrote %s: %lld conversations (%lld train, %lld held out, %lld skipped as longer "
              "than %lld tokens); %lld train tokens, %lld of them trained\n",
              a.options.out_dir.c_str(), static_cast<long long>(s.conversations),
              static_cast<long long>(s.train), static_cast<long long>(s.val),
              static_cast<long long>(s.skipped_long),
              static_cast<long long>(a.options.max_tokens),
              static_cast<long long>(s.train_tokens),
              static_cast<long long>(s.train_trained_tokens));
}

void add_sft(CLI::App& data) {
  auto a = std::make_shared<SftArgs>();
  data::SftRenderOptions& o = a->options;
  CLI::App* cmd = data.add_subcommand(
      "sft", "Render JSONL conversations for fine-tuning with a model's chat template");
  cmd->add_option("--model", o.model, "GGUF model whose template and tokenizer render the data")
      ->required();
  cmd->add_option("--input", o.input,
                  "JSONL, one conversation per line, shaped as a chat-completions request: "
                  "messages, optional tools and response_format")
      ->required();
  cmd->add_option("--out", o.out_dir, "Output folder: train.sft, val.sft, meta.json")->required();
  cmd->add_option("--max-tokens", o.max_tokens,
                  "Skip conversations longer than this many tokens (rows of N-1 positions)")
      ->capture_default_str()->check(between(2, 1 << 24));
  cmd->add_option("--val-fraction", o.val_fraction, "Share of conversations held out")
      ->capture_default_str()->check(between(0, 1));
  cmd->add_option("--seed", o.seed, "Seed of the train/held-out split")->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the summary as JSON");
  cmd->callback([a] { run_sft(*a); });
}

void setup_data(CLI::App& root) {
  CLI::App* data = root.add_subcommand(
      "data",
      "Training data: corpus, synthetic tasks, shards, fine-tuning records, preference "
      "pairs");
  data->require_subcommand(1);
  add_corpus(*data);
  add_synth(*data);
  add_shards(*data);
  add_sft(*data);
  add_data_preferences(*data);
}

}  // namespace

AFM_COMMAND(data, setup_data);

}  // namespace afm::cli
