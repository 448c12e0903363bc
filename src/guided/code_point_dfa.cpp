// The regular layer: Thompson NFA from the regex tree, subset construction over atoms,
// products, complement, Hopcroft minimisation and right-linear lowering. See code_point_dfa.h.
#include "guided/code_point_dfa.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "base/error.h"
#include "base/utf8.h"
#include "guided/regex_parser.h"

namespace afm::guided {

namespace {

constexpr uint32_t kSurrogateStart = 0xD800, kSurrogateEnd = 0xE000;
constexpr uint32_t kNoTarget = UINT32_MAX;
// Transition table entries (states x atoms) per automaton: 16 MiB. A pattern with thousands of
// distinct characters has as many atoms, so the state budget alone would not bound memory.
constexpr uint64_t kMaxTableEntries = uint64_t{4} << 20;

[[noreturn]] void too_large(uint64_t limit, const char* what = "states") {
  throw Error(ErrorCode::kUnsupported, "regular expression automaton has more than " +
                                           std::to_string(limit) + " " + what +
                                           " (budget: automaton states)");
}

// Sorted, unique interval starts covering 0..0x10FFFF, surrogates an interval of their own.
std::vector<uint32_t> atoms_from(std::vector<uint32_t> starts) {
  starts.push_back(0);
  starts.push_back(kSurrogateStart);
  starts.push_back(kSurrogateEnd);
  std::erase_if(starts, [](uint32_t s) { return s > kMaxCodePoint; });
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  return starts;
}

// Thompson NFA: a state has either one character-set edge or epsilon edges.
class Nfa {
 public:
  struct State {
    std::vector<std::pair<uint32_t, uint32_t>> chars;  // the edge's set (ranges), if any
    uint32_t to = kNoTarget;
    std::vector<uint32_t> eps;
  };
  struct Frag {
    uint32_t in, out;
  };

  Nfa(std::string_view pattern, size_t max_states) : pattern_(pattern), max_(max_states) {}

  uint32_t add() {
    if (states_.size() >= max_) too_large(max_);
    states_.emplace_back();
    return static_cast<uint32_t>(states_.size() - 1);
  }
  Frag chars(const CodePointSet& set) {
    const uint32_t in = add(), out = add();
    states_[in].chars = set.ranges();
    states_[in].to = out;
    return {in, out};
  }
  void eps(uint32_t from, uint32_t to) { states_[from].eps.push_back(to); }

  Frag build(const regex::Node& n) {
    using K = regex::Node::Kind;
    switch (n.kind) {
      case K::kChars:
        return chars(n.chars);
      case K::kConcat: {
        const uint32_t in = add();
        uint32_t at = in;
        for (const regex::Node& k : n.kids) {
          const Frag f = build(k);
          eps(at, f.in);
          at = f.out;
        }
        return {in, at};
      }
      case K::kAlt: {
        const uint32_t in = add(), out = add();
        for (const regex::Node& k : n.kids) {
          const Frag f = build(k);
          eps(in, f.in);
          eps(f.out, out);
        }
        return {in, out};
      }
      case K::kRepeat:
        return repeat(n);
      case K::kStart:
      case K::kEnd:
      case K::kLook:
        break;
    }
    regex::misplaced_anchor(pattern_, n);
  }

  // One top-level branch: anchors stripped, unanchored ends padded with "any characters".
  Frag branch(regex::Node b, bool search) {
    const auto [anchored_start, anchored_end] = regex::strip_anchors(b, search);
    Frag body = build(b);
    if (!anchored_start) body = {any_star(body.in, true), body.out};
    if (!anchored_end) body = {body.in, any_star(body.out, false)};
    return body;
  }

  const std::vector<State>& states() const { return states_; }

 private:
  Frag repeat(const regex::Node& n) {
    const uint32_t in = add();
    uint32_t at = in;
    for (uint32_t i = 0; i < n.min; ++i) {
      const Frag f = build(n.kids[0]);
      eps(at, f.in);
      at = f.out;
    }
    if (n.max == kUnbounded) {
      const uint32_t loop = add();
      const Frag f = build(n.kids[0]);
      eps(at, loop);
      eps(loop, f.in);
      eps(f.out, loop);
      return {in, loop};
    }
    const uint32_t out = add();
    for (uint32_t i = n.min; i < n.max; ++i) {
      const Frag f = build(n.kids[0]);
      eps(at, f.in);
      eps(at, out);
      at = f.out;
    }
    eps(at, out);
    return {in, out};
  }

