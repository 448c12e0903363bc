#include "tokenizer/bpe_trainer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/error.h"
#include "tokenizer/bpe_merger.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/word_counter.h"

namespace afm::tokenizer {
namespace {

using Merges = std::vector<std::pair<std::string, std::string>>;

// The classic example: hug x10, pug x5, pun x12, bun x4, hugs x5, one word per document.
std::vector<std::string> hug_documents() {
  std::vector<std::string> docs;
  auto add = [&](const char* word, int n) { docs.insert(docs.end(), n, word); };
  add("hug", 10), add("pug", 5), add("pun", 12), add("bun", 4), add("hugs", 5);
  return docs;
}

BpeTrainResult train(const std::vector<std::string>& docs, BpeTrainerOptions o) {
  std::vector<std::string_view> views(docs.begin(), docs.end());
  return train_bpe_from_texts(views, o);
}

BpeTrainerOptions options(int64_t vocab_size, std::vector<std::string> specials = {}) {
  BpeTrainerOptions o;
  o.vocab_size = vocab_size;
  o.special_tokens = std::move(specials);
  return o;
}

// Deterministic mixed text: words from several scripts, digits, punctuation, emoji, code,
// whitespace runs and line breaks.
std::string mixed_corpus(size_t bytes, uint32_t seed) {
  const char* pieces[] = {
      "the",   "quick",  "brown",    "fox",  "jumps", "über", "straße",
      "naïve", "привет", "мир",      "你好", "世界",  "🙂", "👩‍👩‍👧‍👦",
      "🇫🇷",    "12345",  "3.14",     "x_1",  "(a+b)", "{}",   "->",
      "it's",  "WE'LL",  "\t",       "  ",   "\n",    "\r\n", ".\n",
      "  \n",  "\n\n",   "\xc2\xa0", "<|"};
  const char* syllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "zen", "ба",
                             "ко", "ми", "の", "か", "é",  "ü",  "x",  "qu", "th",  "ing"};
  std::mt19937 rng(seed);
  std::string text;
  while (text.size() < bytes) {
    if (rng() % 2 == 0) {
      text += pieces[rng() % std::size(pieces)];
    } else {  // a made-up word: many distinct words, so many pairs to merge
      for (uint32_t n = 2 + rng() % 3; n > 0; --n) text += syllables[rng() % std::size(syllables)];
    }
    if (rng() % 3 != 0) text += ' ';
  }
  return text;
}

std::vector<std::pair<std::string, uint64_t>> sorted_counts(const WordCounts& c) {
  std::vector<std::pair<std::string, uint64_t>> v;
  for (const WordCount& w : c.words) v.emplace_back(std::string(w.word), w.count);
  std::sort(v.begin(), v.end());
  return v;
}

TEST(BpeTrainer, LearnsTheHandCheckedMerges) {
  BpeTrainResult r = train(hug_documents(), options(1000));
  // (u,g)=20, (u,n)=16, (h,ug)=15, (p,un)=12, then a tie at 5 between (p,ug) and (hug,s):
  // 'p' is a byte symbol, so its id is smaller than the merged "hug"'s.
  Merges want = {{"u", "g"},  {"u", "n"},   {"h", "ug"}, {"p", "un"},
                 {"p", "ug"}, {"hug", "s"}, {"b", "un"}};
  EXPECT_EQ(r.spec.merges, want);
  EXPECT_EQ(r.spec.tokens.size(), 256u + 7u);  // stopped: every word is one token
  EXPECT_EQ(r.spec.tokens[256], "ug");
  EXPECT_EQ(r.spec.tokens.back(), "bun");
  EXPECT_EQ(r.distinct_words, 5u);
  EXPECT_EQ(r.total_words, 36u);
}

TEST(BpeTrainer, StopsWhenNoPairReachesMinFrequency) {
  BpeTrainerOptions o = options(1000);
  o.min_frequency = 5;
  BpeTrainResult r = train(hug_documents(), o);
  ASSERT_EQ(r.spec.merges.size(), 6u);  // (b, un) occurs 4 times
  EXPECT_EQ(r.spec.merges.back(), (std::pair<std::string, std::string>{"hug", "s"}));
}

TEST(BpeTrainer, StopsAtVocabSize) {
  BpeTrainResult r = train(hug_documents(), options(256 + 3));
  EXPECT_EQ(r.spec.tokens.size(), 259u);
  EXPECT_EQ(r.spec.merges.size(), 3u);
  std::string big = mixed_corpus(50'000, 1);
  BpeTrainResult r2 = train({big}, options(256 + 2 + 300, {"<a>", "<b>"}));
  EXPECT_EQ(r2.spec.tokens.size(), 558u);
}

TEST(BpeTrainer, SpecialsComeFirstThenBytesInCodePointOrder) {
  BpeTrainResult r = train(hug_documents(), options(300, {"<|endoftext|>", "<x>"}));
  const VocabSpec& s = r.spec;
  EXPECT_EQ(s.tokens[0], "<|endoftext|>");
  EXPECT_EQ(s.tokens[1], "<x>");
  EXPECT_EQ(s.tokens[2], "!");                         // GPT-2's id 0
  EXPECT_EQ(s.tokens[2 + 220], byte_to_unicode(' '));  // "Ġ" is GPT-2's 220
  ASSERT_EQ(s.added.size(), 2u);
  EXPECT_TRUE(s.added[0].special && s.added[1].special);
  EXPECT_EQ(s.added[1].id, 1);
  EXPECT_EQ(s.eos_id, 0);
}

TEST(BpeTrainer, SpecialTokensInTheTextAreNotLearnedFrom) {
  std::vector<std::string> docs(20, "ab<x>ab<x>");
  BpeTrainResult r = train(docs, options(1000, {"<x>"}));
  EXPECT_EQ(r.spec.merges, (Merges{{"a", "b"}}));
  EXPECT_EQ(r.total_words, 40u);
}

TEST(BpeTrainer, ChunksEndOnlyAfterANewlineBetweenPrintableCharacters) {
  EXPECT_EQ(safe_chunk_end("ab\ncd", 0, 1), 3u);
  EXPECT_EQ(safe_chunk_end("ab \ncd\n\nef\n gh\r\nij", 0, 1), 18u);  // no safe place
  EXPECT_EQ(safe_chunk_end("a\nb\nc", 2, 1), 4u);
}

TEST(BpeTrainer, ChunkingNeverChangesPreTokens) {
  std::string text = mixed_corpus(40'000, 7);
  size_t chunks = 0;
  for (size_t at = 0; at < text.size(); at = safe_chunk_end(text, at, 1)) ++chunks;
  EXPECT_GT(chunks, 20u);
  std::vector<std::string_view> docs = {text, "a\n\n  b", "tail.\nx"};
  for (const char* name : {"qwen2", "gpt2", "llama3"}) {
    WordCountOptions whole;
    whole.pre_regex = trainer_pre_regex(name);
    whole.cut_strings = {"<|"};
    whole.chunk_bytes = size_t{1} << 30;
    WordCountOptions tiny = whole;
    tiny.chunk_bytes = 1;
    tiny.threads = 3;
    WordCounts a = count_words(docs, whole), b = count_words(docs, tiny);
    EXPECT_EQ(a.total, b.total) << name;
    EXPECT_EQ(sorted_counts(a), sorted_counts(b)) << name;
    // In batches whose text is gone before the counts are read: the words are copies.
    WordCounter counter(tiny);
    for (std::string_view d : docs) {
      std::string copy(d);
      std::vector<std::string_view> batch = {copy};
      counter.add(batch);
      copy.assign(copy.size(), '#');
    }
    EXPECT_EQ(sorted_counts(counter.finish()), sorted_counts(a)) << name;
  }
}

TEST(BpeTrainer, SameResultForAnyThreadCountAndChunkSize) {
  std::string text = mixed_corpus(200'000, 3);
  BpeTrainerOptions one = options(256 + 5 + 800, afm_special_tokens());
  BpeTrainerOptions many = one;
  many.threads = 4;
  many.chunk_bytes = 512;
  BpeTrainResult a = train({text}, one), b = train({text}, many);
  EXPECT_EQ(a.spec.tokens, b.spec.tokens);
  EXPECT_EQ(a.spec.merges, b.spec.merges);
  EXPECT_EQ(a.spec.tokens.size(), 1061u);  // reached the vocab size
}

TEST(BpeTrainer, MergeIntoAnExistingTokenKeepsCounting) {
  // "ab" is already a token: merging (a, b) adds no token, and the words holding it go on to
  // merge (ab, ab).
  std::vector<std::string> tokens;
  int32_t byte_ids[256];
  for (int b = 0; b < 256; ++b) {
    byte_ids[b] = b;
    tokens.push_back(byte_to_unicode(static_cast<uint8_t>(b)));
  }
  tokens.push_back("ab");
  std::vector<WordCount> words = {{"abab", 5}, {"ab", 2}};
  BpeMerger m(tokens, byte_ids, words);
  m.run(1000, 2, nullptr);
  EXPECT_EQ(m.merges(), (std::vector<std::pair<int32_t, int32_t>>{{'a', 'b'}, {256, 256}}));
  EXPECT_EQ(m.tokens().size(), 258u);
  EXPECT_EQ(m.tokens().back(), "abab");
}

TEST(BpeTrainer, TrainedTokenizerRoundTripsThroughTokenizerJson) {
  std::string text = mixed_corpus(100'000, 5);
  BpeTrainerOptions o = options(256 + 5 + 600, afm_special_tokens());
  BpeTrainResult r = train({text}, o);
  auto dir = std::filesystem::temp_directory_path() /
             ("afm_bpe_trainer_test_" + std::to_string(::getpid()));
  write_trained_tokenizer(r.spec, dir.string());
  Tokenizer tok = Tokenizer::from_json_file((dir / "tokenizer.json").string());
  EXPECT_EQ(tok.vocab_size(), 861);
  EXPECT_EQ(tok.spec().merges, r.spec.merges);
  EXPECT_EQ(tok.spec().pre_name, "qwen2");
  EXPECT_EQ(tok.eos_id(), 0);
  const std::string samples[] = {
      "Hello, world! It's 2025 and the quick brown fox jumps.",
      "Grüß Gott — ça va? Привет мир 你好世界 日本語 한국어 عربى",
      "🙂👍🏽👩‍👩‍👧‍👦🇫🇷🏳️‍🌈 ❤️",
      "  leading\tand trailing  \n\n\r\n",
      "\x01\x7f raw control bytes",
      "def f(x):\n    return x ** 2"};
  for (const std::string& s : samples) {
    std::vector<int32_t> ids = tok.encode(s);
    EXPECT_EQ(tok.decode(ids), s);
  }
  std::vector<int32_t> ids = tok.encode("<turn_start> user\nhi<turn_end><|endoftext|>");
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids[ids.size() - 2], 2);
  EXPECT_EQ(ids.back(), 0);
  EXPECT_EQ(tok.encode(" quick").size(), 1u);  // a frequent training word is one token
  // The afm specials bring the afm chat template with them.
  std::ifstream config(dir / "tokenizer_config.json");
  const std::string config_text((std::istreambuf_iterator<char>(config)), {});
  EXPECT_NE(config_text.find("\"chat_template\": \"{% for message in messages %}<turn_start>"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(BpeTrainer, RejectsBadOptionsAndInputs) {
  auto code_of = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::kInternal;
  };
  std::vector<std::string> docs = {"text"};
  EXPECT_EQ(code_of([&] {
              train(docs, options(256 + 1, {"<a>", "<b>"}));
            }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] {
              train(docs, options(1000, {"<a>", "<a>"}));
            }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { train(docs, options(1000, {""})); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { train(docs, options(1000, {"a\nb"})); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { train(docs, options(1000, {"a"})); }), ErrorCode::kInvalidArgument);
  BpeTrainerOptions bad_pre = options(1000);
  bad_pre.pre_tokenizer = "bert";
  EXPECT_EQ(code_of([&] { train(docs, bad_pre); }), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code_of([&] { train_bpe_from_files({"no/such/file.txt"}, options(1000)); }),
            ErrorCode::kIo);
  EXPECT_EQ(code_of([&] { train_bpe_from_files({}, options(1000)); }), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace afm::tokenizer
