// Fast masks (MaskCache) equal the reference trie walk on random walks, with rollback, over a
// real byte-level BPE vocabulary plus tokens that span several terminals or split UTF-8
// characters, on hand-written schemas and on jsonschemabench schemas (when the shared data
// folder is present).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <cstdlib>
#include <random>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "guided/json_schema_compiler.h"
#include "guided/token_matcher.h"
#include "guided/vocabulary_warmup.h"

namespace afm::guided {
namespace {

namespace fs = std::filesystem;

fs::path source_dir() {
  const char* root = std::getenv("AFM_SOURCE_DIR");
  return fs::path(root ? root : ".");
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// GPT-2 byte-level alphabet: printable bytes stand for themselves, the others are mapped to
// code points from U+0100 up, in byte order.
std::string decode_byte_level(const std::string& utf8) {
  std::vector<int> unicode_to_byte(512, -1);
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    unicode_to_byte[static_cast<size_t>(printable ? b : 256 + n++)] = b;
  }
  std::string out;
  for (size_t i = 0; i < utf8.size();) {
    const auto c = static_cast<uint8_t>(utf8[i]);
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0xc0) {
      len = 2;
      cp = ((c & 0x1f) << 6) | (static_cast<uint8_t>(utf8[i + 1]) & 0x3f);
    }
    i += len;
    if (cp >= unicode_to_byte.size() || unicode_to_byte[cp] < 0) return {};  // not byte-level
    out.push_back(static_cast<char>(unicode_to_byte[cp]));
  }
  return out;
}

// The 4000-token test tokenizer, all 256 single bytes, and tokens crossing JSON structure.
std::shared_ptr<const TokenVocabulary> test_vocabulary() {
  std::vector<std::string> bytes = {"<eos>"};
  std::vector<bool> special = {true};
  const auto j = nlohmann::json::parse(
      read_text(source_dir() / "tests" / "data" / "tokenizer" / "qwen2" / "tokenizer.json"));
  for (const auto& [piece, id] : j["model"]["vocab"].items()) {
    const std::string b = decode_byte_level(piece);
    bytes.push_back(b);
    special.push_back(b.empty());
  }
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  for (const char* t : {"\":\"",    "\",\"",
                        "\"},{\"",  "\"}",
                        "\"]",      "],\"",
                        "\":{\"",   "\":[",
                        "\":1",     "12.5",
                        "-0",       "e+",
                        "1e",       "true}",
                        "null,",    "\\\"",
                        "\\n",      "\\u00",
                        "ab\"",     "a\":",
                        "\xc3\xa9", "\xc3",
                        "\xa9\"",   "\xe4\xb8\xad",
                        "\xe4\xb8", "\xf0\x9f\x98\x80",
                        "\x9f\x98", "00",
                        "\"\"",     "{}",
                        "[]",       "2024-01-",
                        "T12:"}) {
    bytes.emplace_back(t);
    special.push_back(false);
  }
  special.resize(bytes.size(), false);
  return std::make_shared<TokenVocabulary>(std::move(bytes), std::move(special), 0);
}

std::vector<int32_t> allowed(const std::vector<uint32_t>& words) {
  // Visits the set bits only: the walks call this after every token, and the test sources
  // are compiled without optimization in the sanitizer tree (tests/CMakeLists.txt).
  std::vector<int32_t> ids;
  for (size_t w = 0; w < words.size(); ++w) {
    for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) {
      ids.push_back(static_cast<int32_t>(w * 32 + static_cast<size_t>(std::countr_zero(bits))));
    }
  }
  return ids;
}

