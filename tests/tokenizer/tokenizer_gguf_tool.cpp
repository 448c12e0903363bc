// Test-only: writes a GGUF holding only a tokenizer (tokenizer.* keys from tokenizer.json and
// tokenizer_config.json), so parity_test.py can check the GGUF route against HF.
//   tokenizer_gguf_tool TOKENIZER_DIR OUT.gguf
#include <cstdio>
#include <filesystem>

#include "base/mapped_file.h"
#include "gguf/writer.h"
#include "tokenizer/gguf_export.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tokenizer_gguf_tool TOKENIZER_DIR OUT.gguf\n");
    return 2;
  }
  try {
    std::filesystem::path dir(argv[1]);
    std::filesystem::path config = dir / "tokenizer_config.json";
    afm::gguf::Writer w;
    w.set("general.architecture", afm::gguf::Value("llama"));
    afm::tokenizer::add_gguf_tokenizer_metadata(
        afm::read_file_to_string((dir / "tokenizer.json").string()),
        std::filesystem::exists(config) ? afm::read_file_to_string(config.string()) : "", w);
    w.write(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenizer_gguf_tool: %s\n", e.what());
    return 1;
  }
  return 0;
}
