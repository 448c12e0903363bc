// Counted loops: discovery from two copies, and the check of later copies; see counted_loop.h.
#include "guided/counted_loop.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace afm::guided {

namespace {

using LoopSpec = TokenVocabulary::LoopSpec;
constexpr size_t kMaxStates = CountedLoop::kMaxStates;
using CopyStates = std::array<int32_t, kMaxStates>;
using CopyPaths = std::array<std::string, kMaxStates>;

int index_in(const CopyStates& states, size_t n, int32_t s) {
  for (size_t i = 0; i < n; ++i) {
    if (states[i] == s) return static_cast<int>(i);
  }
  return -1;
}

// A row, or every byte rejected where the state allows none (row_of answers null).
int32_t at(const StateRow* row, size_t b) { return row == nullptr ? kNoState : (*row)[b]; }

}  // namespace

bool find_counted_loop(int32_t start, const RowLookup& row_of, CountedLoop* out) {
  const StateRow* start_row = row_of(start, std::string(), kMinLoopBytes);
  if (start_row == nullptr) return false;
  const auto [first_next, via] = dominant_successor(*start_row);
  if (first_next == kNoState || first_next == start) return false;
  CountedLoop& l = *out;
  l.spec = LoopSpec();
  l.states.fill(kNoState);
  l.next_states.fill(kNoState);
  l.states[0] = start;
  l.paths[0].clear();
  l.next_states[0] = first_next;
  l.next_paths[0].assign(1, static_cast<char>(via));
  size_t n = 1;
  bool starts_copies = false;
  for (size_t i = 0; i < n; ++i) {
    const StateRow* row = i == 0 ? start_row : row_of(l.states[i], l.paths[i], 1);
    const bool has_twin = l.next_states[i] != kNoState;
    const StateRow* twin = has_twin ? row_of(l.next_states[i], l.next_paths[i], 1) : nullptr;
    std::array<uint8_t, 256>& next = l.spec.next[i];
    for (size_t b = 0; b < 256; ++b) {
      const int32_t t = at(row, b);
      const int32_t u = at(twin, b);
      next[b] = LoopSpec::kOut;
      l.out_targets[i][b] = kNoState;
      if (t == kNoState) {
        if (has_twin && u != kNoState) return false;  // copy 1 takes a byte copy 0 rejects
        continue;
      }
      if (has_twin && t == u) {  // the same state from both copies: out of the loop
        l.out_targets[i][b] = t;
        continue;
      }
      if (const int k = index_in(l.next_states, n, t); k >= 0) {  // into the next copy
        next[b] = static_cast<uint8_t>(k) | LoopSpec::kCount;
        starts_copies = true;
        continue;
      }
      if (const int k = index_in(l.states, n, t); k >= 0) {  // within this copy
        if (has_twin && l.next_states[static_cast<size_t>(k)] != u) return false;
        next[b] = static_cast<uint8_t>(k);
        continue;
      }
      if (!has_twin) {  // no twin to tell: taken as out, which later copies check
        l.out_targets[i][b] = t;
        continue;
      }
      if (n == kMaxStates) return false;
      l.states[n] = t;
      l.paths[n] = l.paths[i] + static_cast<char>(b);
      l.next_states[n] = u;
      l.next_paths[n] = l.next_paths[i] + static_cast<char>(b);
      next[b] = static_cast<uint8_t>(n);
      ++n;
    }
  }
  l.spec.num_states = static_cast<uint32_t>(n);
  for (size_t q = n; q < kMaxStates; ++q) l.spec.next[q].fill(0);  // as LoopSpec equality expects
  l.entry_bytes = ByteSet();
  for (size_t b = 0; b < 256; ++b) {
    if (l.spec.next[0][b] != LoopSpec::kOut) l.entry_bytes.set(static_cast<uint8_t>(b));
  }
  return starts_copies && l.entry_bytes.count() >= kMinLoopBytes;
}

namespace {

// The states of one copy per loop state (kNoState where the copy has none), and the bytes
// leading to each from the start.
struct Copy {
  CopyStates states;
  CopyPaths paths;
};

struct CopyCheck {
  bool conforms = true;   // every transition as the spec says (loop bytes not rejected)
  bool any_loop_byte = false;
};

// Checks copy `cur` against the spec, filling in its states that transitions within the copy
// reach and writing the next copy's states to `next` (all kNoState on entry). False when a
// transition leads elsewhere than the spec says (a rejected loop byte only clears conforms).
bool check_copy(const CountedLoop& l, const RowLookup& row_of, Copy& cur, Copy* next,
                CopyCheck* result) {
  const uint32_t n = l.spec.num_states;
  std::array<bool, kMaxStates> done{};
  for (bool progress = true; progress;) {
    progress = false;
    for (uint32_t q = 0; q < n; ++q) {
      if (cur.states[q] == kNoState || done[q]) continue;
      done[q] = true;
      progress = true;
      const StateRow* row = row_of(cur.states[q], cur.paths[q], 1);
      for (size_t b = 0; b < 256; ++b) {
        const uint8_t v = l.spec.next[q][b];
        const int32_t t = at(row, b);
        if (v == LoopSpec::kOut) {
          if (t != l.out_targets[q][b]) return false;
          continue;
        }
        if (t == kNoState) {
          result->conforms = false;
          continue;
        }
        result->any_loop_byte = true;
        const size_t m = LoopSpec::target(v);
        Copy& to = LoopSpec::counts(v) ? *next : cur;
        if (to.states[m] == kNoState) {
          to.states[m] = t;
          to.paths[m] = cur.paths[q] + static_cast<char>(b);
        } else if (to.states[m] != t) {
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace

CountedCopies check_counted_copies(const CountedLoop& l, const RowLookup& row_of,
                                   uint32_t enough, uint32_t limit) {
  CountedCopies out;
  out.conforming = 1;  // copy 0 defines the spec
  out.first_states = {l.states[0], l.next_states[0]};
  Copy cur{l.next_states, l.next_paths};
  for (uint32_t copy = 1; copy < std::max(limit, enough); ++copy) {
    Copy next;
    next.states.fill(kNoState);
    CopyCheck result;
    if (!check_copy(l, row_of, cur, &next, &result)) break;
    if (!result.any_loop_byte) {
      out.kind = CountedCopies::kEnds;
      out.ends_at = copy;
      return out;
    }
    if (!result.conforms) break;
    out.conforming = copy + 1;
    out.first_states.push_back(next.states[0]);
    if (std::all_of(next.states.begin(), next.states.end(),
                    [](int32_t s) { return s == kNoState; })) {
      out.kind = CountedCopies::kExact;  // no token reaches a later copy
      out.conforming = UINT32_MAX;
      return out;
    }
    cur = std::move(next);
  }
  if (out.conforming >= enough) out.kind = CountedCopies::kExact;
  return out;
}

}  // namespace afm::guided
