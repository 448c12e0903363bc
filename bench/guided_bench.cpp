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
// Prints one JSON object per task: {"name", "ok", "error", "compile_us", "mask_us": [...],
// "rejected": number of sequences cut short because a token was not allowed}.
// --sample prints one instance of the schema: a seeded random walk that picks uniformly among
// the allowed tokens (EOS once complete), as `afm schema sample` does; exit 1 if it does not
// end within MAX_TOKENS or the schema does not compile.
#include <chrono>
#include <cstdio>
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
  return std::make_shared<afm::guided::TokenVocabulary>(std::move(bytes), std::move(special),
                                                        tok.eos_id());
}

int sample(const std::shared_ptr<const afm::guided::TokenVocabulary>& vocab,
           const std::string& schema_file, uint64_t seed, int max_tokens) {
  afm::guided::TokenMatcher m(
      afm::guided::compile_json_schema_text(afm::read_file_to_string(schema_file)), vocab);
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> words(vocab->mask_words());
  std::string text;
  for (int step = 0; step < max_tokens; ++step) {
    m.fill_next_token_mask(words);
    std::vector<int32_t> ids;
    for (int32_t id = 0; id < vocab->size(); ++id) {
      if ((words[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1) ids.push_back(id);
    }
    if (ids.empty()) break;
    const int32_t id = ids[std::uniform_int_distribution<size_t>(0, ids.size() - 1)(rng)];
    m.accept_token(id);
    if (m.is_terminated()) break;
    text += vocab->token_bytes(id);
  }
  if (!m.is_complete()) return 1;
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: guided_bench TOKENIZER_JSON TASKS_JSON [--reference]\n");
    return 2;
  }
  const bool reference = argc > 3 && std::strcmp(argv[3], "--reference") == 0;
  const int passes = argc > 4 && std::strcmp(argv[3], "--passes") == 0 ? std::stoi(argv[4]) : 1;
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
            (pass == 0 ? mask_us : mask_us_warm).push_back(us_since(t0));
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
      std::printf("%s\n", out.dump().c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "guided_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
