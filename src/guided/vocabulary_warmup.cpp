// Builds the loop indexes every JSON grammar uses; see vocabulary_warmup.h.
#include "guided/vocabulary_warmup.h"

#include <string_view>
#include <vector>

#include "guided/json_schema_compiler.h"
#include "guided/byte_matcher.h"
#include "guided/mask_cache.h"

namespace afm::guided {

namespace {

// Texts that end inside each kind of loop a JSON grammar has, for the schema `{}` (any JSON
// value): string content (keys and values share it), string content entered in the middle of
// each kind of multi-byte UTF-8 character (a byte-level token may end there), and the digit
// runs of numbers with the states that lead into them. Loop specs are canonical
// (mask_cache.cpp), so these serve every schema.
constexpr std::string_view kLoopContexts[] = {
    "\"a",    "{\"a",     "\"\xc3",    "\"\xe0", "\"\xe1", "\"\xed", "\"\xf0",
    "\"\xf1", "\"\xf4",   "1",         "-",       "-1",      "1.",      "1.5",
    "1e",      "1e+",      "1e5"};

}  // namespace

void prepare_json_loop_indexes(const std::shared_ptr<const TokenVocabulary>& vocabulary) {
  const std::shared_ptr<const Grammar> any_value = compile_json_schema_text("{}");
  std::vector<uint32_t> words(vocabulary->mask_words());
  for (std::string_view text : kLoopContexts) {
    // A private cache: the point is the vocabulary's loop indexes, not this grammar's states.
    MaskCache cache(*any_value, *vocabulary);
    ByteMatcher matcher(any_value);
    if (!matcher.accept_bytes(text)) continue;
    cache.fill(matcher, words);
  }
}

}  // namespace afm::guided