  // A loop over every character before `state` (leading = true: returns the new entry) or
  // after it (returns the new exit).
  uint32_t any_star(uint32_t state, bool leading) {
    const Frag c = chars(CodePointSet::all());
    const uint32_t loop = add();
    eps(loop, c.in);
    eps(c.out, loop);
    if (leading) {
      eps(loop, state);
    } else {
      eps(state, loop);
    }
    return loop;
  }

  std::string_view pattern_;
  size_t max_;
  std::vector<State> states_;
};


// Hopcroft's partition refinement: the classes of equivalent states of a table automaton
// (kDead entries go to an implicit sink, state n). Returns the number of classes of the n real
// states; (*cls)[s] is the class of state s. O(atoms n log n): a block is split by moving its
// marked states out (swap-remove), never by scanning it, so counters (`x{1,255}`, a length
// bound) that split one state at a time stay fast, where Moore's rounds would be quadratic.
size_t equivalence_classes(const std::vector<uint32_t>& next, const std::vector<bool>& accepting,
                           size_t atoms, std::vector<uint32_t>* cls) {
  const size_t n = accepting.size(), total = n + 1;  // + the sink
  auto target = [&](size_t s, size_t a) -> uint32_t {
    if (s == n) return static_cast<uint32_t>(n);
    const uint32_t t = next[s * atoms + a];
    return t == CodePointDfa::kDead ? static_cast<uint32_t>(n) : t;
  };
  // Predecessors per (atom, state), as one CSR table.
  std::vector<uint32_t> begin(atoms * total + 1, 0), preds(atoms * total);
  for (size_t s = 0; s < total; ++s) {
    for (size_t a = 0; a < atoms; ++a) ++begin[a * total + target(s, a) + 1];
  }
  for (size_t i = 1; i < begin.size(); ++i) begin[i] += begin[i - 1];
  std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
  for (size_t s = 0; s < total; ++s) {
    for (size_t a = 0; a < atoms; ++a) preds[fill[a * total + target(s, a)]++] = static_cast<uint32_t>(s);
  }
  std::vector<std::vector<uint32_t>> blocks(2);
  std::vector<uint32_t> block_of(total), pos(total);
  for (size_t s = 0; s < total; ++s) {
    const uint32_t b = s < n && accepting[s] ? 1 : 0;
    block_of[s] = b;
    pos[s] = static_cast<uint32_t>(blocks[b].size());
    blocks[b].push_back(static_cast<uint32_t>(s));
  }
  if (blocks[1].empty()) blocks.pop_back();
  std::vector<std::pair<uint32_t, uint32_t>> work;  // (block, atom) splitters
  std::vector<std::vector<bool>> queued(blocks.size(), std::vector<bool>(atoms, false));
  auto push = [&](uint32_t b, uint32_t a) {
    if (!queued[b][a]) {
      queued[b][a] = true;
      work.emplace_back(b, a);
    }
  };
  for (uint32_t a = 0; a < atoms; ++a) push(blocks.size() == 2 && blocks[1].size() < blocks[0].size() ? 1 : 0, a);
  std::vector<bool> marked(total, false);
  std::vector<uint32_t> hit, touched;
  std::vector<std::vector<uint32_t>> marked_in;  // per block: its marked states
  while (!work.empty()) {
    const auto [splitter, a] = work.back();
    work.pop_back();
    queued[splitter][a] = false;
    hit.clear();
    for (uint32_t t : blocks[splitter]) {
      for (uint32_t i = begin[a * total + t]; i < begin[a * total + t + 1]; ++i) {
        if (!marked[preds[i]]) {
          marked[preds[i]] = true;
          hit.push_back(preds[i]);
        }
      }
    }
    touched.clear();
    marked_in.resize(blocks.size());
    for (uint32_t s : hit) {
      const uint32_t b = block_of[s];
      if (marked_in[b].empty()) touched.push_back(b);
      marked_in[b].push_back(s);
    }
    for (uint32_t b : touched) {
      std::vector<uint32_t> moved = std::move(marked_in[b]);
      marked_in[b].clear();
      if (moved.size() == blocks[b].size()) continue;  // all of it: no split
      const auto fresh = static_cast<uint32_t>(blocks.size());
      blocks.emplace_back();
      queued.emplace_back(atoms, false);
      marked_in.emplace_back();
      for (uint32_t s : moved) {  // swap-remove from b, append to the new block
        std::vector<uint32_t>& old = blocks[b];
        const uint32_t last = old.back();
        old[pos[s]] = last;
        pos[last] = pos[s];
        old.pop_back();
        pos[s] = static_cast<uint32_t>(blocks[fresh].size());
        blocks[fresh].push_back(s);
        block_of[s] = fresh;
      }
      for (uint32_t c = 0; c < atoms; ++c) {
        if (queued[b][c]) {
          push(fresh, c);
        } else {
          push(blocks[fresh].size() < blocks[b].size() ? fresh : b, c);
        }
      }
    }
    for (uint32_t s : hit) marked[s] = false;
  }
  // Number the classes of the real states (the sink's block may hold dead real states too:
  // trimmed automata have none).
  std::vector<uint32_t> number(blocks.size(), CodePointDfa::kDead);
  uint32_t count = 0;
  cls->assign(n, 0);
  for (size_t s = 0; s < n; ++s) {
    uint32_t& id = number[block_of[s]];
    if (id == CodePointDfa::kDead) id = count++;
    (*cls)[s] = id;
  }
  return count;
}
}  // namespace

// Builds a table automaton state by state (subset and product constructions).
class DfaBuilder {
 public:
  DfaBuilder(std::vector<uint32_t> atoms, size_t max_states) : max_(max_states) {
    dfa_.atom_start_ = std::move(atoms);
  }
  uint32_t add_state(bool accepting) {
    if (dfa_.accepting_.size() >= max_) too_large(max_);
    if ((dfa_.accepting_.size() + 1) * dfa_.num_atoms() > kMaxTableEntries) {
      too_large(kMaxTableEntries, "transitions");
    }
    dfa_.accepting_.push_back(accepting);
    dfa_.next_.resize(dfa_.next_.size() + dfa_.num_atoms(), CodePointDfa::kDead);
    return static_cast<uint32_t>(dfa_.accepting_.size() - 1);
  }
  void set(uint32_t state, uint32_t atom, uint32_t to) { dfa_.next_[state * dfa_.num_atoms() + atom] = to; }
  size_t num_atoms() const { return dfa_.num_atoms(); }
  CodePointDfa take() { return std::move(dfa_); }

