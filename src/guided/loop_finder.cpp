// Loop detection near a parse state; see loop_finder.h.
#include "guided/loop_finder.h"

#include <algorithm>
#include <vector>

namespace afm::guided {

namespace {

using LoopSpec = TokenVocabulary::LoopSpec;
constexpr size_t kMaxMembers = TokenVocabulary::kMaxLoopStates;
// States explored, and the fewest allowed bytes of an explored state worth expanding (the
// middle of a UTF-8 character allows 16 or more; after a closing quote, a few).
constexpr size_t kMaxExplore = 16;
constexpr int kMinWideBytes = 10;

int allowed_bytes(const StateRow& row) {
  return static_cast<int>(256 - std::count(row.begin(), row.end(), kNoState));
}

// The explored neighbourhood of the start state: states in breadth-first order (index 0 is
// the start), the bytes leading to each, and the rows of the expanded ("wide") ones.
struct Neighbourhood {
  std::vector<int32_t> states;
  std::vector<std::string> paths;
  std::vector<const StateRow*> rows;  // null: not expanded

  // Index of `state` among the explored ones, or -1.
  int index_of(int32_t state) const {
    for (size_t i = 0; i < states.size(); ++i) {
      if (states[i] == state) return static_cast<int>(i);
    }
    return -1;
  }
  // For each byte, the explored index its target has (-1 outside or rejected). Rows are runs
  // of equal targets, so each run costs one lookup.
  std::array<int, 256> targets(size_t i) const {
    std::array<int, 256> out;
    int32_t prev = kNoState;
    int prev_index = -1;
    for (size_t b = 0; b < 256; ++b) {
      const int32_t t = (*rows[i])[b];
      if (t != prev) {
        prev = t;
        prev_index = t == kNoState ? -1 : index_of(t);
      }
      out[b] = prev_index;
    }
    return out;
  }
};

// Explores from `root`, which the bytes `prefix` lead to from the start state.
Neighbourhood explore(int32_t root, const StateRow& root_row, const RowLookup& row_of,
                      const std::string& prefix) {
  Neighbourhood n;
  n.states.push_back(root);
  n.paths.push_back(prefix);
  n.rows.push_back(&root_row);
  for (size_t i = 0; i < n.states.size(); ++i) {
    if (i > 0) {
      const StateRow& r = row_of(n.states[i], n.paths[i]);
      n.rows.push_back(allowed_bytes(r) >= kMinWideBytes ? &r : nullptr);
    }
    if (n.rows[i] == nullptr) continue;
    int32_t prev = kNoState;
    for (int b = 0; b < 256 && n.states.size() < kMaxExplore; ++b) {
      const int32_t t = (*n.rows[i])[static_cast<size_t>(b)];
      if (t == kNoState || t == prev) continue;
      prev = t;
      if (n.index_of(t) >= 0) continue;
      n.states.push_back(t);
      n.paths.push_back(n.paths[i] + static_cast<char>(b));
    }
  }
  return n;
}

// Expanded explored states that lie on a cycle (through explored states), start first when it
// is one of them; at most kMaxMembers.
std::vector<size_t> cycle_members(const Neighbourhood& n) {
  const size_t count = n.states.size();
  std::vector<uint32_t> reach(count, 0);  // bit j: j reachable in one or more steps
  for (size_t i = 0; i < count; ++i) {
    if (n.rows[i] == nullptr) continue;
    for (int j : n.targets(i)) {
      if (j >= 0) reach[i] |= 1u << j;
    }
  }
  for (size_t k = 0; k < count; ++k) {
    for (size_t i = 0; i < count; ++i) {
      if ((reach[i] >> k) & 1) reach[i] |= reach[k];
    }
  }
  std::vector<size_t> members;
  for (size_t i = 0; i < count && members.size() < kMaxMembers; ++i) {
    if (n.rows[i] != nullptr && ((reach[i] >> i) & 1)) members.push_back(i);
  }
  return members;
}

// Per member and byte: the member it goes to (>= 0), or -2 - state for a state outside the
// loop (kNoState included), so that "same outside state" is plain equality.
using Targets = std::vector<std::array<int64_t, 256>>;

Targets member_targets(const Neighbourhood& n, const std::vector<size_t>& members) {
  Targets out(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    const std::array<int, 256> t = n.targets(members[k]);
    for (size_t b = 0; b < 256; ++b) {
      const auto it = t[b] < 0 ? members.end()
                               : std::find(members.begin(), members.end(), static_cast<size_t>(t[b]));
      out[k][b] = it != members.end() ? it - members.begin()
                                      : -2 - static_cast<int64_t>((*n.rows[members[k]])[b]);
    }
  }
  return out;
}

// The coarsest partition of the members in which equivalent members go, on every byte, to the
// same outside state or to equivalent members (refinement from one class).
std::vector<uint32_t> equivalence_classes(const Targets& targets) {
  const size_t m = targets.size();
  std::vector<uint32_t> cls(m, 0);
  size_t num_classes = 1;
  while (true) {
    std::vector<std::vector<int64_t>> signatures;
    std::vector<uint32_t> next(m);
    for (size_t k = 0; k < m; ++k) {
      std::vector<int64_t> sig{cls[k]};
      for (size_t b = 0; b < 256; ++b) {
        const int64_t t = targets[k][b];
        sig.push_back(t >= 0 ? cls[static_cast<size_t>(t)] : t);
      }
      const auto it = std::find(signatures.begin(), signatures.end(), sig);
      next[k] = static_cast<uint32_t>(it - signatures.begin());
      if (it == signatures.end()) signatures.push_back(std::move(sig));
    }
    cls = std::move(next);
    if (signatures.size() == num_classes) return cls;  // stable: refinement only splits
    num_classes = signatures.size();
  }
}

// The state most of the row's allowed bytes lead to, and one byte leading there.
std::pair<int32_t, uint8_t> dominant_successor(const StateRow& row) {
  int32_t best = kNoState;
  int best_count = 0;
  uint8_t via = 0;
  for (size_t b = 0; b < 256; ++b) {
    const int32_t t = row[b];
    if (t == kNoState || t == best) continue;
    const int count = static_cast<int>(std::count(row.begin(), row.end(), t));
    if (count > best_count) {
      best = t;
      best_count = count;
      via = static_cast<uint8_t>(b);
    }
  }
  return {best, via};
}

}  // namespace

bool find_loop(int32_t start, const StateRow& start_row, const RowLookup& row_of, FoundLoop* out) {
  if (allowed_bytes(start_row) < kMinLoopBytes) return false;
  // The loop is explored from its entry: the start itself when it is on a cycle, else the
  // state most of its bytes lead to (plain string content, after the first character of a
  // key whose declared names constrain that character).
  Neighbourhood n = explore(start, start_row, row_of, std::string());
  std::vector<size_t> members = cycle_members(n);
  const bool start_is_entry = !members.empty() && members[0] == 0;
  if (!start_is_entry) {
    const auto [d, via] = dominant_successor(start_row);
    const std::string path(1, static_cast<char>(via));
    const StateRow& d_row = row_of(d, path);
    if (allowed_bytes(d_row) < kMinLoopBytes) return false;
    n = explore(d, d_row, row_of, path);
    members = cycle_members(n);
    if (members.empty() || members[0] != 0) return false;
  }
  const Targets targets = member_targets(n, members);
  const std::vector<uint32_t> cls = equivalence_classes(targets);
  // Entry bytes: in the loop from the entry, and the start goes to the same class there.
  const size_t entry = 0;
  ByteSet entry_bytes;
  for (size_t b = 0; b < 256; ++b) {
    const int64_t mine = targets[entry][b];
    if (mine < 0) continue;
    bool agree = start_is_entry;
    if (!agree) {
      const int i = n.index_of(start_row[b]);
      const auto it = i < 0 ? members.end()
                            : std::find(members.begin(), members.end(), static_cast<size_t>(i));
      agree = it != members.end() &&
              cls[static_cast<size_t>(it - members.begin())] == cls[static_cast<size_t>(mine)];
    }
    if (agree) entry_bytes.set(static_cast<uint8_t>(b));
  }
  if (entry_bytes.count() < kMinLoopBytes) return false;
  // Breadth-first numbering of the classes from the entry's; unreachable classes are dropped.
  std::vector<int> number(members.size(), -1);  // per class id
  std::vector<size_t> order{entry};             // a representative member per number
  number[cls[entry]] = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    for (size_t b = 0; b < 256; ++b) {
      const int64_t t = targets[order[i]][b];
      if (t < 0 || number[cls[static_cast<size_t>(t)]] >= 0) continue;
      number[cls[static_cast<size_t>(t)]] = static_cast<int>(order.size());
      order.push_back(static_cast<size_t>(t));
    }
  }
  out->spec = LoopSpec();
  out->spec.num_states = static_cast<uint32_t>(order.size());
  for (size_t q = 0; q < order.size(); ++q) {
    out->states[q] = n.states[members[order[q]]];
    out->paths[q] = n.paths[members[order[q]]];
    for (size_t b = 0; b < 256; ++b) {
      const int64_t t = targets[order[q]][b];
      out->spec.next[q][b] =
          t < 0 ? LoopSpec::kOut : static_cast<uint8_t>(number[cls[static_cast<size_t>(t)]]);
    }
  }
  out->entry_bytes = entry_bytes;
  return true;
}

}  // namespace afm::guided
