// Token matcher over a tiny vocabulary: masks equal a per-token brute-force check, tokens that
// span several terminals or split a UTF-8 character, EOS only when complete, rollback by tokens.
#include "guided/token_matcher.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "guided/json_schema_compiler.h"

namespace afm::guided {
namespace {

constexpr int32_t kEos = 0;
constexpr int32_t kControl = 1;

// ids: 0 EOS (special), 1 a control token, 2 an empty token, then ordinary tokens.
std::shared_ptr<const TokenVocabulary> tiny_vocabulary() {
  std::vector<std::string> bytes = {
      "<eos>", "<ctl>", "",      "{",         "}",      "\"",       "{\"name\":\"",
      "name",  "\":",   "\":\"", ",",         "\"n\":", "1",        "12",
      "0",     "a",     "ab",    "\xc3",      "\xa9",   "\xc3\xa9", "\"}",
      "a\"}",  "-",     "\",\"", "\",\"n\":", "}}",     "{\"",      "n",
      "\"n",   "ne"};
  std::vector<bool> special(bytes.size(), false);
  special[kEos] = special[kControl] = true;
  return std::make_shared<TokenVocabulary>(bytes, special, kEos);
}

std::shared_ptr<const Grammar> person_grammar() {
  return compile_json_schema_text(
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":3},
          "n":{"type":"integer"}},"required":["name"],"additionalProperties":false})");
}

int32_t id_of(const TokenVocabulary& v, const std::string& text) {
  for (int32_t id = 2; id < v.size(); ++id) {
    if (v.token_bytes(id) == text) return id;
  }
  ADD_FAILURE() << "no token " << text;
  return -1;
}

bool bit(const std::vector<uint32_t>& words, int32_t id) {
  return (words[id >> 5] >> (id & 31)) & 1;
}

// The oracle: try every token on a copy of the matcher.
std::vector<uint32_t> brute_force_mask(const TokenMatcher& m) {
  std::vector<uint32_t> words(m.vocabulary().mask_words());
  for (int32_t id = 0; id < m.vocabulary().size(); ++id) {
    TokenMatcher copy = m;
    if (copy.accept_token(id)) words[id >> 5] |= uint32_t{1} << (id & 31);
  }
  return words;
}

TEST(TokenVocabulary, TrieIsPreorderWithContiguousSubtrees) {
  auto v = tiny_vocabulary();
  auto nodes = v->nodes();
  ASSERT_FALSE(nodes.empty());
  size_t tokens = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    EXPECT_GT(nodes[i].subtree_end, i);
    EXPECT_LE(nodes[i].subtree_end, nodes.size());
    for (size_t j = i + 1; j < nodes[i].subtree_end; ++j) EXPECT_GT(nodes[j].depth, nodes[i].depth);
    tokens += nodes[i].num_tokens;
  }
  EXPECT_EQ(tokens, static_cast<size_t>(v->size() - 3));  // all but EOS, control, empty
  // root_token_range(b): exactly the grammar tokens whose first byte is b.
  const auto ids = v->token_ids();
  for (int b = 0; b < 256; ++b) {
    const auto [begin, end] = v->root_token_range(static_cast<uint8_t>(b));
    size_t expected = 0;
    for (int32_t id = 0; id < v->size(); ++id) {
      expected += v->is_grammar_token(id) && static_cast<uint8_t>(v->token_bytes(id)[0]) == b;
    }
    EXPECT_EQ(end - begin, expected) << b;
    for (uint32_t k = begin; k < end; ++k) {
      EXPECT_EQ(static_cast<uint8_t>(v->token_bytes(ids[k])[0]), b);
    }
  }
}

TEST(TokenVocabulary, RejectsInconsistentInput) {
  EXPECT_THROW(TokenVocabulary({"a", "b"}, {false}, std::nullopt), Error);
  EXPECT_THROW(TokenVocabulary({"a"}, {false}, 5), Error);
}

TEST(TokenMatcher, MasksEqualBruteForceOnRandomWalks) {
  auto v = tiny_vocabulary();
  auto g = person_grammar();
  std::mt19937 rng(7);
  for (int walk = 0; walk < 40; ++walk) {
    TokenMatcher m(g, v);
    for (int step = 0; step < 30 && !m.is_terminated(); ++step) {
      const std::vector<uint32_t> mask = m.next_token_mask();
      ASSERT_EQ(mask, brute_force_mask(m)) << "walk " << walk << " step " << step;
      std::vector<int32_t> allowed;
      for (int32_t id = 0; id < v->size(); ++id) {
        if (bit(mask, id)) allowed.push_back(id);
      }
      if (allowed.empty()) break;
      ASSERT_TRUE(m.accept_token(allowed[rng() % allowed.size()]));
    }
  }
}

