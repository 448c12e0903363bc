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

namespace afm {

std::string_view prompt_lookup_bytes(std::string_view text, size_t min_match, size_t max_match,
                                     size_t max_bytes) {
  const size_t len = text.size();
  if (min_match == 0 || len <= min_match) return {};
  size_t best_len = 0, best_end = 0;
  // Candidate occurrences end at e < len (a byte must follow); the most recent wins ties.
  for (size_t e = len - 1; e >= min_match; --e) {
    size_t n = 0;
    while (n < max_match && n < e && text[e - 1 - n] == text[len - 1 - n]) ++n;
    if (n >= min_match && n > best_len) {
      best_len = n;
      best_end = e;
      if (n == max_match) break;
    }
  }
  if (best_len == 0) return {};
  return text.substr(best_end, std::min(max_bytes, len - best_end));
}

}  // namespace afm
