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

bool is_continuation(std::string_view piece) {
  return piece.size() >= 2 && piece.size() <= 6 && std::all_of(piece.begin(), piece.end(), is_lower);
}

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::string capitalised(std::string w) {
  if (!w.empty() && is_lower(w[0])) w[0] = static_cast<char>(w[0] - 'a' + 'A');
  return w;
}

}  // namespace

WordPieces word_pieces_from_tokens(std::span<const std::string> token_bytes) {
  WordPieces pieces;
  for (const std::string& t : token_bytes) {
    if (!t.empty() && t[0] == ' ' && is_word_start(std::string_view(t).substr(1))) {
      pieces.starts.push_back(t.substr(1));
    } else if (is_continuation(t)) {
      pieces.continuations.push_back(t);
    }
  }
  sort_unique(pieces.starts);
  sort_unique(pieces.continuations);
  if (pieces.starts.size() < 100 || pieces.continuations.size() < 100) {
    throw Error(ErrorCode::kInvalidArgument,
                "the tokenizer has " + std::to_string(pieces.starts.size()) + " word starts and " +
                    std::to_string(pieces.continuations.size()) +
                    " word continuations (need 100 of each): not a byte-level BPE vocabulary "
                    "of words");
  }
  return pieces;
}

std::string spelled_word(SynthRng& rng) {
  const WordPieces* pieces = rng.word_pieces();
  AFM_CHECK(pieces != nullptr);
  std::string w = rng.pick(pieces->starts);
  const int64_t count = rng.range(0, 2);
  for (int64_t i = 0; i < count || w.size() < 4; ++i) w += rng.pick(pieces->continuations);
  return capitalised(w);
}

}  // namespace afm::data::synth
