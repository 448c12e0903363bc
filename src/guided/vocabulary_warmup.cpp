// Builds the loop indexes every JSON grammar uses; see vocabulary_warmup.h.
#include "guided/vocabulary_warmup.h"

#include <string_view>
#include <vector>

#include "guided/json_schema_compiler.h"
#include "guided/byte_matcher.h"
#include "guided/mask_cache.h"

namespace afm::guided {

namespace {

// Texts that end inside each kind of loop JSON grammars have. For the schema `{}` (any JSON
// value): string content (keys and values share it), string content entered in the middle of
// each kind of multi-byte UTF-8 character (a byte-level token may end there), and the digit
// runs of numbers with the states that lead into them. Arrays of integers and of numbers
// loop through their separators. Bounded strings and format atoms are counted loops. Loop specs are canonical (loop_finder.h), so these serve
// every schema.
struct Context {
  std::string_view schema;
  std::string_view text;
};
constexpr Context kLoopContexts[] = {
    {"{}", "\"a"},      {"{}", "{\"a"},   {"{}", "\"\xc3"}, {"{}", "\"\xe0"}, {"{}", "\"\xe1"},
    {"{}", "\"\xed"},   {"{}", "\"\xf0"}, {"{}", "\"\xf1"}, {"{}", "\"\xf4"}, {"{}", "1"},
    {"{}", "-"},        {"{}", "-1"},     {"{}", "1."},     {"{}", "1.5"},    {"{}", "1e"},
    {"{}", "1e+"},      {"{}", "1e5"},
    {R"({"type":"array","items":{"type":"integer"}})", "[1"},
    {R"({"type":"array","items":{"type":"integer"}})", "[1,"},
    {R"({"type":"array","items":{"type":"number"}})", "[1"},
    {R"({"type":"array","items":{"type":"number"}})", "[1,"},
    // Counted loops (counted_loop.h): bounded string content, and the atoms of the email and
    // host-name formats. A bound far from the position, so copy 0 and copy 1 are alike.
    {R"({"type":"string","maxLength":300})", "\"a"},
    {R"({"type":"string","format":"email"})", "\"a"},
    {R"({"type":"string","format":"email"})", "\"a@b"},
    {R"({"type":"string","format":"hostname"})", "\"a"},
};

}  // namespace

void prepare_json_loop_indexes(const std::shared_ptr<const TokenVocabulary>& vocabulary) {
  std::vector<uint32_t> words(vocabulary->mask_words());
  for (const Context& context : kLoopContexts) {
    const std::shared_ptr<const Grammar> grammar = compile_json_schema_text(context.schema);
    // A private cache: the point is the vocabulary's loop indexes, not this grammar's states.
    MaskCache cache(*grammar, *vocabulary);
    ByteMatcher matcher(grammar);
    if (!matcher.accept_bytes(context.text)) continue;
    cache.fill(matcher, words);
  }
}

}  // namespace afm::guided
