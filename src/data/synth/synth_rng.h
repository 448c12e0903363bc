// Random choices for the synthetic generators, on top of sample::Rng (xoshiro256**), using
// only integer arithmetic so that a seed gives the same documents on every platform.
//
// Thread safety: none; one SynthRng per document.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "sample/rng.h"

namespace afm::data::synth {

struct WordPieces;  // word_pieces.h

// What a generator may vary beyond the default stream (all 0: the documents the default model
// was pretrained on, unchanged).
struct SynthKnobs {
  // The share of person, city, company, occupation and event names the generators make up
  // from syllables instead of drawing from the word lists (lexicon.h, draw_*).
  int invented_names_percent = 0;
  // The share of arithmetic items that are bare two-number sums and differences worked
  // column by column (arithmetic.cpp) instead of word problems.
  int bare_arithmetic_percent = 0;
  // The share of extraction texts rephrased (extraction.cpp vary_text): a made-up label or
  // distractor sentence around the text, and person records as facts in shuffled order, so a
  // model learns to find fields by their role, not by their place in a few templates.
  int varied_phrasing_percent = 0;
  // The share of items drawn from the broader generator: invented names from a wider letter
  // inventory or spliced from two listed names, real-word labels around extraction texts, and
  // tool requests in more phrasings inside greetings and asides. The syllable names alone were
  // a small enough family that a model learned to make them up instead of copying them.
  int broad_variety_percent = 0;
  // The share of extraction schemas given bounds and lengths on their fields (minimum,
  // maximum, minLength, maxLength) that the answers satisfy: numbers in the schema a model
  // must not copy (one trained without them answered "age": 150 under "maximum": 150).
  int schema_constraints_percent = 0;
  // The share of bare sums and differences asked in wider phrasings (operands in either order,
  // short stories of two amounts) and answered by first restating the expression "a - b", so
  // the column steps copy digits from the line above instead of from the question (one
  // trained without it wrote "31 - 97" for "subtract 31 from 97" and misread digits).
  int restated_arithmetic_percent = 0;
  // The share of arithmetic questions and tool requests composed from the phrase grammar of
  // request_grammar.h (operation words with operands in either order, many date, currency and
  // unit spellings, cities inside many clauses) instead of a fixed sentence list: one trained
  // on the lists alone answered "add 41 to 90" with 41 - 90 and read "Check the sky over
  // Cardiff" as a city called "Checked".
  int wide_phrasing_percent = 0;
  // The share of extraction schemas that ask for a subset of the record's fields (at least
  // two) in shuffled order, half of them without field descriptions; the answer follows the
  // schema. A model trained on one field order learned to close a string with the token
  // '","' that leads to the next field it expects, and when a user's schema ends there the
  // guided decoder forbids that token and the string runs on ("Oslo is warmer by 16...").
  int schema_variation_percent = 0;
  // The share of invented names built from the word pieces of a model's tokenizer
  // (word_pieces.h: a word start, then continuations), so that every space-led token the
  // tokenizer has begins some copied value; `word_pieces` must then be set. A model trained
  // on syllable and list names alone copied held-out names whose first token it had never
  // copied 24% of the time.
  int spelled_names_percent = 0;
  std::shared_ptr<const WordPieces> word_pieces = nullptr;
};

class SynthRng {
 public:
  explicit SynthRng(uint64_t seed, SynthKnobs knobs = {}) : rng_(seed), knobs_(knobs) {}
  int invented_names_percent() const { return knobs_.invented_names_percent; }
  int bare_arithmetic_percent() const { return knobs_.bare_arithmetic_percent; }
  int varied_phrasing_percent() const { return knobs_.varied_phrasing_percent; }
  // One draw of the restated-arithmetic knob; no draw at all when it is 0 (the older streams).
  bool restated_arithmetic() {
    return knobs_.restated_arithmetic_percent > 0 && percent(knobs_.restated_arithmetic_percent);
  }
  // One draw of the wide-phrasing knob; no draw at all when it is 0 (the older streams).
  bool wide_phrasing() {
    return knobs_.wide_phrasing_percent > 0 && percent(knobs_.wide_phrasing_percent);
  }
  // One draw of the schema-variation knob; no draw at all when it is 0 (the older streams).
  bool schema_variation() {
    return knobs_.schema_variation_percent > 0 && percent(knobs_.schema_variation_percent);
  }
  // One draw of the broad-variety knob; no draw at all when it is 0 (the older streams).
  bool broad_variety() {
    return knobs_.broad_variety_percent > 0 && percent(knobs_.broad_variety_percent);
  }
  // One draw of the spelled-names knob; no draw at all when it is 0 (the older streams).
  bool spelled_name() {
    return knobs_.spelled_names_percent > 0 && percent(knobs_.spelled_names_percent);
  }
  const WordPieces* word_pieces() const { return knobs_.word_pieces.get(); }
  // Likewise for the schema-constraints knob.
  bool schema_constraints() {
    return knobs_.schema_constraints_percent > 0 && percent(knobs_.schema_constraints_percent);
  }

  // Uniform in [0, n), n > 0, without modulo bias (rejection of the short last interval).
  uint64_t below(uint64_t n) {
    AFM_CHECK(n > 0);
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do {
      r = rng_.next_u64();
    } while (r >= limit);
    return r % n;
  }

  // Uniform in [lo, hi] (inclusive), lo <= hi.
  int64_t range(int64_t lo, int64_t hi) {
    AFM_CHECK(lo <= hi);
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }

  // True with probability percent / 100.
  bool percent(int percent) { return static_cast<int>(below(100)) < percent; }

  template <typename T>
  const T& pick(std::span<const T> items) {
    AFM_CHECK(!items.empty());
    return items[below(items.size())];
  }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return pick(std::span<const T>(items));
  }

  // k distinct indices of [0, n) in random order (k <= n).
  std::vector<size_t> distinct(size_t n, size_t k) {
    AFM_CHECK(k <= n);
    std::vector<size_t> idx(n);
    for (size_t i = 0; i < n; ++i) idx[i] = i;
    for (size_t i = 0; i < k; ++i) std::swap(idx[i], idx[i + below(n - i)]);
    idx.resize(k);
    return idx;
  }

 private:
  sample::Rng rng_;
  SynthKnobs knobs_;
};

}  // namespace afm::data::synth
