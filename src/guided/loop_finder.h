// Loop detection for the mask layer (mask_cache.h): which nearby parse states form a loop the
// vocabulary can index (TokenVocabulary::loop_index), seen from one start state.
//
// Input: the start state and a way to get a state's successor row (state id per byte, kNoState
// where rejected; rows are computed lazily, so the finder asks for them by state id and the
// bytes that lead there from the start).
// Output (a FoundLoop):
//  - spec: the loop in canonical form. The neighbourhood is explored from the state most of
//    the start's bytes lead to (the start itself inside string content, plain content after
//    the first letter of a key, the digit loop after a value's start), so a start that is not
//    on the loop costs no rows of its own neighbourhood. Explored states on a cycle are the
//    members; members that behave identically (same byte -> same outside state, or ->
//    equivalent members) are merged, and the classes are numbered breadth-first from the entry
//    class. Canonical specs make one index serve a loop wherever it occurs: every JSON string
//    content, every digit run, in any schema and context.
//  - entry: the class the start state is answered as. The start state itself when it is a
//    member; otherwise the class of that most-taken successor (the first character of an
//    object key, constrained by the declared names, then continues as plain string content).
//    entry_bytes are the bytes on which the start state goes exactly where the entry class
//    goes and stays in the loop: tokens starting with them are answered by the index; all
//    others are the caller's to walk from the start state.
//  - states/paths: a representative state per class and the bytes leading to it from the
//    start (to rebuild its chart when its row is needed).
// Correctness does not depend on which loop is found: members accept exactly the byte strings
// their rows say, so the index's answers for entry_bytes are exact whatever the choice.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "guided/grammar.h"
#include "guided/token_vocabulary.h"

namespace afm::guided {

using StateRow = std::array<int32_t, 256>;
inline constexpr int32_t kNoState = -1;

struct FoundLoop {
  TokenVocabulary::LoopSpec spec;
  std::array<int32_t, TokenVocabulary::kMaxLoopStates> states{};
  std::array<std::string, TokenVocabulary::kMaxLoopStates> paths;
  ByteSet entry_bytes;
};

// `row_of(state, path, min_allowed)`: the row of an explored state (`path`: the bytes from the
// start to it), or null when it allows fewer than `min_allowed` bytes (narrow states are never
// expanded, so their successors need not be computed). Rows stay valid during the call.
// Returns false when no loop worth indexing (at least kMinLoopBytes entry bytes) is near.
using RowLookup =
    std::function<const StateRow*(int32_t state, const std::string& path, int min_allowed)>;
bool find_loop(int32_t start, const RowLookup& row_of, FoundLoop* out);

// The state most of the row's allowed bytes lead to (the first of equal counts, in byte
// order), and the lowest byte leading there; kNoState when the row allows nothing.
std::pair<int32_t, uint8_t> dominant_successor(const StateRow& row);

// Below this many entry bytes a loop is not worth its setup.
inline constexpr int kMinLoopBytes = 8;

}  // namespace afm::guided