 private:
  size_t max_;
  CodePointDfa dfa_;
};

uint32_t CodePointDfa::atom_of(uint32_t cp) const {
  return static_cast<uint32_t>(std::upper_bound(atom_start_.begin(), atom_start_.end(), cp) -
                               atom_start_.begin() - 1);
}

CodePointSet CodePointDfa::atom_set(uint32_t atom) const {
  const uint32_t lo = atom_start_[atom];
  const uint32_t hi = atom + 1 < num_atoms() ? atom_start_[atom + 1] - 1 : kMaxCodePoint;
  if (lo == kSurrogateStart) return {};
  return CodePointSet::of(lo, hi);
}

CodePointDfa CodePointDfa::nothing() {
  DfaBuilder b(atoms_from({}), 1);
  b.add_state(false);
  return b.take();
}

CodePointDfa CodePointDfa::length_between(uint32_t min, uint32_t max, size_t max_states) {
  const bool unbounded = max == kUnbounded;
  const uint64_t states = (unbounded ? uint64_t{min} : uint64_t{max}) + 1;
  if (min > max) return nothing();
  if (states > max_states) too_large(max_states);
  DfaBuilder b(atoms_from({}), max_states);
  for (uint64_t s = 0; s < states; ++s) b.add_state(s >= min);
  CodePointDfa out = b.take();
  const uint32_t surrogates = out.atom_of(kSurrogateStart);
  for (uint32_t s = 0; s < states; ++s) {
    const uint32_t to = s + 1 < states ? s + 1 : (unbounded ? s : kDead);
    for (uint32_t a = 0; a < out.num_atoms(); ++a) {
      if (a != surrogates) out.next_[s * out.num_atoms() + a] = to;
    }
  }
  return out;
}

CodePointDfa CodePointDfa::from_strings(const std::vector<std::string>& strings) {
  std::vector<std::vector<uint32_t>> decoded;
  std::vector<uint32_t> starts;
  for (const std::string& s : strings) {
    decoded.emplace_back();
    if (!decode_utf8(s, &decoded.back())) {
      throw Error(ErrorCode::kInvalidArgument, "regular language: a name is not UTF-8");
    }
    for (uint32_t cp : decoded.back()) {
      starts.push_back(cp);
      starts.push_back(cp + 1);
    }
  }
  DfaBuilder b(atoms_from(std::move(starts)), SIZE_MAX);
  std::vector<std::map<uint32_t, uint32_t>> kids(1);
  std::vector<bool> accepting(1, false);
  for (const auto& word : decoded) {
    uint32_t at = 0;
    for (uint32_t cp : word) {
      auto [it, added] = kids[at].emplace(cp, static_cast<uint32_t>(kids.size()));
      if (added) {
        kids.emplace_back();
        accepting.push_back(false);
      }
      at = it->second;
    }
    accepting[at] = true;
  }
  for (size_t s = 0; s < kids.size(); ++s) b.add_state(accepting[s]);
  CodePointDfa out = b.take();
  for (size_t s = 0; s < kids.size(); ++s) {
    for (const auto& [cp, to] : kids[s]) out.next_[s * out.num_atoms() + out.atom_of(cp)] = to;
  }
  return out;
}

CodePointDfa CodePointDfa::from_regex(std::string_view pattern, bool search, size_t max_states) {
  return from_regex_tree(regex::parse(pattern), pattern, search, max_states);
}

CodePointDfa CodePointDfa::from_regex_tree(regex::Node root, std::string_view pattern, bool search,
                                           size_t max_states) {
  if (regex::has_lookahead(root)) return with_lookaheads(std::move(root), pattern, search, max_states);
  // The NFA may be several times the DFA; both are bounded.
  Nfa nfa(pattern, max_states * 8);
  const uint32_t start = nfa.add(), accept = nfa.add();
  for (regex::Node& branch : root.kids) {
    const Nfa::Frag f = nfa.branch(std::move(branch), search);
    nfa.eps(start, f.in);
    nfa.eps(f.out, accept);
  }
  const auto& states = nfa.states();
  std::vector<uint32_t> starts;
  for (const Nfa::State& s : states) {
    for (const auto& [lo, hi] : s.chars) {
      starts.push_back(lo);
      starts.push_back(hi + 1);
    }
  }
  CodePointDfa shape;  // holds the atoms, for atom_of
  shape.atom_start_ = atoms_from(std::move(starts));
  DfaBuilder b(shape.atom_start_, max_states);
  // Per NFA state with an edge: the atoms its set covers, as [first, last] runs.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> edge_atoms(states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    for (const auto& [lo, hi] : states[i].chars) edge_atoms[i].emplace_back(shape.atom_of(lo), shape.atom_of(hi));
  }
  auto closure = [&](std::vector<uint32_t> set) {
    std::vector<bool> seen(states.size(), false);
    for (uint32_t s : set) seen[s] = true;
    for (size_t i = 0; i < set.size(); ++i) {
      for (uint32_t t : states[set[i]].eps) {
        if (!seen[t]) {
          seen[t] = true;
          set.push_back(t);
        }
      }
    }
    std::erase_if(set, [&](uint32_t s) { return states[s].to == kNoTarget && s != accept; });
    std::sort(set.begin(), set.end());
    return set;
  };
  std::map<std::vector<uint32_t>, uint32_t> ids;
  std::vector<std::vector<uint32_t>> pending;
  auto id_of = [&](std::vector<uint32_t> set) {
    auto [it, added] = ids.try_emplace(std::move(set), 0);
    if (added) {
      it->second = b.add_state(std::binary_search(it->first.begin(), it->first.end(), accept));
      pending.push_back(it->first);
    }
    return it->second;
  };
  id_of(closure({start}));
  std::vector<std::pair<uint32_t, uint32_t>> moves;  // (atom, NFA target)
  for (size_t d = 0; d < pending.size(); ++d) {
    moves.clear();
    for (uint32_t s : pending[d]) {
      for (const auto& [first, last] : edge_atoms[s]) {
        for (uint32_t a = first; a <= last; ++a) moves.emplace_back(a, states[s].to);
      }
    }
    std::sort(moves.begin(), moves.end());
    moves.erase(std::unique(moves.begin(), moves.end()), moves.end());
    std::map<std::vector<uint32_t>, uint32_t> by_targets;  // raw targets -> DFA state
    for (size_t i = 0; i < moves.size();) {
      std::vector<uint32_t> targets;
      size_t j = i;
      for (; j < moves.size() && moves[j].first == moves[i].first; ++j) targets.push_back(moves[j].second);
      auto it = by_targets.find(targets);
      if (it == by_targets.end()) it = by_targets.emplace(targets, id_of(closure(targets))).first;
      b.set(static_cast<uint32_t>(d), moves[i].first, it->second);
      i = j;
    }
  }
  return b.take();
}

