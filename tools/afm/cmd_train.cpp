// `afm train SUBCOMMAND`: the training commands (ARCHITECTURE.md section 6).
//
//   afm train tokenizer --input FILE... [--input-list FILE] --vocab-size N --out DIR
//       [--special TOKEN ...] [--no-afm-specials] [--pre-tokenizer qwen2|gpt2|llama3]
//       [--min-frequency N] [-t THREADS] [--json]
//     trains a byte-level BPE tokenizer (docs/tokenizer.md, "Training a tokenizer") and writes
//     DIR/tokenizer.json and DIR/tokenizer_config.json. --json prints {"vocab_size", "merges",
//     "words", "total_words", "seconds", "tokenizer"}.
//
//   afm train pretrain --config FILE [...]   and   afm train export --run DIR --out F.gguf
//     run the libtorch trainer `afm-train` (train_model_commands.h).
//
// Each subcommand has its own setup_train_<name>(CLI::App& train); setup_train() calls them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "base/progress.h"
#include "command.h"
#include "option_checks.h"
#include "tokenizer/bpe_trainer.h"
#include "train_model_commands.h"
#include "train_rloo_generator.h"

namespace afm::cli {

namespace {

// ---- afm train tokenizer ------------------------------------------------------------------

struct TrainTokenizerArgs {
  std::vector<std::string> inputs, specials;
  std::string input_list, out, pre_tokenizer = "qwen2";
  int64_t vocab_size = 0, min_frequency = 2;
  int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  bool afm_specials = true, json = false;
};

// One path per line; blank lines and lines starting with '#' are skipped. Relative paths are
// relative to the current directory.
std::vector<std::string> read_input_list(const std::string& list_path) {
  std::istringstream in(read_file_to_string(list_path));
  std::vector<std::string> paths;
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    if (!line.empty() && line[0] != '#') paths.push_back(line);
  }
  return paths;
}

// Draws "counting" (bytes) and "merging" (tokens) bars on stderr (only on a terminal).
class TrainProgress {
 public:
  void operator()(tokenizer::BpeTrainStage stage, uint64_t done, uint64_t total) {
    if (stage == tokenizer::BpeTrainStage::kCounting) {
      if (!counting_) counting_ = std::make_unique<ProgressBar>("counting words", total);
      counting_->update(done);
      return;
    }
    if (counting_) counting_->finish();
    if (!merging_)
      merging_ = std::make_unique<ProgressBar>("merging", total, ProgressBar::Unit::kItems);
    merging_->update(done);
  }
  void finish() {
    if (counting_) counting_->finish();
    if (merging_) merging_->finish();
  }

 private:
  std::unique_ptr<ProgressBar> counting_, merging_;
};

void run_train_tokenizer(const TrainTokenizerArgs& a) {
  std::vector<std::string> paths = a.inputs;
  if (!a.input_list.empty()) {
    std::vector<std::string> listed = read_input_list(a.input_list);
    paths.insert(paths.end(), listed.begin(), listed.end());
  }
  if (paths.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                "train tokenizer needs --input FILE or a non-empty --input-list FILE");
  }
  if (std::filesystem::exists(a.out) && !std::filesystem::is_directory(a.out)) {
    throw_error(ErrorCode::kInvalidArgument, "--out " + a.out + " exists and is not a folder");
  }
  tokenizer::BpeTrainerOptions options;
  if (a.afm_specials) options.special_tokens = tokenizer::afm_special_tokens();
  options.special_tokens.insert(options.special_tokens.end(), a.specials.begin(), a.specials.end());
  options.vocab_size = a.vocab_size;
  options.min_frequency = a.min_frequency;
  options.pre_tokenizer = a.pre_tokenizer;
  options.threads = std::max(1, a.threads);
  auto progress = std::make_shared<TrainProgress>();
  options.progress = [progress](tokenizer::BpeTrainStage s, uint64_t done, uint64_t total) {
    (*progress)(s, done, total);
  };

  auto start = std::chrono::steady_clock::now();
  tokenizer::BpeTrainResult r = tokenizer::train_bpe_from_files(paths, options);
  progress->finish();
  tokenizer::write_trained_tokenizer(r.spec, a.out);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::string path = (std::filesystem::path(a.out) / "tokenizer.json").string();
  const size_t vocab = r.spec.tokens.size(), merges = r.spec.merges.size();
  if (a.json) {
    std::printf(
        "{\"vocab_size\": %zu, \"merges\": %zu, \"words\": %llu, \"total_words\": %llu, "
        "\"seconds\": %.3f, \"tokenizer\": \"%s\"}\n",
        vocab, merges, static_cast<unsigned long long>(r.distinct_words),
        static_cast<unsigned long long>(r.total_words), seconds, path.c_str());
    return;
  }
  std::printf("wrote %s: %zu tokens, %zu merges, from %llu distinct of %llu words, %.2f s\n",
              path.c_str(), vocab, merges, static_cast<unsigned long long>(r.distinct_words),
              static_cast<unsigned long long>(r.total_words), seconds);
  if (static_cast<int64_t>(vocab) < a.vocab_size) {
    std::printf("stopped below --vocab-size %lld: no pair occurs %lld times or more\n",
                static_cast<long long>(a.vocab_size), static_cast<long long>(a.min_frequency));
  }
}

void setup_train_tokenizer(CLI::App& train) {
  auto a = std::make_shared<TrainTokenizerArgs>();
  CLI::App* cmd = train.add_subcommand("tokenizer", "Train a byte-level BPE tokenizer");
  cmd->add_option("--input", a->inputs, "Text files (UTF-8); each file is one document");
  cmd->add_option("--input-list", a->input_list, "File listing input files, one per line");
  cmd->add_option("--vocab-size", a->vocab_size,
                  "Vocabulary size, including special tokens and the 256 byte symbols")
      ->required()
      ->check(at_least(1));
  cmd->add_option("--out", a->out, "Output folder for tokenizer.json, tokenizer_config.json")
      ->required();
  cmd->add_option("--special", a->specials, "Extra special tokens (ids after the afm ones)");
  cmd->add_flag("--afm-specials,!--no-afm-specials", a->afm_specials,
                "Start with <|endoftext|> <turn_start> <turn_end> <executable_start> "
                "<executable_end> as ids 0-4 (default on)");
  cmd->add_option("--pre-tokenizer", a->pre_tokenizer,
                  "Split regex: qwen2 (default), gpt2, llama3");
  cmd->add_option("--min-frequency", a->min_frequency, "Merge only pairs seen this often (2)")
      ->check(at_least(1));
  cmd->add_option("-t,--threads", a->threads, "Threads for counting words (default: all cores)")
      ->check(between(1, 4096));
  cmd->add_flag("--json", a->json, "Print a JSON summary");
  cmd->callback([a] { run_train_tokenizer(*a); });
}

// ---- afm train ------------------------------------------------------------------------------

void setup_train(CLI::App& root) {
  CLI::App* train = root.add_subcommand("train", "Train models and tokenizers");
  train->require_subcommand(1);
  setup_train_tokenizer(*train);
  setup_train_pretrain(*train);
  setup_train_export(*train);
  setup_train_rloo_generator(*train);
}

}  // namespace

AFM_COMMAND(train, setup_train);

}  // namespace afm::cli
