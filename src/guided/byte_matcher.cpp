// Earley recogniser over bytes; see byte_matcher.h for the design.
#include "guided/byte_matcher.h"
#include "guided/unique_items.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "base/error.h"

namespace afm::guided {

bool ByteMatcher::next_symbol(const Item& item, Symbol* out) const {
  const Production& p = grammar_->production(item.prod);
  if (p.repeat) {
    if (p.max != kUnbounded && item.dot >= p.max) return false;
    *out = p.rhs[0];
    return true;
  }
  if (item.dot >= p.rhs.size()) return false;
  *out = p.rhs[item.dot];
  return true;
}

bool ByteMatcher::complete(const Item& item) const {
  const Production& p = grammar_->production(item.prod);
  return p.repeat ? item.dot >= p.min : item.dot == p.rhs.size();
}

ByteMatcher::Item ByteMatcher::advanced(const Item& item) const {
  const Production& p = grammar_->production(item.prod);
  uint32_t dot = item.dot + 1;
  if (p.repeat && p.max == kUnbounded && dot > p.min) dot = p.min;  // saturate
  return {item.prod, dot, item.origin};
}

// Builds the Earley set at index `k` (the last one) by closing over predictions and
// completions of the items already placed there. Duplicates are found through dedupe_, an
// open-addressing table over the items of set k.
class ByteMatcher::SetBuilder {
 public:
  SetBuilder(ByteMatcher& m, uint32_t k) : m_(m), k_(k), begin_(m.items_.size()) {
    if (m_.dedupe_.size() < 64) m_.dedupe_.resize(64);
    // Only the slots the previous set used are non-zero: clearing the whole table (grown once
    // by a large set) cost more than building a small set.
    for (uint32_t slot : m_.dedupe_used_) m_.dedupe_[slot] = 0;
    m_.dedupe_used_.clear();
  }

  void add(const Item& item) {
    std::vector<uint32_t>& table = m_.dedupe_;
    if ((m_.items_.size() - begin_ + 1) * 2 > table.size()) grow();
    const size_t mask = table.size() - 1;
    size_t slot = ItemHash()(item) & mask;
    while (table[slot] != 0) {
      if (m_.items_[table[slot] - 1] == item) return;
      slot = (slot + 1) & mask;
    }
    m_.items_.push_back(item);
    table[slot] = static_cast<uint32_t>(m_.items_.size());
    m_.dedupe_used_.push_back(static_cast<uint32_t>(slot));
  }

  void close() {
    const Grammar& g = *m_.grammar_;
    for (size_t i = m_.set_begin_[k_]; i < m_.items_.size(); ++i) {
      const Item item = m_.items_[i];
      Symbol sym;
      if (m_.next_symbol(item, &sym) && !is_terminal(sym)) {
        for (uint32_t p : g.productions_of(static_cast<uint32_t>(sym))) add({p, 0, k_});
        if (g.nullable(static_cast<uint32_t>(sym))) add(m_.advanced(item));
      }
      if (m_.complete(item) && item.origin != k_) complete_into(item);
    }
  }

 private:
  void grow() {
    std::vector<uint32_t>& table = m_.dedupe_;
    table.assign(table.size() * 2, 0u);
    m_.dedupe_used_.clear();
    const size_t mask = table.size() - 1;
    for (size_t i = begin_; i < m_.items_.size(); ++i) {
      size_t slot = ItemHash()(m_.items_[i]) & mask;
      while (table[slot] != 0) slot = (slot + 1) & mask;
      table[slot] = static_cast<uint32_t>(i + 1);
      m_.dedupe_used_.push_back(static_cast<uint32_t>(slot));
    }
  }

  void complete_into(const Item& done) {
    const uint32_t lhs = m_.grammar_->production(done.prod).lhs;
    if (const Item* top = m_.chain_top(done.origin, lhs)) {
      add(*top);  // Leo: the chain's intermediate completions advance nothing else
      return;
    }
    for (const auto& [nt, j] : m_.waiting_for(done.origin, lhs)) add(m_.advanced(m_.items_[j]));
  }

