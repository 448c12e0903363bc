#include "tokenizer/vocab_spec.h"

#include "base/error.h"

namespace afm::tokenizer {

namespace {

// GPT-2's ByteLevel regex, as Hugging Face writes it. llama.cpp leaves out the final `\s+`;
// that changes no split, as the whitespace it would match is a gap kept as a piece anyway.
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// DeepSeek-LLM's cased letters (Latin, Greek, Cyrillic, Armenian, Georgian, Cherokee, ...),
// spelled as code-point ranges.
constexpr const char* kDeepseekLetters =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})"
    R"(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})"
    R"(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})"
    R"(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
    R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})"
    R"(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D})"
    R"(\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3})"
    R"(\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107})"
    R"(\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D})"
    R"(\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184})"
    R"(\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D})"
    R"(\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF})"
    R"(\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F})"
    R"(\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2})"
    R"(\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)";

// CJK ideographs (U+4E00-U+9FA5), everything from U+0800 to U+4E00, and Hangul syllables.
constexpr const char* kDeepseekCjk = R"([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";

}  // namespace

const std::vector<PreTokenizerName>& known_pre_tokenizers() {
  // The first three round-trip through tokenizer.json (their regex is HF's Split regex); the
  // others are llama.cpp names read from GGUF (llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_*).
  static const std::vector<PreTokenizerName> kNames = {
      {"gpt-2", {kGpt2}, false, true},
      {"llama-bpe",
       {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
       true,
       true},
      {"qwen2",
       {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
       false,
       true},
      // Qwen3.5: marks (\p{M}) join letters.
      {"qwen35",
       {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
      {"mpt", {kGpt2}},
      // Single digits first, then GPT-2's regex.
      {"starcoder", {R"(\p{N})", kGpt2}},
      {"refact", {R"(\p{N})", kGpt2}},
      {"command-r", {R"(\p{N})", kGpt2}},
      // Runs of punctuation first, then GPT-2's regex, then ASCII digits in threes.
      {"falcon", {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, R"([0-9][0-9][0-9])"}},
      {"deepseek-llm",
       {R"([\r\n])", kDeepseekLetters,
        R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)",
        R"(\s+$)", kDeepseekCjk, R"(\p{N}+)"}},
      {"deepseek-coder", {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepseekCjk, R"(\p{N})"}},
      // What llama.cpp uses for a BPE vocabulary without tokenizer.ggml.pre (or "default").
      {"default", {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", R"([0-9][0-9][0-9])"}},
  };
  return kNames;
}

const PreTokenizerName& pre_tokenizer_for_name(const std::string& name) {
  std::string names;
  for (const PreTokenizerName& p : known_pre_tokenizers()) {
    if (name == p.name) return p;
    names += names.empty() ? "" : ", ";
    names += p.name;
  }
  throw_error(ErrorCode::kUnsupported,
              "tokenizer.ggml.pre '" + name + "' is not supported (" + names + ")");
}

std::string pre_regex_for_name(const std::string& name) {
  const PreTokenizerName& p = pre_tokenizer_for_name(name);
  if (p.regexes.size() != 1) {
    throw_error(ErrorCode::kUnsupported,
                "pre-tokenizer '" + name + "' splits in several stages, not by one regex");
  }
  return p.regexes[0];
}

std::string pre_name_for_regex(const std::string& regex) {
  for (const PreTokenizerName& p : known_pre_tokenizers()) {
    if (p.from_json && regex == p.regexes[0]) return p.name;
  }
  throw_error(ErrorCode::kUnsupported, "pre-tokenizer regex /" + regex +
                                           "/ is not one afm and llama.cpp both know "
                                           "(GPT-2, Llama-3, Qwen2)");
}

}  // namespace afm::tokenizer