// Random walks through the fast masks; every mask must equal the reference walk's. Rolls back
// 1-3 tokens now and then, so cached states are revisited from other histories.
// `cache`: null for the process-wide shared one.
void check_walks(const std::shared_ptr<const Grammar>& grammar,
                 const std::shared_ptr<const TokenVocabulary>& vocab, uint32_t seed, int walks,
                 int steps, const std::string& name, std::shared_ptr<MaskCache> cache = nullptr) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> fast(vocab->mask_words()), slow(vocab->mask_words());
  TokenMatcher m(grammar, vocab, cache);  // one matcher for all walks: the cache spans them
  for (int walk = 0; walk < walks; ++walk) {
    m.rollback(m.num_tokens());
    for (int step = 0; step < steps && !m.is_terminated(); ++step) {
      m.fill_next_token_mask(fast);
      m.fill_next_token_mask_reference(slow);
      ASSERT_EQ(fast, slow) << name << " walk " << walk << " step " << step << " after "
                            << m.num_bytes() << " bytes";
      const std::vector<int32_t> ids = allowed(fast);
      if (ids.empty()) break;
      if (m.num_tokens() > 0 && rng() % 8 == 0) {
        m.rollback(std::min<size_t>(m.num_tokens(), 1 + rng() % 3));
        continue;
      }
      // Prefer long tokens half of the time so walks get past long strings.
      int32_t id = ids[rng() % ids.size()];
      if (rng() % 2 == 0) {
        for (int k = 0; k < 4; ++k) {
          const int32_t other = ids[rng() % ids.size()];
          if (vocab->token_bytes(other).size() > vocab->token_bytes(id).size()) id = other;
        }
      }
      ASSERT_TRUE(m.accept_token(id)) << name;
    }
  }
}

TEST(MaskCache, EqualsReferenceOnHandWrittenSchemas) {
  auto vocab = test_vocabulary();
  const char* schemas[] = {
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":5},
          "n":{"type":"integer","minimum":-20,"maximum":300}},"required":["name"]})",
      R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}},
          "additionalProperties":true})",
      R"({"type":"array","items":{"enum":["red","green",1,null,{"x":[true]}]},"maxItems":6})",
      R"({"anyOf":[{"type":"string","pattern":"^[a-f0-9]{2,6}$"},{"type":"boolean"},
          {"type":"string","format":"date"}]})",
      R"({"$defs":{"t":{"type":"object","properties":{"v":{"type":"integer"},
          "kids":{"type":"array","items":{"$ref":"#/$defs/t"}}}}},"$ref":"#/$defs/t"})",
      R"({"type":"object","properties":{"id":{"type":"string","format":"uuid"},
          "tags":{"type":"array","items":{"type":"string","minLength":1}}},
          "required":["id","tags"],"additionalProperties":false})",
      R"(true)",
      // Key entry states: declared names share first letters with free additional keys.
      R"({"type":"object","properties":{"alpha":{"type":"integer"},"al":{"type":"boolean"},
          "beta":{"type":"string"},"\u00e9t\u00e9":{"type":"null"}},
          "additionalProperties":{"type":"integer"}})",
  };
  uint32_t seed = 1;
  for (const char* text : schemas) {
    check_walks(compile_json_schema_text(text), vocab, seed++, 4, 60, text);
  }
}

// Bounded repetitions (counted loops, counted_loop.h): email atoms and host labels, string
// content up to and past the longest token, counted pattern classes, a minimum inside. Each
// position of these is its own parse state; masks must still equal the reference walk's, and
// the counted path must actually answer some of them.
TEST(MaskCache, EqualsReferenceInsideBoundedRepetitions) {
  auto vocab = test_vocabulary();
  const char* schemas[] = {
      R"({"type":"object","properties":{"to":{"type":"string","format":"email"},
          "host":{"type":"string","format":"hostname"}},"required":["to","host"]})",
      R"({"type":"array","items":{"type":"string","maxLength":3},"minItems":2})",
      R"({"type":"array","items":{"type":"string","minLength":4,"maxLength":12}})",
      R"({"type":"object","properties":{"a":{"type":"string","maxLength":70},
          "b":{"type":"string","minLength":20,"maxLength":300}},"required":["a","b"]})",
      R"({"type":"string","pattern":"^[a-z]{2,9}(-[a-z0-9]{1,5}){0,3}$"})",
  };
  uint32_t seed = 50;
  for (const char* text : schemas) {
    auto grammar = compile_json_schema_text(text);
    auto cache = std::make_shared<MaskCache>(*grammar, *vocab);
    check_walks(grammar, vocab, seed++, 6, 120, text, cache);
    EXPECT_GT(cache->num_counted_fills(), 0u) << text;
  }
  // A copy of several bytes whose states lead on within the copy: not found as a counted loop
  // (the start's most frequent successor is no next copy), walked as before, still exact.
  const char* multi_byte_copies = R"({"type":"string","pattern":"^([0-9]{3},){0,6}[0-9]{1,3}$"})";
  check_walks(compile_json_schema_text(multi_byte_copies), vocab, seed, 6, 120, multi_byte_copies);
}