  ByteMatcher& m_;
  uint32_t k_;
  size_t begin_;
};

ByteMatcher::ByteMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  AFM_CHECK(grammar_ != nullptr);
  set_begin_.push_back(0);
  waiting_begin_.push_back(0);
  SetBuilder builder(*this, 0);
  for (uint32_t p : grammar_->productions_of(grammar_->start())) builder.add({p, 0, 0});
  builder.close();
  index_waiting_items();
}

namespace {
constexpr uint32_t kNoChain = UINT32_MAX;  // chain_tops_ entry: no chain top
// Same-set steps followed when finding a chain top (unit productions predicted in one set).
constexpr int kMaxChainSteps = 64;
}  // namespace

// Completions and state keys look up "the items of set k waiting for nonterminal X"; scanning
// the whole set for each lookup made large sets (big schemas) quadratic. The finished set's
// items that wait for a nonterminal are indexed once, sorted by that nonterminal, and each
// group gets its chain top.
void ByteMatcher::index_waiting_items() {
  const size_t begin = waiting_.size();
  for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
    Symbol sym;
    if (next_symbol(items_[i], &sym) && !is_terminal(sym)) {
      waiting_.emplace_back(static_cast<uint32_t>(sym), static_cast<uint32_t>(i));
    }
  }
  std::sort(waiting_.begin() + static_cast<std::ptrdiff_t>(begin), waiting_.end());
  waiting_begin_.push_back(static_cast<uint32_t>(waiting_.size()));
  chain_tops_.resize(waiting_.size(), Item{kNoChain, 0, 0});
  for (size_t first = begin; first < waiting_.size();) {
    size_t last = first;
    while (last < waiting_.size() && waiting_[last].first == waiting_[first].first) ++last;
    const Item top = find_chain_top(first, last, kMaxChainSteps);
    std::fill(chain_tops_.begin() + static_cast<std::ptrdiff_t>(first),
              chain_tops_.begin() + static_cast<std::ptrdiff_t>(last), top);
    first = last;
  }
}

// waiting_[first, last) is one (set, nonterminal) group. When all its items are tails that
// complete one node (origin, lhs), completing the group's nonterminal completes that node: the
// top is that node's own chain top if it has one (an earlier set's, already recorded, or one
// of this set's, followed at most `budget` steps), else the advanced tail item itself.
ByteMatcher::Item ByteMatcher::find_chain_top(size_t first, size_t last, int budget) const {
  const Item none{kNoChain, 0, 0};
  const Item& head = items_[waiting_[first].second];
  const KeyNode target{head.origin, grammar_->production(head.prod).lhs};
  for (size_t e = first; e < last; ++e) {
    const Item& item = items_[waiting_[e].second];
    if (!is_tail(item) || KeyNode{item.origin, grammar_->production(item.prod).lhs} != target) {
      return none;
    }
  }
  const Item own = advanced(head);
  const uint32_t this_set = static_cast<uint32_t>(waiting_begin_.size() - 2);
  if (target.first != this_set) {
    const Item* top = chain_top(target.first, target.second);
    return top != nullptr ? *top : own;
  }
  if (budget == 0) return own;
  const auto group = waiting_for(target.first, target.second);
  if (group.empty()) return own;
  const size_t at = static_cast<size_t>(group.data() - waiting_.data());
  if (&group.front() == &waiting_[first]) return own;  // a unit cycle: stop here
  const Item top = find_chain_top(at, at + group.size(), budget - 1);
  return top.prod != kNoChain ? top : own;
}

const ByteMatcher::Item* ByteMatcher::chain_top(uint32_t set, uint32_t nt) const {
  const auto group = waiting_for(set, nt);
  if (group.empty()) return nullptr;
  const Item& top = chain_tops_[static_cast<size_t>(group.data() - waiting_.data())];
  return top.prod == kNoChain ? nullptr : &top;
}

std::span<const std::pair<uint32_t, uint32_t>> ByteMatcher::waiting_for(uint32_t set,
                                                                         uint32_t nt) const {
  const auto first = waiting_.begin() + waiting_begin_[set];
  const auto last = waiting_.begin() + waiting_begin_[set + 1];
  const auto lo = std::lower_bound(first, last, std::make_pair(nt, uint32_t{0}));
  auto hi = lo;
  while (hi != last && hi->first == nt) ++hi;
  return {lo, hi};
}

