#include "data/synth/word_pieces.h"

#include <algorithm>

#include "base/error.h"
#include "data/synth/synth_rng.h"

namespace afm::data::synth {
namespace {

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

// "per" or "Kow": a capital is allowed first only; digits, marks and capitals inside are not
// name material.
bool is_word_start(std::string_view letters) {
  if (letters.size() < 2 || letters.size() > 12) return false;
  if (!is_lower(letters[0]) && !is_upper(letters[0])) return false;
  return std::all_of(letters.begin() + 1, letters.end(), is_lower);
}

// A capitalised start of 4 or more letters that the vocabulary also has in lower case is an
// English word at the start of a sentence ("Because", "Having", "Thus"), not a piece of a
// name: a model trained on names begun by them took the capitalised word opening a text for
// a name (answering "Thavings" for a text that opened with "Having"). Short pieces ("Ber",
// "Al") stay: names begin with them.
void drop_english_words(std::vector<std::string>& capitalised,
                        const std::vector<std::string>& lower) {
  std::erase_if(capitalised, [&](const std::string& word) {
    if (word.size() < 4) return false;
    std::string folded = word;
    folded[0] = static_cast<char>(folded[0] - 'A' + 'a');
    return std::binary_search(lower.begin(), lower.end(), folded);
  });
}

void require_entries(const std::vector<std::string>& list, const char* what) {
  if (list.size() >= 100) return;
  throw Error(ErrorCode::kInvalidArgument,
              "the tokenizer has " + std::to_string(list.size()) + " " + what +
                  " (need 100): not a byte-level BPE vocabulary of words");
}

bool is_continuation(std::string_view piece) {
  return piece.size() >= 2 && piece.size() <= 6 && std::all_of(piece.begin(), piece.end(), is_lower);
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

WordPieces word_pieces_from_tokens(std::span<const std::string> token_bytes) {
  WordPieces pieces;
  for (const std::string& t : token_bytes) {
    if (!t.empty() && t[0] == ' ' && is_word_start(std::string_view(t).substr(1))) {
      (is_upper(t[1]) ? pieces.capitalised_starts : pieces.lower_starts).push_back(t.substr(1));
    } else if (is_continuation(t)) {
      pieces.continuations.push_back(t);
    }
  }
  sort_unique(pieces.lower_starts);
  drop_english_words(pieces.capitalised_starts, pieces.lower_starts);
  sort_unique(pieces.capitalised_starts);
  sort_unique(pieces.continuations);
  require_entries(pieces.capitalised_starts, "capitalised word starts");
  require_entries(pieces.lower_starts, "lower-case word starts");
  require_entries(pieces.continuations, "word continuations");
  return pieces;
}

std::string spelled_word(SynthRng& rng, bool capitalised) {
  const WordPieces* pieces = rng.word_pieces();
  AFM_CHECK(pieces != nullptr);
  std::string w = rng.pick(capitalised ? pieces->capitalised_starts : pieces->lower_starts);
  do {
    w += rng.pick(pieces->continuations);
  } while (w.size() < 4);
  return w;
}

}  // namespace afm::data::synth
