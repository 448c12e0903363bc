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

// The lexical part of a scan, saved and restored by the dead-end walk (the element only grows
// during the walk, so its length is enough).
struct ScanMark {
  std::vector<uint8_t> containers;
  bool in_string, escaped;
  size_t element_size;
};

ScanMark mark(const UniqueScan& s) {
  return {s.containers, s.in_string, s.escaped, s.element.size()};
}

void restore(UniqueScan& s, const ScanMark& m) {
  s.containers = m.containers;
  s.in_string = m.in_string;
  s.escaped = m.escaped;
  s.element.resize(m.element_size);
}

// True when some completion of the open unique array's current element (m and scan at the
// same position) is not a duplicate. Depth-first over the grammar's next bytes, following only
// bytes that keep the element a prefix of a finished one: a byte that leaves them all starts a
// text no finished element has, and the grammar completes any prefix it accepts. Each step
// follows an edge of the finished elements' trie, so the walk is bounded by their total length.
bool has_fresh_completion(ByteMatcher& m, UniqueScan& scan) {
  struct Level {
    ByteSet todo;
    ScanMark saved;
  };
  std::vector<Level> stack;
  stack.push_back({m.allowed_next_bytes(), mark(scan)});
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
    level.todo = level.todo - [&] { ByteSet one; one.set(b); return one; }();
    restore(scan, level.saved);
    if (scan.at_array_level() && (b == ',' || b == ']')) {
      // The element ends here: fresh unless it repeats one (an empty one is `[]` closing).
      found = scan.element.empty() || !scan.is_duplicate(scan.element);
      continue;
    }
    const bool skipped = scan.at_array_level() && scan.element.empty() && is_json_space(b);
    if (!skipped && !scan.known_prefix(scan.element + static_cast<char>(b))) {
      found = true;
      continue;
    }
    AFM_CHECK(m.accept_byte(b));  // allowed_next_bytes() said so
    ++stepped;
    scan.feed(b, false);  // no boundary here; nested unique arrays are never marked
    stack.push_back({m.allowed_next_bytes(), mark(scan)});
  }
  m.rollback(stepped);
  return found;
}

}  // namespace

bool UniqueScan::feed(uint8_t b, bool unique) {
  const bool inside = open() && containers.size() >= unique_level;
  if (in_string) {
    if (inside) element.push_back(static_cast<char>(b));
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
    if (!element.empty()) {
      if (is_duplicate(element)) return false;
      added.push_back(std::move(element));
      element.clear();
    }
    if (b == ']') {
      containers.pop_back();
      unique_level = 0;
      seen_stale = true;
      added.clear();
    }
    return true;
  }
  if (at_array_level() && element.empty() && is_json_space(b)) return true;
  if (inside) element.push_back(static_cast<char>(b));
  switch (b) {
    case '"':
      in_string = true;
      break;
    case '[':
    case '{':
      containers.push_back(b);
      if (b == '[' && unique && !open()) unique_level = containers.size();
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

bool UniqueScan::is_duplicate(const std::string& text) const {
  if (seen && !seen_stale && seen->count(text)) return true;
  return std::find(added.begin(), added.end(), text) != added.end();
}

bool UniqueScan::known_prefix(std::string_view prefix) const {
  if (seen && !seen_stale) {
    auto it = seen->lower_bound(std::string(prefix));
    if (it != seen->end() && std::string_view(*it).starts_with(prefix)) return true;
  }
  return std::any_of(added.begin(), added.end(),
                     [&](const std::string& e) { return std::string_view(e).starts_with(prefix); });
}

UniqueScan UniqueItemsGuard::fresh_scan() const {
  UniqueScan scan = scan_;
  scan.seen = &seen_;
  scan.seen_stale = false;
  scan.added.clear();
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
    if (scan.opens_array(b) && !scan.open()) {
      step_to(i + 1);
      unique = m.opened_unique_array();
    }
    ok = scan.feed(b, unique);
  }
  if (ok && scan.open() && scan.known_prefix(scan.element)) {
    step_to(bytes.size());
    ok = has_fresh_completion(m, scan);
  }
  m.rollback(stepped);
  return ok;
}

bool UniqueItemsGuard::observe(const ByteMatcher& m, uint8_t byte) {
  const bool unique = scan_.opens_array(byte) && !scan_.open() && m.opened_unique_array();
  if (unique) unique_opens_.push_back(text_.size());
  text_.push_back(static_cast<char>(byte));
  scan_.seen = &seen_;
  const bool ok = scan_.feed(byte, unique);
  for (std::string& e : scan_.added) seen_.insert(std::move(e));
  scan_.added.clear();
  if (scan_.seen_stale) seen_.clear();
  scan_.seen_stale = false;
  return ok;
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
  scan_.seen = &seen_;
  size_t next_open = 0;
  for (size_t i = 0; i < text_.size(); ++i) {
    const bool unique = next_open < unique_opens_.size() && unique_opens_[next_open] == i;
    if (unique) ++next_open;
    scan_.feed(static_cast<uint8_t>(text_[i]), unique);
    for (std::string& e : scan_.added) seen_.insert(std::move(e));
    scan_.added.clear();
    if (scan_.seen_stale) seen_.clear();
    scan_.seen_stale = false;
  }
}

void UniqueItemsGuard::filter_mask(ByteMatcher& m, const TokenVocabulary& vocabulary,
                                   std::span<uint32_t> words) const {
  auto check = [&](int32_t id) {
    if (has_bit(words, id) && !allows(m, vocabulary.token_bytes(id))) clear_bit(words, id);
  };
  const UniqueScan scan = fresh_scan();
  if (!scan.open()) {  // only a token that opens a unique array and ends an element in it
    for (int32_t id : vocabulary.tokens_opening_arrays()) check(id);
    return;
  }
  if (!scan.in_string) {  // few tokens are allowed between a string's quotes
    for (size_t w = 0; w < words.size(); ++w) {
      for (uint32_t bits = words[w]; bits != 0; bits &= bits - 1) {
        check(static_cast<int32_t>(w * 32 + static_cast<size_t>(std::countr_zero(bits))));
      }
    }
    return;
  }
  // Inside a string a token without '"' or '\' only extends the element: it matters only if
  // the element stays a prefix of a finished one, i.e. the token is a prefix of the rest of one.
  for (int32_t id : vocabulary.tokens_leaving_strings()) check(id);
  if (!scan.known_prefix(scan.element)) return;
  const auto nodes = vocabulary.nodes();
  const auto ids = vocabulary.token_ids();
  for (auto it = seen_.lower_bound(scan.element);
       it != seen_.end() && std::string_view(*it).starts_with(scan.element); ++it) {
    const std::string_view rest = std::string_view(*it).substr(scan.element.size());
    size_t node = 0, end = nodes.size();  // the children of the current trie position
    for (size_t d = 0; d < rest.size(); ++d) {
      while (node < end && nodes[node].byte != static_cast<uint8_t>(rest[d])) {
        node = nodes[node].subtree_end;
      }
      if (node >= end) break;
      for (uint32_t k = 0; k < nodes[node].num_tokens; ++k) check(ids[nodes[node].first_token + k]);
      end = nodes[node].subtree_end;
      ++node;
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
