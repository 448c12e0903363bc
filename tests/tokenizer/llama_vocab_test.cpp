// llama.cpp's own tokenizer test vectors (models/ggml-vocab-*.gguf with .inp/.out, shipped in
// the llama-cpp-python sdist, extracted by scripts/setup into .venv/llama-vocab): real
// byte-level BPE (GPT-2, Llama-3, Qwen2/3.5, DeepSeek, Falcon, MPT, StarCoder, Refact,
// Command-R), SentencePiece (Llama-2, Phi-3) and Gemma 4 vocabularies loaded from GGUF must give
// llama.cpp's expected ids, and decode them back to the text. docs/tokenizer.md lists them.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "base/error.h"
#include "base/mapped_file.h"
#include "gguf/reader.h"
#include "tokenizer/tokenizer.h"

namespace afm::tokenizer {
namespace {

namespace fs = std::filesystem;

fs::path vocab_dir() {
  const char* env = std::getenv("AFM_LLAMA_VOCAB_DIR");
  return env != nullptr ? fs::path(env) : fs::path(".venv/llama-vocab");
}

// "llama-spm" -> "llama_spm": gtest parameter names allow only letters, digits and '_'.
std::string param_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

std::vector<std::string> split_inputs(const std::string& text) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t pos; (pos = text.find(sep, start)) != std::string::npos; start = pos + sep.size()) {
    out.push_back(text.substr(start, pos - start));
  }
  // As llama.cpp's test-tokenizer-0 reads it: text after the last separator is one more case
  // (gemma-4's file ends without a separator).
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

std::vector<std::vector<int32_t>> read_outputs(const std::string& text) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream ids(line);
    std::vector<int32_t> v;
    for (int32_t id; ids >> id;) v.push_back(id);
    out.push_back(v);
  }
  return out;
}

class LlamaVocab : public ::testing::TestWithParam<const char*> {};

TEST_P(LlamaVocab, MatchesLlamaCppExpectedIds) {
  fs::path gguf_path = vocab_dir() / (std::string("ggml-vocab-") + GetParam() + ".gguf");
  if (!fs::exists(gguf_path)) {
    GTEST_SKIP() << gguf_path
                 << " absent (scripts/setup extracts it from the llama-cpp-python sdist)";
  }
  gguf::File file = gguf::File::open(gguf_path.string());
  Tokenizer tok = Tokenizer::from_gguf(file);
  std::vector<std::string> inputs = split_inputs(read_file_to_string(gguf_path.string() + ".inp"));
  std::vector<std::vector<int32_t>> expected =
      read_outputs(read_file_to_string(gguf_path.string() + ".out"));
  ASSERT_EQ(inputs.size(), expected.size());
  ASSERT_GT(inputs.size(), 10u);
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(tok.encode(inputs[i], {.parse_special = false}), expected[i])
        << "input: '" << inputs[i] << "'";
    // Every vocabulary here can spell any text (byte tokens), so decoding gives it back.
    EXPECT_EQ(tok.decode(expected[i]), inputs[i]) << "decoding the ids of '" << inputs[i] << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, LlamaVocab,
                         ::testing::Values("command-r", "deepseek-coder", "deepseek-llm", "falcon",
                                           "gemma-4", "gpt-2", "llama-bpe", "llama-spm", "mpt",
                                           "phi-3", "qwen2", "qwen35", "refact", "starcoder"),
                         param_name);

// Files without test pairs: they must load, and text must survive a round trip.
class LlamaVocabLoads : public ::testing::TestWithParam<const char*> {};

TEST_P(LlamaVocabLoads, RoundTripsText) {
  fs::path gguf_path = vocab_dir() / (std::string("ggml-vocab-") + GetParam() + ".gguf");
  if (!fs::exists(gguf_path)) GTEST_SKIP() << gguf_path << " absent";
  gguf::File file = gguf::File::open(gguf_path.string());
  Tokenizer tok = Tokenizer::from_gguf(file);
  for (const char* text :
       {"Hello world", " leading space\n\n\ttabs", "3.14 + 42 = x^2",
        "Grüß Gott, ça va? Привет 你好 🙂", "def f(x):\n    return x"}) {
    std::vector<int32_t> ids = tok.encode(text, {.parse_special = false});
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(tok.decode(ids), text);
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, LlamaVocabLoads,
                         ::testing::Values("aquila", "baichuan", "gpt-neox"), param_name);

// Tokenizer kinds afm does not implement are a typed error naming the model.
class LlamaVocabUnsupported : public ::testing::TestWithParam<const char*> {};

TEST_P(LlamaVocabUnsupported, IsATypedError) {
  fs::path gguf_path = vocab_dir() / (std::string("ggml-vocab-") + GetParam() + ".gguf");
  if (!fs::exists(gguf_path)) GTEST_SKIP() << gguf_path << " absent";
  gguf::File file = gguf::File::open(gguf_path.string());
  try {
    Tokenizer::from_gguf(file);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.model"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, LlamaVocabUnsupported,
                         ::testing::Values("bert-bge", "nomic-bert-moe"), param_name);

}  // namespace
}  // namespace afm::tokenizer
