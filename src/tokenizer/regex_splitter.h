// Splits text into pre-tokens with a PCRE2 regex (Unicode classes, JIT-compiled), keeping both
// the matches and the gaps between them (HF's Split behaviour "Isolated"). `$` matches only at
// the very end of the text (PCRE2_DOLLAR_ENDONLY), as in std::regex, which llama.cpp uses.
//
// Contract: the constructor throws Error(kFormat) naming the pattern and the PCRE2 message when
// the pattern does not compile. split() is thread-safe (match data is per thread). Invalid
// UTF-8 in the input is split as well (never an error).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace afm::tokenizer {

class RegexSplitter {
 public:
  explicit RegexSplitter(const std::string& pattern);
  ~RegexSplitter();
  RegexSplitter(const RegexSplitter&) = delete;
  RegexSplitter& operator=(const RegexSplitter&) = delete;

  const std::string& pattern() const { return pattern_; }
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

 private:
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8
};

}  // namespace afm::tokenizer
