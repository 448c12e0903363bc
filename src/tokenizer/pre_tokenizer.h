// A regex pre-tokenizer in one or more stages, as llama.cpp runs its regex lists and Hugging
// Face a Sequence of Split(Regex, Isolated): the first regex splits the text into matches and
// gaps, and each next regex splits every piece of the stage before (its lookarounds and
// anchors see only that piece). With one regex this is RegexSplitter.
//
// Contract: the constructor throws Error(kFormat) when a regex does not compile (naming it);
// split() is thread-safe and returns pieces that cover the text exactly, in order.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex_splitter.h"

namespace afm::tokenizer {

class PreTokenizer {
 public:
  explicit PreTokenizer(const std::vector<std::string>& regexes);

  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

 private:
  std::vector<std::unique_ptr<RegexSplitter>> stages_;
};

}  // namespace afm::tokenizer