const char* const kStringSchema =
    R"({"type":"object","properties":{"s":{"type":"string"},"t":{"type":"string","maxLength":40},
        "u":{"type":"array","items":{"type":"string"},"maxItems":3},"n":{"type":"number"}},
        "required":["s","t","u","n"]})";

// Matchers on several threads share one cache; tiny limits force new generations while other
// threads are mid-walk (and walks too large for a generation fall back to the reference).
TEST(MaskCache, SharedAcrossThreadsEqualsReference) {
  auto vocab = test_vocabulary();
  auto grammar = compile_json_schema_text(kStringSchema);
  for (size_t max_states : {size_t{48}, size_t{1} << 14}) {
    auto cache = std::make_shared<MaskCache>(*grammar, *vocab,
                                             MaskCache::Limits{max_states, size_t{256} << 10});
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        check_walks(grammar, vocab, 100 + t, 3, 50, "thread " + std::to_string(t), cache);
      });
    }
    for (auto& thread : threads) thread.join();
    if (max_states < 100) {
      EXPECT_GT(cache->num_generations(), 1u);
    }
  }
}

// One cache per live (grammar, vocabulary) pair; a second matcher finds the first one's states.
TEST(MaskCache, SharedPerGrammarAndVocabulary) {
  auto vocab = test_vocabulary();
  auto g1 = compile_json_schema_text(kStringSchema);
  auto g2 = compile_json_schema_text(R"({"type":"integer"})");
  TokenMatcher a(g1, vocab), b(g1, vocab), c(g2, vocab);
  EXPECT_EQ(a.mask_cache(), b.mask_cache());
  EXPECT_NE(a.mask_cache(), c.mask_cache());
  EXPECT_EQ(MaskCache::shared(g1, vocab), a.mask_cache());

  const std::string text = "{\"s\":\"h\\nllo w\xc3\xa9rld \xe4\xb8\xad\",\"t\":\"ab";
  std::vector<int32_t> byte_token(256, -1);  // one single-byte token per byte
  for (int32_t id = 0; id < vocab->size(); ++id) {
    if (vocab->is_grammar_token(id) && vocab->token_bytes(id).size() == 1) {
      byte_token[static_cast<uint8_t>(vocab->token_bytes(id)[0])] = id;
    }
  }
  auto feed = [&](TokenMatcher& m) {
    std::vector<uint32_t> words(vocab->mask_words());
    for (char ch : text) {
      m.fill_next_token_mask(words);
      const int32_t id = byte_token[static_cast<uint8_t>(ch)];
      ASSERT_TRUE((words[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1) << m.num_bytes();
      ASSERT_TRUE(m.accept_token(id));
    }
  };
  const size_t empty_bytes = a.mask_cache()->memory_bytes();
  feed(a);
  const size_t states = a.mask_cache()->num_states();
  const size_t bytes = a.mask_cache()->memory_bytes();
  // Each state stored its mask at least (the walk asked for one per step).
  EXPECT_GE(bytes, empty_bytes + states * vocab->mask_words() * sizeof(uint32_t) / 2);
  feed(b);
  EXPECT_EQ(a.mask_cache()->num_states(), states);  // all masks were found, no new state
  EXPECT_EQ(a.mask_cache()->memory_bytes(), bytes);

  // The process-wide view counts both live caches; a dead grammar's cache is dropped.
  const MaskCache::SharedStats both = MaskCache::shared_stats();
  EXPECT_GE(both.caches, 2u);
  EXPECT_GE(both.states, states);
  EXPECT_GE(both.bytes, bytes + c.mask_cache()->memory_bytes());
  const size_t caches = both.caches;
  {
    auto g3 = compile_json_schema_text(R"({"type":"boolean"})");
    TokenMatcher d(g3, vocab);
    EXPECT_EQ(MaskCache::shared_stats().caches, caches + 1);
  }
  EXPECT_EQ(MaskCache::shared_stats().caches, caches);
}

// After prepare_json_loop_indexes, JSON text in a schema's strings, keys and numbers finds
// every loop index ready: a first request builds none.
TEST(MaskCache, PreparedVocabularyBuildsNoLoopIndexDuringRequests) {
  auto vocab = test_vocabulary();
  prepare_json_loop_indexes(vocab);
  const size_t prepared = vocab->num_loop_indexes();
  EXPECT_GE(prepared, 2u);  // string content and digit runs at least
  auto g = compile_json_schema_text(
      R"({"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"},
          "x":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}}},
          "additionalProperties":{"type":"number"}})");
  std::vector<uint32_t> words(vocab->mask_words());
  const std::string text =
      "{\"name\":\"h\u00e9llo \xe4\xb8\xad w\",\"n\":-1234,\"x\":12.75e-3,\"tags\":[\"ab\"],\"extra key\":7}";
  ByteMatcher bytes(g);
  for (size_t i = 0; i < text.size(); ++i) {
    MaskCache fresh(*g, *vocab);  // every position a first visit
    ASSERT_TRUE(bytes.accept_byte(static_cast<uint8_t>(text[i]))) << i;
    const size_t before = vocab->num_loop_indexes();
    ASSERT_TRUE(fresh.fill(bytes, words));
    EXPECT_EQ(vocab->num_loop_indexes(), before) << "new loop index after " << text.substr(0, i + 1);
  }
  EXPECT_EQ(vocab->num_loop_indexes(), prepared);
}