TEST(TokenMatcher, TokenSpanningSeveralTerminals) {
  auto v = tiny_vocabulary();
  TokenMatcher m(person_grammar(), v);
  EXPECT_EQ(m.forced_bytes(), "{\"name\":\"");
  EXPECT_TRUE(m.accept_token(id_of(*v, "{\"name\":\"")));
  EXPECT_FALSE(m.accept_token(id_of(*v, "\xa9")));  // state unchanged on rejection
  EXPECT_TRUE(m.accept_token(id_of(*v, "ab")));
  EXPECT_TRUE(m.accept_token(id_of(*v, "\",\"n\":")));
  EXPECT_TRUE(m.accept_token(id_of(*v, "12")));
  EXPECT_FALSE(m.is_complete());
  EXPECT_TRUE(m.accept_token(id_of(*v, "}")));
  EXPECT_TRUE(m.is_complete());
  EXPECT_EQ(m.num_bytes(), std::string("{\"name\":\"ab\",\"n\":12}").size());
}

TEST(TokenMatcher, ByteTokensSplittingUtf8Character) {
  auto v = tiny_vocabulary();
  TokenMatcher m(person_grammar(), v);
  ASSERT_TRUE(m.accept_token(id_of(*v, "{\"name\":\"")));
  ASSERT_TRUE(m.accept_token(id_of(*v, "\xc3")));
  const auto mask = m.next_token_mask();
  for (int32_t id = 0; id < v->size(); ++id) {
    EXPECT_EQ(bit(mask, id), id == id_of(*v, "\xa9")) << v->token_bytes(id);
  }
  ASSERT_TRUE(m.accept_token(id_of(*v, "\xa9")));
  EXPECT_TRUE(m.accept_token(id_of(*v, "\xc3\xa9")));  // two characters of at most three
  EXPECT_TRUE(m.accept_token(id_of(*v, "a\"}")));      // the third, then the end
  EXPECT_TRUE(m.is_complete());
}

TEST(TokenMatcher, EosOnlyWhenComplete) {
  auto v = tiny_vocabulary();
  TokenMatcher m(person_grammar(), v);
  EXPECT_FALSE(bit(m.next_token_mask(), kEos));
  EXPECT_FALSE(m.accept_token(kEos));
  ASSERT_TRUE(m.accept_token(id_of(*v, "{\"name\":\"")));
  ASSERT_TRUE(m.accept_token(id_of(*v, "a\"}")));
  const auto mask = m.next_token_mask();
  EXPECT_TRUE(bit(mask, kEos));
  EXPECT_FALSE(bit(mask, kControl));
  for (int32_t id = 1; id < v->size(); ++id) EXPECT_FALSE(bit(mask, id)) << v->token_bytes(id);
  EXPECT_FALSE(m.accept_token(kControl));
  EXPECT_FALSE(m.accept_token(-1));
  EXPECT_FALSE(m.accept_token(v->size()));
  EXPECT_TRUE(m.accept_token(kEos));
  EXPECT_TRUE(m.is_terminated());
  EXPECT_FALSE(m.accept_token(kEos));
  for (uint32_t w : m.next_token_mask()) EXPECT_EQ(w, 0u);
}

TEST(TokenMatcher, RollbackByTokensRestoresState) {
  auto v = tiny_vocabulary();
  TokenMatcher m(person_grammar(), v);
  ASSERT_TRUE(m.accept_token(id_of(*v, "{\"")));
  ASSERT_TRUE(m.accept_token(id_of(*v, "name")));
  const auto mask_after_name = m.next_token_mask();
  ASSERT_TRUE(m.accept_token(id_of(*v, "\":\"")));
  ASSERT_TRUE(m.accept_token(id_of(*v, "a\"}")));
  ASSERT_TRUE(m.accept_token(kEos));
  EXPECT_EQ(m.num_tokens(), 5u);
  m.rollback(1);
  EXPECT_FALSE(m.is_terminated());
  EXPECT_TRUE(m.is_complete());
  m.rollback(2);
  EXPECT_EQ(m.num_tokens(), 2u);
  EXPECT_EQ(m.next_token_mask(), mask_after_name);
  m.rollback(2);
  EXPECT_EQ(m.num_bytes(), 0u);
  EXPECT_EQ(m.forced_bytes(), "{\"name\":\"");
}

TEST(TokenMatcher, EmptyLanguageAllowsNothing) {
  auto v = tiny_vocabulary();
  TokenMatcher m(compile_json_schema_text("false"), v);
  for (uint32_t w : m.next_token_mask()) EXPECT_EQ(w, 0u);
  EXPECT_EQ(m.forced_bytes(), "");
}

}  // namespace
}  // namespace afm::guided
