// Per-vocabulary preparation for fast first masks.
//
// The mask layer (mask_cache.h) answers the long runs of JSON text, string content and digit
// runs, from loop indexes that the vocabulary builds on first use: one pass over every token,
// milliseconds at 150k tokens. Every JSON grammar has the same few of them, so paying for them
// inside the first request of each process (as a cold mask) is avoidable:
// prepare_json_loop_indexes() builds them up front, when the vocabulary is built, the way
// other engines preprocess a tokenizer once. Idempotent and thread-safe (the indexes are
// cached on the vocabulary); the cost is a few index builds, once per vocabulary.
#pragma once

#include <memory>

#include "guided/token_vocabulary.h"

namespace afm::guided {

void prepare_json_loop_indexes(const std::shared_ptr<const TokenVocabulary>& vocabulary);

}  // namespace afm::guided
