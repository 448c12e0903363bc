// Loop detection near a parse state; see loop_finder.h.
#include "guided/loop_finder.h"

#include <algorithm>
#include <vector>

namespace afm::guided {

namespace {

using LoopSpec = TokenVocabulary::LoopSpec;
// Plain loops need few states (string content with its UTF-8 middle states: 8); the spec has
// room for more, which counted loops use (counted_loop.h).
constexpr size_t kMaxMembers = 8;
static_assert(kMaxMembers <= TokenVocabulary::kMaxLoopStates);
// States explored, and the fewest allowed bytes of an explored state worth expanding (the
// middle of a UTF-8 character allows 16 or more; after a closing quote, a few).
constexpr size_t kMaxExplore = 16;
constexpr int kMinWideBytes = 10;
// Explored indexes are small: reachability fits a bit set of this width.
static_assert(kMaxExplore <= 32);

// The explored neighbourhood of the start state: states in breadth-first order (index 0 is
// the start), the bytes leading to each, and the rows of the expanded ("wide") ones. Fixed
// arrays: this runs on the first visit of every wide state, so it allocates nothing but paths.
struct Neighbourhood {
  size_t count = 0;
  std::array<int32_t, kMaxExplore> states{};
  std::array<std::string, kMaxExplore> paths;
  std::array<const StateRow*, kMaxExplore> rows{};  // null: not expanded