bool ByteMatcher::accept_byte(uint8_t byte) {
  const uint32_t k = static_cast<uint32_t>(set_begin_.size());
  const size_t prev_begin = set_begin_.back();
  const size_t prev_end = items_.size();
  set_begin_.push_back(static_cast<uint32_t>(prev_end));
  SetBuilder builder(*this, k);
  for (size_t i = prev_begin; i < prev_end; ++i) {
    Symbol sym;
    const Item item = items_[i];
    if (next_symbol(item, &sym) && is_terminal(sym) &&
        grammar_->terminal(terminal_index(sym)).test(byte)) {
      builder.add(advanced(item));
    }
  }
  if (items_.size() == prev_end) {
    set_begin_.pop_back();
    return false;
  }
  builder.close();
  index_waiting_items();
  return true;
}

bool ByteMatcher::accept_bytes(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!accept_byte(static_cast<uint8_t>(bytes[i]))) {
      rollback(i);
      return false;
    }
  }
  return true;
}

void ByteMatcher::rollback(size_t n) {
  AFM_CHECK(n <= consumed());
  if (n == 0) return;
  const size_t keep_sets = set_begin_.size() - n;
  items_.resize(set_begin_[keep_sets]);
  set_begin_.resize(keep_sets);
  waiting_.resize(waiting_begin_[keep_sets]);
  chain_tops_.resize(waiting_.size());
  waiting_begin_.resize(keep_sets + 1);
}

bool ByteMatcher::is_complete() const {
  const uint32_t start = grammar_->start();
  for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
    const Item& item = items_[i];
    if (item.origin == 0 && grammar_->production(item.prod).lhs == start && complete(item)) {
      return true;
    }
  }
  return false;
}

bool ByteMatcher::opened_unique_array() const {
  if (!grammar_->has_unique_arrays() || consumed() == 0) return false;
  const uint32_t previous = static_cast<uint32_t>(consumed() - 1);
  for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
    const Item& item = items_[i];
    const Production& p = grammar_->production(item.prod);
    if (item.dot == 1 && item.origin == previous && !p.repeat && grammar_->unique_array(p.lhs)) {
      return true;
    }
  }
  return false;
}

ByteSet ByteMatcher::allowed_next_bytes() const {
  ByteSet allowed;
  for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
    Symbol sym;
    if (next_symbol(items_[i], &sym) && is_terminal(sym)) {
      allowed |= grammar_->terminal(terminal_index(sym));
    }
  }
  return allowed;
}

namespace {

// Tags opening the key's entries (above any suffix id, terminal index or count in practice).
constexpr uint32_t kNodeEnd = UINT32_MAX;  // ends the list of the current set, then of each node
constexpr uint32_t kTopTail = UINT32_MAX - 1;
constexpr uint32_t kTopSeq = UINT32_MAX - 2;
constexpr uint32_t kTopRep = UINT32_MAX - 3;
constexpr uint32_t kTail = UINT32_MAX - 4;
constexpr uint32_t kSeq = UINT32_MAX - 5;
constexpr uint32_t kRep = UINT32_MAX - 6;
constexpr uint32_t kTooDeep = UINT32_MAX - 7;  // after a kNodeEnd: this key is unique
// Marks a node whose signature is being computed (plus its visit number).
constexpr uint32_t kInProgress = 0x80000000u;
// signature() recurses once per nesting level of the parse; past this many (JSON nested
// thousands deep) the key is made unique instead.
constexpr int kMaxSignatureDepth = 4096;

}  // namespace

bool ByteMatcher::is_tail(const Item& item) const {
  const Production& p = grammar_->production(item.prod);
  if (p.repeat) return p.max != kUnbounded && p.max - item.dot == 1;
  return item.dot + 1 == p.rhs.size();
}

