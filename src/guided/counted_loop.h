// Counted loops for the mask layer (mask_cache.h): a bounded repetition seen from a state
// inside it, such as the content of a string with `maxLength` or an atom of `format: email`.
//
// Why: inside `x{0,64}` every position is its own parse state (the copies left are part of the
// Earley chart), so no state lies on a cycle and the loop index (loop_finder.h) never applies:
// each position cost a walk of the whole vocabulary trie. Seen from the rows, though, the
// states of one copy behave exactly like those of the next one, except that the transitions
// that start a new copy lead one copy further, until a copy where every such transition is
// rejected (the bound). A token then depends only on how many copies it needs.
//
// find_counted_loop(start): takes the start state as copy 0 of a loop, and the state most of
// its bytes lead to as copy 1 of the same loop state. The states of copy 0 are explored beside
// those of copy 1 (pairs: a byte leads either to the same state from both, an "out" byte of the
// loop, or to the next copy, or to another state of the same copy). Output: a LoopSpec whose
// transitions into the next copy carry kCount, the states of copy 0 (with the bytes leading to
// them), the copy-1 states, and per loop state and out byte the state it leads to.
//
// check_counted_copies(): follows the loop through copies 1, 2, ..., checking every state of
// each copy against the spec (out bytes to the same states as in copy 0, loop bytes to the
// same loop states of this copy or the next), up to a limit or a copy that behaves otherwise:
//  - a copy that rejects every loop byte (the bound, kEnds, with its copy number e): tokens
//    whose last loop byte lies in copy e or later are not allowed, the others exactly as
//    indexed;
//  - else, when at least `enough` copies conform, every token the index holds reads its loop
//    bytes and its out byte within them, so the index's answers are exact as they are (kExact);
//  - anything else (kUnknown): the caller walks the trie as without the loop.
// It also returns the first state of every copy it saw: a later position in the same loop is
// such a state, and its copies are the rest of these (the mask layer keeps the verdict).
// Correctness rests on the checks alone, not on how the loop was guessed.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "guided/loop_finder.h"

namespace afm::guided {

struct CountedLoop {
  static constexpr size_t kMaxStates = TokenVocabulary::kMaxLoopStates;
  TokenVocabulary::LoopSpec spec;
  // Copy 0 (the start's) and copy 1, per loop state (kNoState where a copy lacks it), and the
  // bytes leading to each from the start.
  std::array<int32_t, kMaxStates> states{};
  std::array<std::string, kMaxStates> paths;
  std::array<int32_t, kMaxStates> next_states{};
  std::array<std::string, kMaxStates> next_paths;
  // Per loop state and out byte: the state it leads to in every copy (kNoState: rejected).
  std::array<StateRow, kMaxStates> out_targets{};
  ByteSet entry_bytes;  // the start's loop bytes (tokens starting with them use the index)
};

// See the file comment. False when the start is not the first copy of a counted loop worth
// indexing (at least kMinLoopBytes loop bytes, one of them starting the next copy).
bool find_counted_loop(int32_t start, const RowLookup& row_of, CountedLoop* out);

struct CountedCopies {
  enum Kind { kExact, kEnds, kUnknown } kind = kUnknown;
  uint32_t ends_at = 0;     // kEnds: the copy that rejects every loop byte
  // Copies [0, conforming) were checked and conform; UINT32_MAX when a conforming copy leads
  // to no further copy (every later copy conforms vacuously).
  uint32_t conforming = 0;
  // Per copy in [0, conforming], the state of loop state 0 (kNoState where the copy has none).
  std::vector<int32_t> first_states;
};

// See the file comment: checks copies 1, 2, ... below `limit` (at least `enough`), stopping
// at the bound or at a copy that does not conform. Reads one row at a time: `row_of` may
// reuse one row for every call.
CountedCopies check_counted_copies(const CountedLoop& loop, const RowLookup& row_of,
                                   uint32_t enough, uint32_t limit);

}  // namespace afm::guided
