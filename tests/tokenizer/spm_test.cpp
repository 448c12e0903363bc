// SentencePiece by scores (src/tokenizer/spm.h) on a hand-made vocabulary, directly and through
// Tokenizer (space prefix, "▁", added tokens, decoding) and GGUF tokenizer.ggml.model "llama".
#include "tokenizer/spm.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "tokenizer/tokenizer.h"

namespace afm::tokenizer {
namespace {

// id: text (score). Types as llama.cpp writes them: 0 unknown, 1-2 control, 3-4 byte,
// 13 user-defined, the rest normal.
const std::vector<std::pair<std::string, float>> kVocab = {
    {"<unk>", 0},   {"<s>", 0}, {"</s>", 0},     {"<0xC3>", 0}, {"<0xA9>", 0},
    {"\u2581", -5}, {"a", -6},  {"b", -6},       {"c", -6},     {"ab", -2},
    {"bc", -1},     {"aa", -3}, {"\u2581a", -4}, {"<u>", 0},
};
const std::vector<int32_t> kTypes = {2, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 4};

VocabSpec tiny_spec() {
  VocabSpec spec;
  spec.kind = ModelKind::kSentencePiece;
  for (const auto& [text, score] : kVocab) {
    spec.tokens.push_back(text);
    spec.scores.push_back(score);
  }
  spec.added = {{0, "<unk>", true}, {1, "<s>", true}, {2, "</s>", true}, {13, "<u>", false}};
  spec.unk_id = 0;
  spec.bos_id = 1;
  spec.eos_id = 2;
  spec.byte_fallback = true;
  spec.add_prefix_space = true;
  return spec;
}

std::vector<int32_t> model_encode(std::string_view text) {
  SpmModel m(tiny_spec());
  std::vector<int32_t> out;
  m.encode(text, out);
  return out;
}

TEST(SpmModel, JoinsTheHighestScoringPairFirst) {
  EXPECT_EQ(model_encode("abc"), (std::vector<int32_t>{6, 10}));  // bc (-1) beats ab (-2)
  EXPECT_EQ(model_encode("aab"), (std::vector<int32_t>{6, 9}));   // ab (-2) beats aa (-3)
  EXPECT_EQ(model_encode("ab"), (std::vector<int32_t>{9}));
  EXPECT_TRUE(model_encode("").empty());
}

TEST(SpmModel, EqualScoresJoinLeftmostFirst) {
  EXPECT_EQ(model_encode("aaa"), (std::vector<int32_t>{11, 6}));
  EXPECT_EQ(model_encode("aaaaa"), (std::vector<int32_t>{11, 11, 6}));
}

TEST(SpmModel, CharactersOutsideTheVocabularyBecomeBytes) {
  EXPECT_EQ(model_encode("\xc3\xa9"), (std::vector<int32_t>{3, 4}));      // é: <0xC3><0xA9>
  EXPECT_EQ(model_encode("a\xc3\xbc"), (std::vector<int32_t>{6, 3, 0}));  // ü: no <0xBC>
  EXPECT_EQ(model_encode("\xc3\xa9"
                         "b"),
            (std::vector<int32_t>{3, 4, 7}));  // no join across
}

TEST(SpmModel, SpecialTokenTextsAreCandidatesToo) {
  // llama.cpp looks every token text up, whatever its type; here no pair leads to "<s>".
  EXPECT_EQ(model_encode("<s>"), (std::vector<int32_t>{0, 0, 0}));
}

TEST(SpmTokenizer, PrefixesEverySegmentAndEscapesSpaces) {
  Tokenizer t(tiny_spec());
  EXPECT_EQ(t.encode("a b"), (std::vector<int32_t>{12, 5, 7}));  // "▁a▁b"
  EXPECT_EQ(t.encode(" a"), (std::vector<int32_t>{5, 12}));      // "▁▁a"
  EXPECT_EQ(t.encode("a", {.add_bos = true}), (std::vector<int32_t>{1, 12}));
  // User-defined tokens split the text even without parse_special; each segment gets "▁".
  EXPECT_EQ(t.encode("ab<u>b", {.parse_special = false}), (std::vector<int32_t>{5, 9, 13, 5, 7}));
  // Control tokens only with parse_special.
  EXPECT_EQ(t.encode("<s>a"), (std::vector<int32_t>{1, 12}));
  EXPECT_EQ(t.encode("<s>a", {.parse_special = false}), (std::vector<int32_t>{5, 0, 0, 0, 6}));
  EXPECT_TRUE(t.encode("").empty());
}

TEST(SpmTokenizer, DecodesSpacesAndBytesAndDropsThePrefix) {
  Tokenizer t(tiny_spec());
  for (const char* text : {"a b\xc3\xa9", "ab c", "aaa  b", "b"}) {
    EXPECT_EQ(t.decode(t.encode(text)), text) << text;
  }
  std::vector<int32_t> ids = {12, 5, 7, 3, 4};
  EXPECT_EQ(t.decode(ids), "a b\xc3\xa9");
  EXPECT_EQ(t.token_bytes(12), " a");
  EXPECT_EQ(t.token_bytes(3), "\xc3");
  // As llama.cpp: only the first token loses its space; after BOS the space stays.
  std::vector<int32_t> with_bos = {1, 12};
  EXPECT_EQ(t.decode(with_bos), "<s> a");
  EXPECT_EQ(t.decode(with_bos, /*skip_special=*/true), " a");
  // Streaming keeps every space (the caller knows where the text starts).
  IncrementalDecoder dec(t);
  std::string streamed;
  for (int32_t id : ids) streamed += dec.push(id);
  EXPECT_EQ(streamed + dec.flush(), " a b\xc3\xa9");
}

TEST(SpmTokenizer, LoadsFromGgufLlamaModel) {
  auto path = std::filesystem::temp_directory_path() /
              ("afm_spm_test_" + std::to_string(::getpid()) + ".gguf");
  std::vector<std::string> tokens;
  std::vector<float> scores;
  for (const auto& [text, score] : kVocab) {
    tokens.push_back(text);
    scores.push_back(score);
  }
  gguf::Writer w;
  w.set("tokenizer.ggml.model", gguf::Value(std::string("llama")));
  w.set("tokenizer.ggml.pre", gguf::Value(std::string("default")));
  w.set("tokenizer.ggml.tokens", gguf::Value::string_array(tokens));
  w.set("tokenizer.ggml.scores", gguf::Value::array_of(gguf::ValueType::kFloat32, scores));
  w.set("tokenizer.ggml.token_type", gguf::Value::array_of(gguf::ValueType::kInt32, kTypes));
  w.set("tokenizer.ggml.unknown_token_id", gguf::Value(uint32_t{0}));
  w.set("tokenizer.ggml.bos_token_id", gguf::Value(uint32_t{1}));
  w.write(path.string());
  {
    gguf::File f = gguf::File::open(path.string());
    Tokenizer t = Tokenizer::from_gguf(f);
    EXPECT_EQ(t.spec().kind, ModelKind::kSentencePiece);
    EXPECT_EQ(t.encode("a b\xc3\xa9 <u>"), (std::vector<int32_t>{12, 5, 7, 3, 4, 5, 13}));
    EXPECT_TRUE(t.is_special(1));
    EXPECT_FALSE(t.is_special(13));
    EXPECT_EQ(t.decode(t.encode("ab c")), "ab c");
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace afm::tokenizer