// A node whose waiting items are all tails completing one node behaves as that node: the
// chain top recorded for it names the node where the chain ends.
ByteMatcher::KeyNode ByteMatcher::resolve(KeyNode node) const {
  const Item* top = chain_top(node.first, node.second);
  if (top == nullptr) return node;
  return {top->origin, grammar_->production(top->prod).lhs};
}

ByteMatcher::KeyEntry ByteMatcher::describe(const Item& item, bool top) const {
  const Production& p = grammar_->production(item.prod);
  KeyEntry e;
  e.node = {item.origin, p.lhs};
  Symbol sym = 0;
  next_symbol(item, &sym);
  const bool tail = is_tail(item);
  if (top) {
    e.words[e.size++] = tail ? kTopTail : p.repeat ? kTopRep : kTopSeq;
    e.words[e.size++] = terminal_index(sym);
  } else {
    e.words[e.size++] = tail ? kTail : p.repeat ? kRep : kSeq;
  }
  if (tail) return e;
  if (p.repeat) {
    e.words[e.size++] = p.min > item.dot ? p.min - item.dot : 0;
    e.words[e.size++] = p.max == kUnbounded ? kUnbounded : p.max - item.dot;
    // What is repeated: an item waiting for its copy to complete may start another copy, so
    // two repetitions with equal counts left but different bodies accept different strings
    // (at the top, the terminal scanned is the body and is already written).
    if (!top) e.words[e.size++] = grammar_->suffix_id(item.prod, 0);
  } else {
    e.words[e.size++] = grammar_->suffix_id(item.prod, item.dot + 1);
  }
  return e;
}

// Sorts entries[first, end) (short: insertion sort) and appends them to `out`, each entry's
// descriptor words followed by its child's signature, writing an entry equal to the previous
// one once.
void ByteMatcher::append_entries(std::vector<KeyEntry>& entries, size_t first,
                                 std::vector<uint32_t>* out) {
  for (size_t i = first + 1; i < entries.size(); ++i) {
    for (size_t j = i; j > first && entries[j] < entries[j - 1]; --j) {
      std::swap(entries[j], entries[j - 1]);
    }
  }
  for (size_t i = first; i < entries.size(); ++i) {
    if (i > first && !(entries[i - 1] < entries[i])) continue;  // equal to the previous entry
    out->insert(out->end(), entries[i].words.begin(), entries[i].words.begin() + entries[i].size);
    out->push_back(entries[i].child);
  }
}

// The signature of a node: the id of its content (its items' descriptors with their children's
// signatures, sorted, duplicates dropped) among the contents interned by this state_key() call.
// Equal content => equal completion behaviour, so nodes of different sets with one future (the
// same repetition entered at several positions, an ambiguous pattern's many match starts) get
// one signature and the key stays bounded. Ids are handed out in post-order, so equal states
// produce equal numbering. A node met again while its own content is being computed (a cycle
// within one set) is referred to by its visit number; the key then lists visit -> signature.
// Working memory is the scratch's: entries are a stack (a call's own entries sit above its
// caller's until it returns), contents one flat buffer.
uint32_t ByteMatcher::signature(KeyNode raw) const {
  KeyScratch& x = key_scratch_;
  for (const auto& [seen, sig] : x.visited) {
    if (seen != raw) continue;
    if (sig >= kInProgress) x.cyclic = true;
    return sig;
  }
  const KeyNode node = resolve(raw);
  if (node != raw) {
    const uint32_t sig = signature(node);
    x.visited.emplace_back(raw, sig);
    return sig;
  }
  const size_t visit = x.visited.size();
  x.visited.emplace_back(raw, kInProgress + static_cast<uint32_t>(visit));
  const size_t first = x.entries.size();
  if (++x.depth > kMaxSignatureDepth) {  // absurd nesting: keep the stack bounded (see below)
    x.too_deep = true;
  } else {
    for (const auto& [waited, i] : waiting_for(node.first, node.second)) {
      KeyEntry e = describe(items_[i], false);
      e.child = signature(e.node);
      x.entries.push_back(e);
    }
  }
  --x.depth;
  const size_t begin = x.flat.size();
  append_entries(x.entries, first, &x.flat);
  x.entries.resize(first);
  const auto at = [&](size_t i) { return x.flat.begin() + static_cast<std::ptrdiff_t>(i); };
  uint32_t sig = 0;
  while (sig < x.contents.size() &&
         !std::equal(at(x.contents[sig].first), at(x.contents[sig].second), at(begin), x.flat.end())) {
    ++sig;
  }
  if (sig == x.contents.size()) {
    x.contents.emplace_back(begin, x.flat.size());
  } else {
    x.flat.resize(begin);
  }
  x.visited[visit].second = sig;
  return sig;
}

