// Earley recogniser over bytes; see byte_matcher.h for the design.
#include "guided/byte_matcher.h"

#include <unordered_set>

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
// completions of the items already placed there.
class ByteMatcher::SetBuilder {
 public:
  SetBuilder(ByteMatcher& m, uint32_t k) : m_(m), k_(k) {}

  void add(const Item& item) {
    if (seen_.insert(item).second) m_.items_.push_back(item);
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
  void complete_into(const Item& done) {
    const uint32_t lhs = m_.grammar_->production(done.prod).lhs;
    const size_t begin = m_.set_begin_[done.origin];
    const size_t end = m_.set_begin_[done.origin + 1];
    for (size_t j = begin; j < end; ++j) {
      Symbol sym;
      const Item waiting = m_.items_[j];
      if (m_.next_symbol(waiting, &sym) && sym == static_cast<Symbol>(lhs)) add(m_.advanced(waiting));
    }
  }

  ByteMatcher& m_;
  uint32_t k_;
  std::unordered_set<Item, ItemHash> seen_;
};

ByteMatcher::ByteMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  AFM_CHECK(grammar_ != nullptr);
  set_begin_.push_back(0);
  SetBuilder builder(*this, 0);
  for (uint32_t p : grammar_->productions_of(grammar_->start())) builder.add({p, 0, 0});
  builder.close();
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

bool ByteMatcher::matches(std::shared_ptr<const Grammar> grammar, std::string_view text) {
  ByteMatcher m(std::move(grammar));
  return m.accept_bytes(text) && m.is_complete();
}

}  // namespace afm::guided