// The counted loops of bounded strings and of email / host-name atoms are prepared too: a
// request inside them builds no index of its own (each position a first visit).
TEST(MaskCache, PreparedVocabularyCoversBoundedStrings) {
  auto vocab = test_vocabulary();
  prepare_json_loop_indexes(vocab);
  const size_t prepared = vocab->num_loop_indexes();
  auto g = compile_json_schema_text(
      R"({"type":"object","properties":{"to":{"type":"string","format":"email"},
          "host":{"type":"string","format":"hostname"},"note":{"type":"string","maxLength":70}},
          "required":["to","host","note"]})");
  std::vector<uint32_t> words(vocab->mask_words());
  const std::string text =
      "{\"to\":\"john.doe@mail.example\",\"host\":\"api.example\",\"note\":\"two words\"}";
  ByteMatcher bytes(g);
  size_t counted = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    MaskCache fresh(*g, *vocab);
    ASSERT_TRUE(bytes.accept_byte(static_cast<uint8_t>(text[i]))) << i;
    ASSERT_TRUE(fresh.fill(bytes, words));
    counted += fresh.num_counted_fills();
    EXPECT_EQ(vocab->num_loop_indexes(), prepared) << "new loop index after " << text.substr(0, i + 1);
  }
  EXPECT_GT(counted, 0u);
}