CodePointDfa CodePointDfa::product(const CodePointDfa& a, const CodePointDfa& b, bool both,
                                   size_t max_states) {
  CodePointDfa shape;  // the common refinement of the atoms
  shape.atom_start_ = a.atom_start_;
  shape.atom_start_.insert(shape.atom_start_.end(), b.atom_start_.begin(), b.atom_start_.end());
  shape.atom_start_ = atoms_from(std::move(shape.atom_start_));
  DfaBuilder out(shape.atom_start_, max_states);
  std::vector<uint32_t> in_a, in_b;  // the atom of a / b each common atom lies in
  for (uint32_t lo : shape.atom_start_) {
    in_a.push_back(a.atom_of(lo));
    in_b.push_back(b.atom_of(lo));
  }
  std::unordered_map<uint64_t, uint32_t> ids;
  std::vector<std::pair<uint32_t, uint32_t>> pending;
  // Intersection: a dead side kills the pair. Union: the live side goes on alone.
  auto state_of = [&](uint32_t sa, uint32_t sb) {
    if ((sa == kDead && sb == kDead) || (both && (sa == kDead || sb == kDead))) return kDead;
    const uint64_t key = (uint64_t{sa} << 32) | sb;
    auto [it, added] = ids.try_emplace(key, 0);
    if (added) {
      const bool acc_a = sa != kDead && a.accepting_[sa];
      const bool acc_b = sb != kDead && b.accepting_[sb];
      it->second = out.add_state(both ? acc_a && acc_b : acc_a || acc_b);
      pending.emplace_back(sa, sb);
    }
    return it->second;
  };
  state_of(0, 0);
  for (size_t d = 0; d < pending.size(); ++d) {
    const auto [sa, sb] = pending[d];
    for (uint32_t atom = 0; atom < shape.atom_start_.size(); ++atom) {
      const uint32_t ta = sa == kDead ? kDead : a.next(sa, in_a[atom]);
      const uint32_t tb = sb == kDead ? kDead : b.next(sb, in_b[atom]);
      const uint32_t to = state_of(ta, tb);
      if (to != kDead) out.set(static_cast<uint32_t>(d), atom, to);
    }
  }
  return out.take().trimmed();
}

