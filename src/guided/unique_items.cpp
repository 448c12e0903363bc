// uniqueItems beside the grammar; see unique_items.h for the contract.
#include "guided/unique_items.h"

#include <algorithm>

#include "base/error.h"

namespace afm::guided {

namespace {

bool is_json_space(uint8_t b) { return b == ' ' || b == '\t' || b == '\n' || b == '\r'; }

void clear_bit(std::span<uint32_t> words, int32_t id) {
  words[static_cast<size_t>(id) >> 5] &= ~(uint32_t{1} << (id & 31));
}

bool has_bit(std::span<const uint32_t> words, int32_t id) {
  return (words[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1;
}

bool completable(ByteMatcher& m, const UniqueScan& scan);

// For the open array `j` whose element is a prefix of an earlier one (none outside it is):
// true when some continuation from here finishes that element fresh with every array inside
// it still completable. Depth-first over the grammar's next bytes, following only bytes that
// keep the element on an earlier element's text; each step follows an edge of the trie of
// those texts, so the walk is bounded by their total length. A byte that leaves them all (or
// an end that is no repeat) settles array j; the arrays inside j are then checked from there.
bool walk_earlier_elements(ByteMatcher& m, const UniqueScan& start, size_t j) {
  struct Level {
    ByteSet todo;
    UniqueScan scan;
  };
  std::vector<Level> stack;
  stack.push_back({m.allowed_next_bytes(), start});
  size_t stepped = 0;
  bool found = false;
  while (!stack.empty() && !found) {
    Level& level = stack.back();
    if (level.todo.empty()) {
      stack.pop_back();
      if (!stack.empty()) {
        m.rollback(1);
        --stepped;
      }
      continue;
    }
    const auto b = static_cast<uint8_t>(level.todo.lowest());
    ByteSet one;
    one.set(b);
    level.todo = level.todo - one;
    UniqueScan next = level.scan;
    if (j + 1 == next.arrays.size() && next.at_array_level() && (b == ',' || b == ']')) {
      // Array j's element ends here (the arrays inside it are closed): fresh unless it repeats
      // one; an empty one is `[]` closing.
      const UniqueScan::Array& a = next.arrays[j];
      found = a.element.empty() || !a.is_duplicate(a.element);
      continue;
    }
    AFM_CHECK(m.accept_byte(b));  // allowed_next_bytes() said so
    ++stepped;
    const bool unique = next.opens_array(b) && m.opened_unique_array();
    if (!next.feed(b, unique)) {  // repeats an element of an array inside j
      m.rollback(1);
      --stepped;
      continue;
    }
    if (!next.arrays[j].known_prefix(next.arrays[j].element)) {
      found = completable(m, next);
      m.rollback(1);
      --stepped;
      continue;
    }
    stack.push_back({m.allowed_next_bytes(), std::move(next)});
  }
  m.rollback(stepped);
  return found;
}

// True when the state (m and scan at the same position) extends to a text whose unique arrays
// have distinct elements.
bool completable(ByteMatcher& m, const UniqueScan& scan) {
  const size_t j = scan.first_on_known_prefix();
  return j == scan.arrays.size() || walk_earlier_elements(m, scan, j);
}

}  // namespace

bool UniqueScan::Array::is_duplicate(const std::string& text) const {
  if (seen && seen->count(text)) return true;
  return std::find(added.begin(), added.end(), text) != added.end();
}

bool UniqueScan::Array::known_prefix(std::string_view prefix) const {
  if (seen) {
    auto it = seen->lower_bound(std::string(prefix));
    if (it != seen->end() && std::string_view(*it).starts_with(prefix)) return true;
  }
  return std::any_of(added.begin(), added.end(),
                     [&](const std::string& e) { return std::string_view(e).starts_with(prefix); });
}

size_t UniqueScan::first_on_known_prefix() const {
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (arrays[i].known_prefix(arrays[i].element)) return i;
  }
  return arrays.size();
}

// Only the innermost open array can be at its own level, so only it sees its ',' and ']'; to
// the arrays outside it every byte is element text.
bool UniqueScan::feed(uint8_t b, bool unique) {
  const size_t n = arrays.size();
  auto append_outer = [&](size_t count) {
    for (size_t i = 0; i < count; ++i) arrays[i].element.push_back(static_cast<char>(b));
  };
  if (in_string) {
    append_outer(n);
    if (escaped) {
      escaped = false;
    } else if (b == '\\') {
      escaped = true;
    } else if (b == '"') {
      in_string = false;
    }
    return true;
  }
  if (at_array_level() && (b == ',' || b == ']')) {
    Array& a = arrays.back();
    if (!a.element.empty()) {
      if (a.is_duplicate(a.element)) return false;
      a.added.push_back(std::move(a.element));
      a.element.clear();
    }
    append_outer(n - 1);
    if (b == ']') {
      containers.pop_back();
      arrays.pop_back();
    }
    return true;
  }
  const bool skip_space = at_array_level() && arrays.back().element.empty() && is_json_space(b);
  append_outer(skip_space ? n - 1 : n);
  switch (b) {
    case '"':
      in_string = true;
      break;
    case '[':
    case '{':
      containers.push_back(b);
      if (b == '[' && unique) arrays.push_back(Array{containers.size(), {}, nullptr, {}});
      break;
    case ']':
    case '}':
      if (!containers.empty()) containers.pop_back();
      break;
    default:
      break;
  }
  return true;
}

UniqueScan UniqueItemsGuard::fresh_scan() const {
  UniqueScan scan = scan_;
  for (size_t i = 0; i < scan.arrays.size(); ++i) {
    scan.arrays[i].seen = &seen_[i];
    scan.arrays[i].added.clear();
  }
  return scan;
}

bool UniqueItemsGuard::allows(ByteMatcher& m, std::string_view bytes) const {
  UniqueScan scan = fresh_scan();
  size_t stepped = 0;
  auto step_to = [&](size_t n) {
    for (; stepped < n; ++stepped) AFM_CHECK(m.accept_byte(static_cast<uint8_t>(bytes[stepped])));
  };
  bool ok = true;
  for (size_t i = 0; i < bytes.size() && ok; ++i) {
    const auto b = static_cast<uint8_t>(bytes[i]);
    bool unique = false;
    if (scan.opens_array(b)) {
      step_to(i + 1);
      unique = m.opened_unique_array();
    }
    ok = scan.feed(b, unique);
  }
  if (ok && scan.first_on_known_prefix() < scan.arrays.size()) {
    step_to(bytes.size());
    ok = completable(m, scan);
  }
  m.rollback(stepped);
  return ok;
}

bool UniqueItemsGuard::observe(const ByteMatcher& m, uint8_t byte) {
  const bool unique = scan_.opens_array(byte) && m.opened_unique_array();
  if (unique) unique_opens_.push_back(text_.size());
  text_.push_back(static_cast<char>(byte));
  scan_ = fresh_scan();
  const bool ok = scan_.feed(byte, unique);
  keep_finished();
  return ok;
}

// A byte finishes, opens or closes at most one array, and only the innermost.
void UniqueItemsGuard::keep_finished() {
  seen_.resize(scan_.arrays.size());
  for (size_t i = 0; i < scan_.arrays.size(); ++i) {
    for (std::string& e : scan_.arrays[i].added) seen_[i].insert(std::move(e));
    scan_.arrays[i].added.clear();
    scan_.arrays[i].seen = nullptr;
  }
}

void UniqueItemsGuard::rollback(size_t n) {
  AFM_CHECK(n <= text_.size());
  if (n == 0) return;
  text_.resize(text_.size() - n);
  while (!unique_opens_.empty() && unique_opens_.back() >= text_.size()) unique_opens_.pop_back();
  replay();
}

// Rebuilds the scan from the observed text (the '[' positions that opened unique arrays were
// recorded when the matcher could tell).
void UniqueItemsGuard::replay() {
  scan_ = UniqueScan();
  seen_.clear();
  size_t next_open = 0;
  for (size_t i = 0; i < text_.size(); ++i) {
    const bool unique = next_open < unique_opens_.size() && unique_opens_[next_open] == i;
    if (unique) ++next_open;
    scan_ = fresh_scan();
    scan_.feed(static_cast<uint8_t>(text_[i]), unique);
    keep_finished();
  }
}

// A token without ',', '[' or ']' outside a string neither ends an element nor opens an array:
// it appends its bytes to every open array's element (unless the first is a space skipped
// between elements), so it can only matter by keeping an element a prefix of an earlier one,
// i.e. by being a prefix of the rest of one. Those, the tokens with array syntax (from inside a
// string: only after a quote), and the tokens starting with a space where one would be skipped
// are examined; every other token is allowed as the grammar says.
void UniqueItemsGuard::filter_mask(ByteMatcher& m, const TokenVocabulary& vocabulary,
                                   std::span<uint32_t> words) const {
  auto check = [&](int32_t id) {
    if (has_bit(words, id) && !allows(m, vocabulary.token_bytes(id))) clear_bit(words, id);
  };
  const UniqueScan scan = fresh_scan();
  for (int32_t id : scan.in_string ? vocabulary.tokens_with_quote_then_array_syntax()
                                   : vocabulary.tokens_with_array_syntax()) {
    check(id);
  }
  if (!scan.open()) return;
  const auto ids = vocabulary.token_ids();
  const ByteSet spaces = [] {
    ByteSet s;
    for (uint8_t b : {' ', '\t', '\n', '\r'}) s.set(b);
    return s;
  }();
  if (scan.at_array_level() && scan.arrays.back().element.empty() &&
      !(m.allowed_next_bytes() & spaces).empty()) {
    for (uint8_t space : {' ', '\t', '\n', '\r'}) {
      const auto [first, last] = vocabulary.root_token_range(space);
      for (uint32_t k = first; k < last; ++k) check(ids[k]);
    }
  }
  const auto nodes = vocabulary.nodes();
  for (size_t i = 0; i < scan.arrays.size(); ++i) {
    const std::string& element = scan.arrays[i].element;
    for (auto it = seen_[i].lower_bound(element);
         it != seen_[i].end() && std::string_view(*it).starts_with(element); ++it) {
      const std::string_view rest = std::string_view(*it).substr(element.size());
      size_t node = 0, end = nodes.size();  // the children of the current trie position
      for (size_t d = 0; d < rest.size(); ++d) {
        while (node < end && nodes[node].byte != static_cast<uint8_t>(rest[d])) {
          node = nodes[node].subtree_end;
        }
        if (node >= end) break;
        for (uint32_t k = 0; k < nodes[node].num_tokens; ++k) {
          check(ids[nodes[node].first_token + k]);
        }
        end = nodes[node].subtree_end;
        ++node;
      }
    }
  }
}

bool UniqueItemsGuard::matches(std::shared_ptr<const Grammar> grammar, std::string_view text) {
  ByteMatcher m(std::move(grammar));
  UniqueItemsGuard guard;
  for (char c : text) {
    const auto b = static_cast<uint8_t>(c);
    if (!m.accept_byte(b) || !guard.observe(m, b)) return false;
  }
  return m.is_complete();
}

}  // namespace afm::guided