TEST(MaskCache, EqualsReferenceOnJsonSchemaBench) {
  const fs::path root = source_dir() / ".." / "shared" / "data" / "jsonschemabench" / "data";
  if (!fs::exists(root)) GTEST_SKIP() << "no jsonschemabench data at " << root;
  auto vocab = test_vocabulary();
  int checked = 0;
  for (const char* folder : {"Github_easy", "Github_trivial", "Glaiveai2K"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root / folder)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    // A fixed spread over the folder: every 97th file.
    for (size_t i = 0; i < files.size(); i += 97) {
      std::shared_ptr<const Grammar> grammar;
      try {
        grammar = compile_json_schema_text(read_text(files[i]));
      } catch (const Error&) {
        continue;  // fails closed; coverage is tested elsewhere
      }
      check_walks(grammar, vocab, static_cast<uint32_t>(i), 2, 40, files[i].string());
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

// Bounded repetitions as real schemas write them (`maxLength`, `format: email` / `hostname`):
// the first of each folder, in file order, with longer walks so that they get inside.
TEST(MaskCache, EqualsReferenceInsideJsonSchemaBenchBounds) {
  const fs::path root = source_dir() / ".." / "shared" / "data" / "jsonschemabench" / "data";
  if (!fs::exists(root)) GTEST_SKIP() << "no jsonschemabench data at " << root;
  const char* env_limit = std::getenv("AFM_MASK_BOUNDS_PER_FOLDER");  // one-off wider sweeps
  const int per_folder = env_limit ? std::atoi(env_limit) : 5;
  auto vocab = test_vocabulary();
  size_t counted = 0;
  int checked = 0;
  for (const char* folder : {"Github_easy", "Github_trivial", "Glaiveai2K"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root / folder)) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    int taken = 0;
    for (size_t i = 0; i < files.size() && taken < per_folder; ++i) {
      const std::string text = read_text(files[i]);
      if (text.find("maxLength") == std::string::npos &&
          text.find("\"email\"") == std::string::npos &&
          text.find("\"hostname\"") == std::string::npos) {
        continue;
      }
      std::shared_ptr<const Grammar> grammar;
      try {
        grammar = compile_json_schema_text(text);
      } catch (const Error&) {
        continue;
      }
      auto cache = std::make_shared<MaskCache>(*grammar, *vocab);
      check_walks(grammar, vocab, static_cast<uint32_t>(i), 2, 150, files[i].string(), cache);
      counted += cache->num_counted_fills();
      ++taken;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
  EXPECT_GT(counted, 0u);
}

// Found by guided_mask_fuzz: the middle of an escape in the 5th character of the inner
// repetition in the outer's first copy ("byk-0000\") and in its 3rd character in the outer's
// last copy ("...-0i\") had equal state keys: each is one repetition with 3 copies left, the
// outer one in the first case, the inner one in the second. The shared cache then reused the
// first position's successors and dropped "\n" (a backslash, then a 4th character) at the
// second. Keys now name the repeated symbol.
TEST(MaskCache, EqualsReferenceMidEscapeInNestedBoundedRepetitions) {
  auto vocab = test_vocabulary();
  const char* text = R"({"type":"string","pattern":"^[a-z]{2,9}(-[a-z0-y]{1,5}){0,3}&"})";
  auto grammar = compile_json_schema_text(text);
  const std::string walk = "\"byk-0GANS-aPJLR-0i\\";
  for (const bool fresh_each_step : {true, false}) {
    auto shared = std::make_shared<MaskCache>(*grammar, *vocab);
    std::vector<uint32_t> fast(vocab->mask_words()), slow(vocab->mask_words());
    std::vector<int32_t> ids;
    for (size_t i = 0; i <= walk.size(); ++i) {
      auto cache = fresh_each_step ? std::make_shared<MaskCache>(*grammar, *vocab) : shared;
      TokenMatcher m(grammar, vocab, cache);
      for (int32_t id : ids) ASSERT_TRUE(m.accept_token(id));
      m.fill_next_token_mask(fast);
      m.fill_next_token_mask_reference(slow);
      ASSERT_EQ(fast, slow) << "after " << walk.substr(0, i) << " fresh " << fresh_each_step;
      if (i == walk.size()) break;
      int32_t id = 1;  // the first token spelling this one byte
      while (vocab->is_special(id) || vocab->token_bytes(id) != walk.substr(i, 1)) ++id;
      ids.push_back(id);
    }
  }
}

}  // namespace
}  // namespace afm::guided