// The start accepts and loops on every character: the automaton accepts every string.
bool CodePointDfa::is_everything() const {
  if (!accepting_[0]) return false;
  const uint32_t surrogates = atom_of(kSurrogateStart);
  for (uint32_t a = 0; a < num_atoms(); ++a) {
    if (a != surrogates && next(0, a) != 0) return false;
  }
  return true;
}

// Intersecting with (or uniting with) every string needs no product: constraints are often
// added one by one to "every string", and an object without declared names starts there.
CodePointDfa CodePointDfa::intersect(const CodePointDfa& a, const CodePointDfa& b,
                                     size_t max_states) {
  if (a.is_everything()) return b.trimmed();
  if (b.is_everything()) return a.trimmed();
  return product(a, b, /*both=*/true, max_states);
}

CodePointDfa CodePointDfa::unite(const CodePointDfa& a, const CodePointDfa& b, size_t max_states) {
  if (a.is_everything()) return a;
  if (b.is_everything()) return b;
  return product(a, b, /*both=*/false, max_states);
}

CodePointDfa CodePointDfa::complement() const {
  CodePointDfa out = *this;
  const uint32_t sink = static_cast<uint32_t>(num_states());
  out.accepting_.push_back(false);
  out.next_.resize(out.next_.size() + num_atoms(), kDead);
  const uint32_t surrogates = atom_of(kSurrogateStart);
  for (uint32_t s = 0; s <= sink; ++s) {
    out.accepting_[s] = !out.accepting_[s];
    for (uint32_t a = 0; a < num_atoms(); ++a) {
      uint32_t& to = out.next_[s * num_atoms() + a];
      if (a == surrogates) {
        to = kDead;
      } else if (to == kDead) {
        to = sink;
      }
    }
  }
  return out;
}