  // Index of `state` among the explored ones, or -1.
  int index_of(int32_t state) const {
    for (size_t i = 0; i < count; ++i) {
      if (states[i] == state) return static_cast<int>(i);
    }
    return -1;
  }
  void add(int32_t state, std::string path) {
    states[count] = state;
    paths[count] = std::move(path);
    rows[count] = nullptr;
    ++count;
  }
};

// Explores from `root`, which the bytes `prefix` lead to from the start state.
void explore(int32_t root, const StateRow& root_row, const RowLookup& row_of,
             const std::string& prefix, Neighbourhood* n) {
  n->count = 0;
  n->add(root, prefix);
  n->rows[0] = &root_row;
  for (size_t i = 0; i < n->count; ++i) {
    if (i > 0) n->rows[i] = row_of(n->states[i], n->paths[i], kMinWideBytes);
    if (n->rows[i] == nullptr) continue;
    const StateRow& row = *n->rows[i];
    int32_t prev = kNoState;
    for (int b = 0; b < 256 && n->count < kMaxExplore; ++b) {
      const int32_t t = row[static_cast<size_t>(b)];
      if (t == kNoState || t == prev) continue;
      prev = t;
      if (n->index_of(t) < 0) n->add(t, n->paths[i] + static_cast<char>(b));
    }
  }
}

// Per explored state and byte: the explored index of its target, or -1 (outside or rejected).
// Rows are runs of equal targets, so each run costs one lookup.
using ExploredTargets = std::array<std::array<int8_t, 256>, kMaxExplore>;

void explored_targets(const Neighbourhood& n, ExploredTargets* out) {
  for (size_t i = 0; i < n.count; ++i) {
    if (n.rows[i] == nullptr) continue;
    int32_t prev = kNoState;
    int8_t prev_index = -1;
    for (size_t b = 0; b < 256; ++b) {
      const int32_t t = (*n.rows[i])[b];
      if (t != prev) {
        prev = t;
        prev_index = static_cast<int8_t>(t == kNoState ? -1 : n.index_of(t));
      }
      (*out)[i][b] = prev_index;
    }
  }
}

// Expanded explored states that lie on a cycle (through explored states), start first when it
// is one of them; at most kMaxMembers.
std::vector<size_t> cycle_members(const Neighbourhood& n, const ExploredTargets& targets) {
  std::array<uint32_t, kMaxExplore> reach{};  // bit j: j reachable in one or more steps
  for (size_t i = 0; i < n.count; ++i) {
    if (n.rows[i] == nullptr) continue;
    for (int8_t j : targets[i]) {
      if (j >= 0) reach[i] |= 1u << j;
    }
  }
  for (size_t k = 0; k < n.count; ++k) {
    for (size_t i = 0; i < n.count; ++i) {
      if ((reach[i] >> k) & 1) reach[i] |= reach[k];
    }
  }
  std::vector<size_t> members;
  for (size_t i = 0; i < n.count && members.size() < kMaxMembers; ++i) {
    if (n.rows[i] != nullptr && ((reach[i] >> i) & 1)) members.push_back(i);
  }
  return members;
}

// Per member and byte: the member it goes to (>= 0), or -2 - state for a state outside the
// loop (kNoState included), so that "same outside state" is plain equality.
using Targets = std::vector<std::array<int64_t, 256>>;

Targets member_targets(const Neighbourhood& n, const ExploredTargets& explored,
                       const std::vector<size_t>& members) {
  std::array<int, kMaxExplore> member_of;
  member_of.fill(-1);
  for (size_t k = 0; k < members.size(); ++k) member_of[members[k]] = static_cast<int>(k);
  Targets out(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    const auto& t = explored[members[k]];
    const StateRow& row = *n.rows[members[k]];
    for (size_t b = 0; b < 256; ++b) {
      const int m = t[b] < 0 ? -1 : member_of[static_cast<size_t>(t[b])];
      out[k][b] = m >= 0 ? m : -2 - static_cast<int64_t>(row[b]);
    }
  }
  return out;
}

// The coarsest partition of the members in which equivalent members go, on every byte, to the
// same outside state or to equivalent members (refinement from one class). Members are few
// (at most 8), so each round compares each member with one representative per class.
std::vector<uint32_t> target_classes(const Targets& targets) {
  const size_t m = targets.size();
  std::vector<uint32_t> cls(m, 0);
  size_t num_classes = 1;
  auto same = [&](size_t a, size_t b) {
    if (cls[a] != cls[b]) return false;
    for (size_t x = 0; x < 256; ++x) {
      const int64_t ta = targets[a][x];
      const int64_t tb = targets[b][x];
      if (ta == tb) continue;
      if (ta < 0 || tb < 0 || cls[static_cast<size_t>(ta)] != cls[static_cast<size_t>(tb)]) {
        return false;
      }
    }
    return true;
  };
  while (true) {
    std::vector<size_t> representatives;  // one member per new class
    std::vector<uint32_t> next(m);
    for (size_t k = 0; k < m; ++k) {
      size_t c = 0;
      while (c < representatives.size() && !same(representatives[c], k)) ++c;
      if (c == representatives.size()) representatives.push_back(k);
      next[k] = static_cast<uint32_t>(c);
    }
    cls = std::move(next);
    if (representatives.size() == num_classes) return cls;  // stable: refinement only splits
    num_classes = representatives.size();
  }
}

}  // namespace

std::pair<int32_t, uint8_t> dominant_successor(const StateRow& row) {
  struct Count {
    int32_t state;
    int count;
    uint8_t via;
  };
  std::vector<Count> counts;
  for (size_t b = 0; b < 256; ++b) {
    const int32_t t = row[b];
    if (t == kNoState) continue;
    auto it = std::find_if(counts.begin(), counts.end(), [t](const Count& c) { return c.state == t; });
    if (it == counts.end()) {
      counts.push_back({t, 1, static_cast<uint8_t>(b)});
    } else {
      ++it->count;
    }
  }
  Count best{kNoState, 0, 0};
  for (const Count& c : counts) {
    if (c.count > best.count) best = c;  // the first of equal counts, as a byte scan finds it
  }
  return {best.state, best.via};
}

bool find_loop(int32_t start, const RowLookup& row_of, FoundLoop* out) {
  const StateRow* start_row_ptr = row_of(start, std::string(), kMinLoopBytes);
  if (start_row_ptr == nullptr) return false;
  const StateRow& start_row = *start_row_ptr;
  // The loop is explored from the state most of the start's bytes lead to: the start itself
  // inside string content, the plain content loop after the first character of a key whose
  // declared names constrain that character, the digit loop after a value's start. (Exploring
  // from the start first wasted its whole neighbourhood, a row per wide state, wherever the
  // start is not on the loop: every key start and value start.) The entry is the start when
  // the exploration finds it on a cycle (a UTF-8 middle state leads to the next one, which
  // leads back through plain content), else that state.
  thread_local Neighbourhood n;
  thread_local ExploredTargets explored;
  const auto [d, via] = dominant_successor(start_row);
  const std::string path = d == start ? std::string() : std::string(1, static_cast<char>(via));
  const StateRow* d_row = d == start ? &start_row : row_of(d, path, kMinLoopBytes);
  if (d_row == nullptr) return false;
  explore(d, *d_row, row_of, path, &n);
  explored_targets(n, &explored);
  const std::vector<size_t> members = cycle_members(n, explored);
  const int start_index = n.index_of(start);
  const auto start_member = std::find(members.begin(), members.end(),
                                      static_cast<size_t>(start_index));
  const bool start_is_entry = start_index >= 0 && start_member != members.end();
  if (!start_is_entry && (members.empty() || members[0] != 0)) return false;
  // The entry, as an index into members.
  const size_t entry = start_is_entry ? static_cast<size_t>(start_member - members.begin()) : 0;
  const Targets targets = member_targets(n, explored, members);
  const std::vector<uint32_t> cls = target_classes(targets);
  std::array<int, kMaxExplore> member_of;
  member_of.fill(-1);
  for (size_t k = 0; k < members.size(); ++k) member_of[members[k]] = static_cast<int>(k);
  // Entry bytes: in the loop from the entry, and the start goes to the same class there.
  ByteSet entry_bytes;
  for (size_t b = 0; b < 256; ++b) {
    const int64_t mine = targets[entry][b];
    if (mine < 0) continue;
    bool agree = start_is_entry;
    if (!agree) {
      const int i = start_row[b] == kNoState ? -1 : n.index_of(start_row[b]);
      const int k = i < 0 ? -1 : member_of[static_cast<size_t>(i)];
      agree = k >= 0 && cls[static_cast<size_t>(k)] == cls[static_cast<size_t>(mine)];
    }
    if (agree) entry_bytes.set(static_cast<uint8_t>(b));
  }
  if (entry_bytes.count() < kMinLoopBytes) return false;
  // Breadth-first numbering of the classes from the entry's; unreachable classes are dropped.
  std::array<int, kMaxMembers> number;  // per class id
  number.fill(-1);
  std::vector<size_t> order{entry};  // a representative member per number
  number[cls[entry]] = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    for (size_t b = 0; b < 256; ++b) {
      const int64_t t = targets[order[i]][b];
      if (t < 0 || number[cls[static_cast<size_t>(t)]] >= 0) continue;
      number[cls[static_cast<size_t>(t)]] = static_cast<int>(order.size());
      order.push_back(static_cast<size_t>(t));
    }
  }
  out->spec.num_states = static_cast<uint32_t>(order.size());
  for (size_t q = 0; q < TokenVocabulary::kMaxLoopStates; ++q) {
    if (q >= order.size()) {
      out->spec.next[q].fill(0);  // unused states stay zero, as LoopSpec equality expects
      continue;
    }
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
