// afm half of bench/guided_bench.py: schema compile time and per-token mask time, one thread.
//   guided_bench TOKENIZER_JSON TASKS_JSON [--reference | --passes N]
//   guided_bench TOKENIZER_JSON --sample SCHEMA_FILE SEED MAX_TOKENS
// TASKS_JSON: [{"name": N, "schema": SCHEMA_TEXT, "tokens": [[id, ...], ...]}, ...]. For each task
// the schema is compiled (timed: JSON Schema -> grammar -> TokenMatcher), then for each token
// sequence a fresh matcher computes the mask at every position (timed), checks that the next
// token is allowed and accepts it; the last mask (after the last token) is timed too.
// --reference times the reference trie walk instead of the fast path (to measure the speedup).
// --passes N (N >= 2) runs every sequence N times, each with a fresh matcher of the same compiled
// grammar (later requests of a server that keeps the grammar); passes after the first are
// reported as "mask_us_warm".
// With GUIDED_BENCH_SLOW_US=N in the environment, every first-pass mask slower than N us is
// reported on stderr with its task, position and the text before it (to see what is slow).
// Prints one JSON object per task: {"name", "ok", "error", "compile_us", "mask_us": [...],
// "rejected": number of sequences cut short because a token was not allowed, "loop_indexes":
// loop indexes the vocabulary holds after the task (one more = a new loop shape, a vocabulary
// pass inside some mask)}.
// --sample prints one instance of the schema: a seeded random walk among the allowed tokens
// (EOS once complete) that favours tokens closing strings and containers (see sample()); exit 1
// if it does not end within MAX_TOKENS or the schema does not compile.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "guided/json_schema_compiler.h"
#include "guided/token_matcher.h"
#include "guided/vocabulary_warmup.h"
#include "tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

std::shared_ptr<const afm::guided::TokenVocabulary> vocabulary(const std::string& path) {
  const auto tok = afm::tokenizer::Tokenizer::from_json_file(path);
  std::vector<std::string> bytes(static_cast<size_t>(tok.vocab_size()));
  std::vector<bool> special(bytes.size());
  for (int32_t id = 0; id < tok.vocab_size(); ++id) {
    bytes[static_cast<size_t>(id)] = tok.token_bytes(id);
    special[static_cast<size_t>(id)] = tok.is_special(id);
  }
  auto vocab = std::make_shared<const afm::guided::TokenVocabulary>(
      std::move(bytes), std::move(special), tok.eos_id());
  // What the framework does when it builds a vocabulary (outside any request's timing, like
  // the peers' tokenizer preprocessing).
  afm::guided::prepare_json_loop_indexes(vocab);
  return vocab;
}

// True for tokens made only of bytes that close JSON strings and containers or separate their
// members (and whitespace): what a model writes to finish a value.
bool closes_structure(const std::string& bytes) {
  return !bytes.empty() && bytes.find_first_not_of("\"}],: \n") == std::string::npos;
}

// A seeded random "model": at each step a uniformly chosen allowed token, except that with
// probability kCloseBias it picks among the allowed tokens that close structure. Without the
// bias a walk over 150k tokens almost never ends a free string (nearly every token is allowed
// inside one), so few schemas would yield an instance to time.
int sample(const std::shared_ptr<const afm::guided::TokenVocabulary>& vocab,
           const std::string& schema_file, uint64_t seed, int max_tokens) {
  constexpr double kCloseBias = 0.2;
  afm::guided::TokenMatcher m(
      afm::guided::compile_json_schema_text(afm::read_file_to_string(schema_file)), vocab);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> words(vocab->mask_words());
  std::string text;
  for (int step = 0; step < max_tokens; ++step) {
    m.fill_next_token_mask(words);
    std::vector<int32_t> ids, closing;
    for (int32_t id = 0; id < vocab->size(); ++id) {
      if (!((words[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1)) continue;
      ids.push_back(id);
      if (closes_structure(vocab->token_bytes(id))) closing.push_back(id);
    }
    if (ids.empty()) break;
    const bool close = !closing.empty() && std::bernoulli_distribution(kCloseBias)(rng);
    const std::vector<int32_t>& pool = close ? closing : ids;
    const int32_t id = pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
    m.accept_token(id);
    if (m.is_terminated()) break;
    text += vocab->token_bytes(id);
  }
  if (!m.is_complete()) return 1;
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

void report_slow(const nlohmann::json& task, const std::vector<int32_t>& ids, size_t pos, double us,
                 const afm::guided::TokenVocabulary& vocab) {
  std::string before;
  for (size_t k = 0; k < pos; ++k) before += vocab.token_bytes(ids[k]);
  if (before.size() > 60) before = "..." + before.substr(before.size() - 60);
  std::fprintf(stderr, "slow %.0f us %s @%zu: %s\n", us, task["name"].get<std::string>().c_str(),
               pos, nlohmann::json(before).dump(-1, ' ', false,
                                                 nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: guided_bench TOKENIZER_JSON TASKS_JSON [--reference]\n");
    return 2;
  }
  const bool reference = argc > 3 && std::strcmp(argv[3], "--reference") == 0;
  const int passes = argc > 4 && std::strcmp(argv[3], "--passes") == 0 ? std::stoi(argv[4]) : 1;
  const char* slow_env = std::getenv("GUIDED_BENCH_SLOW_US");
  const double slow_us = slow_env != nullptr ? std::atof(slow_env) : 0;
  try {
    const auto vocab = vocabulary(argv[1]);
    if (std::strcmp(argv[2], "--sample") == 0 && argc == 6) {
      return sample(vocab, argv[3], std::stoull(argv[4]), std::stoi(argv[5]));
    }
    const auto tasks = nlohmann::json::parse(afm::read_file_to_string(argv[2]));
    std::vector<uint32_t> words(vocab->mask_words());
    for (const auto& task : tasks) {
      nlohmann::json out;
      out["name"] = task["name"];
      auto t0 = Clock::now();
      std::shared_ptr<const afm::guided::Grammar> grammar;
      try {
        grammar = afm::guided::compile_json_schema_text(task["schema"].get<std::string>());
        afm::guided::TokenMatcher probe(grammar, vocab);
      } catch (const afm::Error& e) {
        out["ok"] = false;
        out["error"] = e.what();
        std::printf("%s\n", out.dump().c_str());
        continue;
      }
      out["ok"] = true;
      out["compile_us"] = us_since(t0);
      std::vector<double> mask_us, mask_us_warm;
      int rejected = 0;
      for (int pass = 0; pass < passes; ++pass) {
        for (const auto& seq : task["tokens"]) {
          afm::guided::TokenMatcher m(grammar, vocab);
          const auto ids = seq.get<std::vector<int32_t>>();
          for (size_t i = 0; i <= ids.size(); ++i) {
            t0 = Clock::now();
            if (reference) {
              m.fill_next_token_mask_reference(words);
            } else {
              m.fill_next_token_mask(words);
            }
            const double us = us_since(t0);
            (pass == 0 ? mask_us : mask_us_warm).push_back(us);
            if (pass == 0 && slow_us > 0 && us > slow_us) report_slow(task, ids, i, us, *vocab);
            if (i == ids.size()) break;
            const int32_t id = ids[i];
            if (!((words[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1) || !m.accept_token(id)) {
              rejected += pass == 0;
              break;
            }
          }
        }
      }
      out["mask_us"] = mask_us;
      if (passes > 1) out["mask_us_warm"] = mask_us_warm;
      out["rejected"] = rejected;
      out["loop_indexes"] = vocab->num_loop_indexes();
      std::printf("%s\n", out.dump().c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "guided_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