CodePointDfa CodePointDfa::trimmed() const {
  if (minimal_) return *this;
  const size_t n = num_states(), atoms = num_atoms();
  std::vector<bool> reached(n, false);
  std::vector<uint32_t> order{0};
  reached[0] = true;
  for (size_t i = 0; i < order.size(); ++i) {
    for (uint32_t a = 0; a < atoms; ++a) {
      const uint32_t t = next(order[i], a);
      if (t != kDead && !reached[t]) {
        reached[t] = true;
        order.push_back(t);
      }
    }
  }
  std::vector<std::vector<uint32_t>> back(n);
  for (uint32_t s : order) {
    for (uint32_t a = 0; a < atoms; ++a) {
      if (next(s, a) != kDead) back[next(s, a)].push_back(s);
    }
  }
  std::vector<bool> useful(n, false);
  std::vector<uint32_t> stack;
  for (uint32_t s : order) {
    if (accepting_[s]) {
      useful[s] = true;
      stack.push_back(s);
    }
  }
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (uint32_t p : back[s]) {
      if (!useful[p]) {
        useful[p] = true;
        stack.push_back(p);
      }
    }
  }
  if (!useful[0]) return nothing();
  std::vector<uint32_t> id(n, kDead);
  uint32_t count = 0;
  for (uint32_t s : order) {
    if (useful[s]) id[s] = count++;
  }
  CodePointDfa out;
  out.atom_start_ = atom_start_;
  out.accepting_.resize(count);
  out.next_.assign(size_t{count} * atoms, kDead);
  for (uint32_t s : order) {
    if (id[s] == kDead) continue;
    out.accepting_[id[s]] = accepting_[s];
    for (uint32_t a = 0; a < atoms; ++a) {
      const uint32_t t = next(s, a);
      if (t != kDead) out.next_[size_t{id[s]} * atoms + a] = id[t];
    }
  }
  return out;
}

CodePointDfa CodePointDfa::minimized() const {
  if (minimal_) return *this;
  const CodePointDfa t = trimmed();
  const size_t n = t.num_states(), atoms = t.num_atoms();
  std::vector<uint32_t> cls;
  const size_t classes = equivalence_classes(t.next_, t.accepting_, atoms, &cls);
  // Renumber classes so the start's class is 0, then merge neighbouring atoms whose columns
  // agree (never across the surrogates' bounds).
  std::vector<uint32_t> id(classes, kDead), rep(classes);
  uint32_t count = 0;
  id[cls[0]] = count++;
  rep[cls[0]] = 0;
  for (uint32_t s = 0; s < n; ++s) {
    if (id[cls[s]] == kDead) {
      id[cls[s]] = count++;
      rep[cls[s]] = s;
    }
  }
  std::vector<uint32_t> order(classes);
  for (uint32_t c = 0; c < classes; ++c) order[id[c]] = rep[c];
  std::vector<uint32_t> keep_atoms;
  for (uint32_t a = 0; a < atoms; ++a) {
    const uint32_t lo = t.atom_start_[a];
    bool same = a > 0 && lo != kSurrogateStart && lo != kSurrogateEnd;
    for (uint32_t c = 0; same && c < classes; ++c) {
      const uint32_t x = t.next_[order[c] * atoms + a], y = t.next_[order[c] * atoms + a - 1];
      same = (x == kDead ? kDead : id[cls[x]]) == (y == kDead ? kDead : id[cls[y]]);
    }
    if (!same) keep_atoms.push_back(a);
  }
  CodePointDfa out;
  for (uint32_t a : keep_atoms) out.atom_start_.push_back(t.atom_start_[a]);
  out.accepting_.resize(classes);
  out.next_.assign(classes * keep_atoms.size(), kDead);
  for (uint32_t c = 0; c < classes; ++c) {
    out.accepting_[c] = t.accepting_[order[c]];
    for (size_t k = 0; k < keep_atoms.size(); ++k) {
      const uint32_t to = t.next_[order[c] * atoms + keep_atoms[k]];
      if (to != kDead) out.next_[c * keep_atoms.size() + k] = id[cls[to]];
    }
  }
  out.minimal_ = true;
  return out;
}