void ByteMatcher::state_key(std::vector<uint32_t>* key) const {
  key->clear();
  KeyScratch& x = key_scratch_;
  x.visited.clear();
  x.entries.clear();
  x.flat.clear();
  x.contents.clear();
  x.cyclic = false;
  x.too_deep = false;
  x.depth = 0;
  // The current set contributes only items that scan a terminal next: an item waiting for a
  // nonterminal can only advance through a completion, so it is reached through the nodes.
  // Entering a repetition and being inside it then give the same key.
  std::vector<KeyEntry>& top = x.top;
  top.clear();
  Symbol sym;
  for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
    if (next_symbol(items_[i], &sym) && is_terminal(sym)) {
      KeyEntry e = describe(items_[i], true);
      e.child = signature(e.node);
      top.push_back(e);
    }
  }
  append_entries(top, 0, key);
  for (const auto& [begin, end] : x.contents) {
    key->push_back(kNodeEnd);
    key->insert(key->end(), x.flat.begin() + static_cast<std::ptrdiff_t>(begin),
                x.flat.begin() + static_cast<std::ptrdiff_t>(end));
  }
  if (x.too_deep) {
    // Nodes below the depth bound were not described, so this key must not equal any other
    // key: a number never used before makes it unique (the state is simply never shared).
    static std::atomic<uint32_t> unique{0};
    key->push_back(kNodeEnd);
    key->push_back(kTooDeep);
    key->push_back(unique.fetch_add(1));
  }
  if (x.cyclic) {  // visit numbers were used: say which signature each visit got
    key->push_back(kNodeEnd);
    for (const auto& [raw, sig] : x.visited) key->push_back(sig);
  }
}

std::vector<ByteSet> ByteMatcher::byte_classes() const {
  // Partition refinement: start from the bytes of the first terminal scanned and split every
  // class by each further distinct terminal (C & T, C \ T), bytes of no class so far forming a
  // new one. Bytes in one class are in exactly the same terminals, so the same items scan
  // them. Word-wide set operations: a row costs a few per terminal, not a pass per byte.
  thread_local std::vector<uint32_t> terminals;  // distinct terminals the current set scans
  terminals.clear();
  Symbol sym;
  for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
    if (next_symbol(items_[i], &sym) && is_terminal(sym) &&
        std::find(terminals.begin(), terminals.end(), terminal_index(sym)) == terminals.end()) {
      terminals.push_back(terminal_index(sym));
    }
  }
  std::vector<ByteSet> classes;
  ByteSet covered;
  for (uint32_t index : terminals) {
    const ByteSet& t = grammar_->terminal(index);
    const size_t before = classes.size();
    for (size_t c = 0; c < before; ++c) {
      const ByteSet inside = classes[c] & t;
      if (inside.empty() || inside == classes[c]) continue;
      classes.push_back(classes[c] - t);
      classes[c] = inside;
    }
    const ByteSet fresh = t - covered;
    if (!fresh.empty()) classes.push_back(fresh);
    covered |= t;
  }
  // Ordered by lowest byte, so equal states list their classes alike.
  std::sort(classes.begin(), classes.end(),
            [](const ByteSet& x, const ByteSet& y) { return x.lowest() < y.lowest(); });
  return classes;
}

bool ByteMatcher::matches(std::shared_ptr<const Grammar> grammar, std::string_view text) {
  if (grammar->has_unique_arrays()) return UniqueItemsGuard::matches(std::move(grammar), text);
  ByteMatcher m(std::move(grammar));
  return m.accept_bytes(text) && m.is_complete();
}

}  // namespace afm::guided
