#include "framework/prompt_lookup.h"

#include <algorithm>

namespace afm {

std::optional<int32_t> prompt_lookup_next(std::span<const int32_t> context, int max_ngram) {
  const size_t len = context.size();
  if (len < 2 || max_ngram <= 0) return std::nullopt;
  const size_t longest = std::min<size_t>(static_cast<size_t>(max_ngram), len - 1);
  for (size_t n = longest; n >= 1; --n) {
    const std::span<const int32_t> suffix = context.last(n);
    // Occurrences start at i with i + n < len (a token must follow); the most recent first.
    for (size_t i = len - n; i-- > 0;) {
      if (std::equal(suffix.begin(), suffix.end(), context.begin() + static_cast<ptrdiff_t>(i))) {
        return context[i + n];
      }
    }
  }
  return std::nullopt;
}

}  // namespace afm
