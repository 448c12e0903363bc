#include "tokenizer/pre_tokenizer.h"

namespace afm::tokenizer {

PreTokenizer::PreTokenizer(const std::vector<std::string>& regexes) {
  for (const std::string& r : regexes) stages_.push_back(std::make_unique<RegexSplitter>(r));
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  if (stages_.empty()) {
    if (!text.empty()) pieces.push_back(text);
    return;
  }
  size_t first = pieces.size();
  stages_[0]->split(text, pieces);
  std::vector<std::string_view> current, next;
  for (size_t s = 1; s < stages_.size(); ++s) {
    current.assign(pieces.begin() + static_cast<long>(first), pieces.end());
    next.clear();
    for (std::string_view piece : current) stages_[s]->split(piece, next);
    pieces.resize(first);
    pieces.insert(pieces.end(), next.begin(), next.end());
  }
}

}  // namespace afm::tokenizer