// trimmed() keeps only states on a path to acceptance, and a lone non-accepting start when
// there is none.
bool CodePointDfa::empty() const {
  const CodePointDfa t = trimmed();
  return !t.accepting_[0] && t.num_states() == 1;
}

bool CodePointDfa::matches(std::string_view utf8) const {
  std::vector<uint32_t> cps;
  if (!decode_utf8(utf8, &cps)) return false;
  uint32_t s = 0;
  for (uint32_t cp : cps) {
    s = next(s, atom_of(cp));
    if (s == kDead) return false;
  }
  return accepting_[s];
}

std::pair<uint32_t, uint32_t> CodePointDfa::length_range() const {
  const CodePointDfa t = trimmed();
  const size_t n = t.num_states(), atoms = t.num_atoms();
  // Shortest: breadth-first distance to an accepting state.
  std::vector<uint32_t> dist(n, kUnbounded);
  std::vector<uint32_t> queue{0};
  dist[0] = 0;
  uint32_t shortest = kUnbounded;
  for (size_t i = 0; i < queue.size(); ++i) {
    const uint32_t s = queue[i];
    if (t.accepting_[s]) shortest = std::min(shortest, dist[s]);
    for (uint32_t a = 0; a < atoms; ++a) {
      const uint32_t to = t.next(s, a);
      if (to != kDead && dist[to] == kUnbounded) {
        dist[to] = dist[s] + 1;
        queue.push_back(to);
      }
    }
  }
  // Longest: unbounded on any cycle (every trimmed state lies on an accepting path), else the
  // longest path of the DAG, in topological order (Kahn).
  std::vector<uint32_t> indegree(n, 0);
  for (size_t s = 0; s < n; ++s) {
    for (uint32_t a = 0; a < atoms; ++a) {
      if (t.next(static_cast<uint32_t>(s), a) != kDead) ++indegree[t.next(static_cast<uint32_t>(s), a)];
    }
  }
  std::vector<uint32_t> ready, longest(n, 0);
  for (uint32_t s = 0; s < n; ++s) {
    if (indegree[s] == 0) ready.push_back(s);
  }
  uint32_t best = 0;
  size_t done = 0;
  while (!ready.empty()) {
    const uint32_t s = ready.back();
    ready.pop_back();
    ++done;
    if (t.accepting_[s]) best = std::max(best, longest[s]);
    for (uint32_t a = 0; a < atoms; ++a) {
      const uint32_t to = t.next(s, a);
      if (to == kDead) continue;
      longest[to] = std::max(longest[to], longest[s] + 1);
      if (--indegree[to] == 0) ready.push_back(to);
    }
  }
  return {shortest, done < n ? kUnbounded : best};
}

Expr CodePointDfa::lower(GrammarBuilder& b, CharEncoding encoding) const {
  const CodePointDfa t = minimized();
  if (t.empty()) return b.nothing();
  const size_t n = t.num_states();
  std::vector<RuleId> rules(n);
  for (size_t s = 0; s < n; ++s) rules[s] = b.declare("dfa" + std::to_string(s));
  std::map<std::vector<std::pair<uint32_t, uint32_t>>, Expr> class_exprs;
  for (uint32_t s = 0; s < n; ++s) {
    std::map<uint32_t, CodePointSet> by_target;
    for (uint32_t a = 0; a < t.num_atoms(); ++a) {
      const uint32_t to = t.next(s, a);
      if (to != kDead) by_target[to].add(t.atom_set(a));
    }
    std::vector<Expr> options;
    if (t.accepting_[s]) options.push_back(b.empty());
    for (const auto& [to, set] : by_target) {
      if (set.empty()) continue;
      auto [it, added] = class_exprs.try_emplace(set.ranges(), Expr{});
      if (added) it->second = encode_char_class(b, set, encoding);
      options.push_back(b.seq({it->second, b.ref(rules[to])}));
    }
    b.define(rules[s], b.alt(std::move(options)));
  }
  return b.ref(rules[0]);
}

}  // namespace afm::guided
