// Word pieces of a model's tokenizer, for names that exercise every word start it knows.
//
// Why: a byte-level BPE tokenizer spells a word after a space with one token (" Abrahamsk" ->
// " Abraham" "sk") and the same word after a quote with others ("\"Abrahamsk" -> "\"" "Ab"
// "raham" "sk"). To copy a name from a text into a JSON string, a model must know how each
// space-led token is spelt without its space. The default model copied 24% of held-out
// fields whose first token never began a value in its training answers, 63% of those whose
// first token had begun 100 or more (docs/models.md). Names built from the tokenizer's own
// word starts cover them all, uniformly.
//
// Contract: `word_pieces_from_tokens` keeps, from a vocabulary given as raw token bytes,
//   - capitalised starts: tokens of one space, a capital, then 1-11 lower-case ASCII letters
//     (" Kow"), without the space: the first tokens of names; those of 4 or more letters that
//     the vocabulary also has in lower case (" Because" beside " because") are English words
//     and are left out;
//   - lower starts: one space then 2-12 lower-case ASCII letters (" mid"): the first tokens
//     of occupations and events ("midwife");
//   - continuations: tokens of 2-6 lower-case ASCII letters and nothing else ("way", "czyk").
// Each list is sorted and free of duplicates, so a seed picks the same words on every
// platform. Throws afm::Error(kInvalidArgument) when a list has fewer than 100 entries (not a
// byte-level BPE vocabulary of words).
#pragma once

#include <span>
#include <string>
#include <vector>

namespace afm::data::synth {

struct WordPieces {
  std::vector<std::string> capitalised_starts, lower_starts, continuations;
};

WordPieces word_pieces_from_tokens(std::span<const std::string> token_bytes);

class SynthRng;
// A word of at least 4 letters: a start of the asked case, then one continuation (more while
// shorter than 4): "Kowczyk", "Perway"; "midlet". Never a start alone, which is often an
// English word ("More", "South"): a model trained on such names took the first capitalised
// word of a text for a name. Never long chains: a model trained on start + 0-2 pieces learnt
// to glue pieces onto the names it copied (a city answered as the city + "know").
// Requires rng.word_pieces().
std::string spelled_word(SynthRng& rng, bool capitalised);

}  // namespace afm::data::synth
