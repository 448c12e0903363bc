// llama.cpp's own tokenizer test vectors (models/ggml-vocab-*.gguf with .inp/.out, shipped in
// the llama-cpp-python sdist, extracted by scripts/setup into .venv/llama-vocab): real GPT-2,
// Llama-3 and Qwen2 vocabularies loaded from GGUF must give llama.cpp's expected ids.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

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

std::vector<std::string> split_inputs(const std::string& text) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t pos; (pos = text.find(sep, start)) != std::string::npos; start = pos + sep.size()) {
    out.push_back(text.substr(start, pos - start));
  }
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
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, LlamaVocab,
                         ::testing::Values("gpt-2", "llama-bpe", "qwen2"));

}  // namespace
}  // namespace afm::tokenizer
