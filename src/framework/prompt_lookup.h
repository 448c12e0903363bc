// Prompt-lookup drafting: proposes what followed the most recent earlier occurrence of the
// context's longest recurring suffix. No model is run: it pays off where the output copies its
// input (extraction values, tool-call arguments, quoted text).
//
// Two granularities:
//   - tokens (prompt_lookup_next): the suffix is an n-gram of token ids;
//   - bytes (prompt_lookup_bytes): the suffix is a run of bytes, so a copy is found even when
//     the output spells it with other tokens than the input (`"Marta` is `"`+`M`+`arta` in a JSON
//     value and ` Marta` in the passage); the caller tokenizes the continuation.
//
// Thread safety: stateless; both are pure functions of their arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace afm {

// The token after the most recent earlier occurrence of the longest suffix of `context` of at
// most max_ngram tokens that occurs earlier; nullopt when no suffix of any length recurs.
// Cost: O(context.size() x max_ngram).
std::optional<int32_t> prompt_lookup_next(std::span<const int32_t> context, int max_ngram);

// The bytes (at most max_bytes) that followed the most recent earlier occurrence of the longest
// suffix of `text` that is min_match to max_match bytes long and occurs earlier; empty when no
// suffix of min_match bytes recurs. The continuation may run into the suffix itself (a
// repeating pattern continues). A view into `text`. Cost: O(text.size() x max_match).
std::string_view prompt_lookup_bytes(std::string_view text, size_t min_match, size_t max_match,
                                     size_t max_bytes);

}  // namespace afm
