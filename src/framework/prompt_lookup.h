// Prompt-lookup drafting: proposes the token that followed the most recent earlier occurrence
// of the context's longest suffix n-gram (n from max_ngram down to 1). No model is run: it pays
// off where the output copies its input (extraction values, tool-call arguments, quoted text).
//
// Thread safety: stateless; next() is a pure function of its arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace afm {

// The token after the most recent earlier occurrence of the longest suffix of `context` of at
// most max_ngram tokens that occurs earlier; nullopt when no suffix of any length recurs.
// Cost: O(context.size() x max_ngram).
std::optional<int32_t> prompt_lookup_next(std::span<const int32_t> context, int max_ngram);

}  // namespace afm
