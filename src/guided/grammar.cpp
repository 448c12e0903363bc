// Grammar builder and the lowering to the flat production form the matchers run on.
#include "guided/grammar.h"

#include <bit>
#include <map>
#include <unordered_map>

#include "base/error.h"

namespace afm::guided {

int ByteSet::count() const {
  int n = 0;
  for (uint64_t w : bits_) n += std::popcount(w);
  return n;
}

Expr GrammarBuilder::add(Node node) {
  if (nodes_.size() >= max_nodes_) {
    throw_error(ErrorCode::kUnsupported, "grammar too large (more than " +
                                             std::to_string(max_nodes_) + " expression nodes; budget: grammar size)");
  }
  nodes_.push_back(node);
  return Expr{static_cast<uint32_t>(nodes_.size() - 1)};
}

Expr GrammarBuilder::empty() { return add({Kind::kEmpty}); }
Expr GrammarBuilder::nothing() { return add({Kind::kNothing}); }

Expr GrammarBuilder::bytes(const ByteSet& set) {
  if (set.empty()) return nothing();
  sets_.push_back(set);
  return add({Kind::kBytes, static_cast<uint32_t>(sets_.size() - 1)});
}

Expr GrammarBuilder::byte_range(uint8_t lo, uint8_t hi) {
  ByteSet s;
  if (lo <= hi) s.set_range(lo, hi);
  return bytes(s);
}

Expr GrammarBuilder::literal(std::string_view text) {
  if (text.empty()) return empty();
  Node n{Kind::kLiteral};
  n.first = static_cast<uint32_t>(text_.size());
  n.count = static_cast<uint32_t>(text.size());
  text_.append(text);
  return add(n);
}

Expr GrammarBuilder::seq(std::vector<Expr> items) {
  if (items.size() == 1) return items[0];
  if (items.empty()) return empty();
  Node n{Kind::kSeq};
  n.first = static_cast<uint32_t>(kids_.size());
  n.count = static_cast<uint32_t>(items.size());
  for (Expr e : items) kids_.push_back(e.index);
  return add(n);
}

Expr GrammarBuilder::alt(std::vector<Expr> options) {
  if (options.size() == 1) return options[0];
  if (options.empty()) return nothing();
  Node n{Kind::kAlt};
  n.first = static_cast<uint32_t>(kids_.size());
  n.count = static_cast<uint32_t>(options.size());
  for (Expr e : options) kids_.push_back(e.index);
  return add(n);
}

Expr GrammarBuilder::repeat(Expr item, uint32_t min, uint32_t max) {
  AFM_CHECK(min <= max);
  if (max == 0) return empty();
  if (min == 1 && max == 1) return item;
  // A repetition of x?, x* or x+ is one repetition of x: (x?){m,n} = x{0,n}, (x*){m,n} = x*,
  // (x+){m,n} = x{m,}. Same language, but not ambiguous: a nest of them (`x****`, `(a*)*`)
  // otherwise lets an Earley set hold one item per way of splitting the text among the levels,
  // and matching grows quadratically with the text (a fuzzed GBNF grammar with 140 nested
  // stars took 9 s for 256 bytes).
  const Node& inner = nodes_[item.index];
  if (inner.kind == Kind::kRepeat) {
    const Expr x{inner.first};
    if (inner.a == 0 && inner.b == 1) return repeat(x, 0, max);
    if (inner.a == 0 && inner.b == kUnbounded) return item;
    if (inner.a == 1 && inner.b == kUnbounded) return repeat(x, min, kUnbounded);
  }
  Node n{Kind::kRepeat, min, max};
  n.first = item.index;
  return add(n);
}

Expr GrammarBuilder::ref(RuleId rule) {
  AFM_CHECK(rule < rules_.size());
  return add({Kind::kRef, rule});
}

RuleId GrammarBuilder::declare(std::string name) {
  rules_.push_back({std::move(name), -1});
  return static_cast<RuleId>(rules_.size() - 1);
}

void GrammarBuilder::define(RuleId rule, Expr body) {
  AFM_CHECK(rule < rules_.size() && rules_[rule].body < 0);
  rules_[rule].body = body.index;
}

// Turns the expression arena into productions: alternatives and repetitions get their own
// nonterminals, sequences and literals are inlined into the production that uses them.
class GrammarBuilder::Lowering {
 public:
  Lowering(const GrammarBuilder& b, Grammar& g)
      : b_(b), g_(g), rule_nt_(b.rules_.size(), -1), node_nt_(b.nodes_.size(), -1) {}

  // The nonterminal of rule r, or -1 when nothing reachable refers to it.
  int64_t lowered(RuleId r) const { return rule_nt_[r]; }

  uint32_t nt_for_rule(RuleId r) {
    if (rule_nt_[r] >= 0) return static_cast<uint32_t>(rule_nt_[r]);
    AFM_CHECK(b_.rules_[r].body >= 0);  // every reachable rule must be defined
    uint32_t nt = new_nt(b_.rules_[r].name);
    rule_nt_[r] = nt;
    pending_.push_back({nt, static_cast<uint32_t>(b_.rules_[r].body)});
    return nt;
  }

  void run() {
    while (!pending_.empty()) {
      auto [nt, node] = pending_.back();
      pending_.pop_back();
      add_productions(nt, node);
    }
  }

 private:
  uint32_t new_nt(std::string name) {
    g_.nt_productions_.emplace_back();
    g_.names_.push_back(std::move(name));
    return static_cast<uint32_t>(g_.nt_productions_.size() - 1);
  }

  Symbol terminal(const ByteSet& set) {
    auto [it, inserted] = terminal_ids_.emplace(set.words(), g_.terminals_.size());
    if (inserted) g_.terminals_.push_back(set);
    return ~static_cast<Symbol>(it->second);
  }

  Symbol byte_terminal(uint8_t byte) {
    ByteSet s;
    s.set(byte);
    return terminal(s);
  }

  // The symbol standing for node `index` inside a production. Alternatives and repetitions get
  // a nonterminal whose productions are added later from the worklist, so lowering never
  // recurses: nesting depth is bounded only by memory (a 20,000-element prefixItems tuple nests
  // 20,000 alternatives).
  Symbol symbol_for(uint32_t index) {
    const Node& n = b_.nodes_[index];
    if (n.kind == Kind::kBytes) return terminal(b_.sets_[n.a]);
    if (n.kind == Kind::kLiteral && n.count == 1) return byte_terminal(b_.text_[n.first]);
    if (n.kind == Kind::kRef) return static_cast<Symbol>(nt_for_rule(n.a));
    if (node_nt_[index] >= 0) return static_cast<Symbol>(node_nt_[index]);
    uint32_t nt = new_nt("_" + std::to_string(index));
    node_nt_[index] = nt;
    pending_.push_back({nt, index});
    return static_cast<Symbol>(nt);
  }

  // Appends the symbols of node `index` read as a sequence: nested sequences and literals are
  // inlined (with an explicit stack), anything else is one symbol.
  void append_seq(uint32_t index, std::vector<Symbol>& out) {
    seq_stack_.assign(1, index);
    while (!seq_stack_.empty()) {
      const uint32_t i = seq_stack_.back();
      seq_stack_.pop_back();
      const Node& n = b_.nodes_[i];
      switch (n.kind) {
        case Kind::kEmpty:
          break;
        case Kind::kSeq:
          for (uint32_t k = n.count; k-- > 0;) seq_stack_.push_back(b_.kids_[n.first + k]);
          break;
        case Kind::kLiteral:
          for (uint32_t k = 0; k < n.count; ++k) out.push_back(byte_terminal(b_.text_[n.first + k]));
          break;
        default:
          out.push_back(symbol_for(i));
      }
    }
  }

  void add_productions(uint32_t nt, uint32_t index) {
    const Node& n = b_.nodes_[index];
    if (n.kind == Kind::kNothing) return;
    if (n.kind == Kind::kAlt) {
      for (uint32_t i = 0; i < n.count; ++i) {
        Production p;
        p.lhs = nt;
        append_seq(b_.kids_[n.first + i], p.rhs);
        push(std::move(p));
      }
      return;
    }
    Production p;
    p.lhs = nt;
    if (n.kind == Kind::kRepeat) {
      p.repeat = true;
      p.min = n.a;
      p.max = n.b;
      p.rhs.push_back(symbol_for(n.first));
    } else {
      append_seq(index, p.rhs);
    }
    push(std::move(p));
  }

  void push(Production p) {
    g_.nt_productions_[p.lhs].push_back(static_cast<uint32_t>(g_.productions_.size()));
    g_.productions_.push_back(std::move(p));
  }

  const GrammarBuilder& b_;
  Grammar& g_;
  std::vector<int64_t> rule_nt_, node_nt_;
  std::vector<std::pair<uint32_t, uint32_t>> pending_;  // (nonterminal, node) to lower
  std::vector<uint32_t> seq_stack_;
  std::map<std::array<uint64_t, 4>, size_t> terminal_ids_;
};

namespace {

// Least fixpoint of "nonterminal has a production whose symbols all satisfy `ok`", where a
// terminal's answer is `terminal_ok` and a nonterminal's is its own value. Linear in the
// grammar's size (a worklist counting each production's unsatisfied symbols): a round-robin
// iteration needs one pass per link of a chain, quadratic on a deeply nested schema.
template <typename TerminalOk>
std::vector<bool> fixpoint(const std::vector<Production>& prods, size_t n_nt,
                           TerminalOk terminal_ok) {
  std::vector<bool> result(n_nt, false);
  std::vector<uint32_t> missing(prods.size(), 0);
  std::vector<std::vector<uint32_t>> users(n_nt);  // productions waiting on a nonterminal
  std::vector<uint32_t> ready;                     // nonterminals just found true
  auto settle = [&](uint32_t p) {
    if (missing[p] == 0 && !result[prods[p].lhs]) {
      result[prods[p].lhs] = true;
      ready.push_back(prods[p].lhs);
    }
  };
  for (uint32_t p = 0; p < prods.size(); ++p) {
    const Production& prod = prods[p];
    const size_t n = prod.repeat && prod.min == 0 ? 0 : prod.rhs.size();  // x{0,..} holds
    bool blocked = false;
    for (size_t i = 0; i < n; ++i) {
      const Symbol s = prod.rhs[i];
      if (is_terminal(s)) {
        blocked = blocked || !terminal_ok(s);
      } else {
        ++missing[p];
        users[s].push_back(p);
      }
    }
    if (blocked) missing[p] = UINT32_MAX;  // never holds
    settle(p);
  }
  while (!ready.empty()) {
    const uint32_t nt = ready.back();
    ready.pop_back();
    for (uint32_t p : users[nt]) {
      if (missing[p] != UINT32_MAX && missing[p] > 0) --missing[p];
      settle(p);
    }
  }
  return result;
}

}  // namespace

std::shared_ptr<const Grammar> GrammarBuilder::build(RuleId start) const {
  auto g = std::make_shared<Grammar>();
  Lowering lowering(*this, *g);
  g->start_ = lowering.nt_for_rule(start);
  lowering.run();

  const size_t n_nt = g->nt_productions_.size();
  for (RuleId r : unique_rules_) {
    if (lowering.lowered(r) < 0) continue;
    if (g->unique_arrays_.empty()) g->unique_arrays_.assign(n_nt, false);
    g->unique_arrays_[static_cast<size_t>(lowering.lowered(r))] = true;
  }
  auto productive = fixpoint(g->productions_, n_nt,
                             [&](Symbol s) { return !g->terminals_[terminal_index(s)].empty(); });
  // Drop productions that cannot finish; a repetition of an unproductive symbol keeps only
  // its empty case.
  std::vector<Production> kept;
  for (auto& list : g->nt_productions_) list.clear();
  for (Production& p : g->productions_) {
    bool ok = true;
    for (Symbol s : p.rhs) ok = ok && (is_terminal(s) || productive[s]);
    if (!ok && p.repeat && p.min == 0) {
      const uint32_t lhs = p.lhs;
      p = Production();
      p.lhs = lhs;
      ok = true;
    }
    if (!ok) continue;
    g->nt_productions_[p.lhs].push_back(static_cast<uint32_t>(kept.size()));
    kept.push_back(std::move(p));
  }
  g->productions_ = std::move(kept);
  g->nullable_ = fixpoint(g->productions_, n_nt, [](Symbol) { return false; });
  g->number_suffixes();
  return g;
}

// Suffixes are interned back to front: the id of rhs[d..] is that of the pair (rhs[d], id of
// rhs[d+1..]); the empty suffix is 0.
void Grammar::number_suffixes() {
  size_t total = 0;
  for (const Production& p : productions_) total += p.rhs.size();
  std::unordered_map<uint64_t, uint32_t> ids;
  ids.reserve(total);
  suffix_begin_.clear();
  suffix_ids_.clear();
  suffix_begin_.reserve(productions_.size());
  suffix_ids_.reserve(total + productions_.size());
  for (const Production& p : productions_) {
    suffix_begin_.push_back(static_cast<uint32_t>(suffix_ids_.size()));
    suffix_ids_.resize(suffix_ids_.size() + p.rhs.size() + 1);
    uint32_t* out = suffix_ids_.data() + suffix_begin_.back();
    out[p.rhs.size()] = 0;
    for (size_t d = p.rhs.size(); d-- > 0;) {
      const uint64_t pair = (uint64_t{static_cast<uint32_t>(p.rhs[d])} << 32) | out[d + 1];
      out[d] = ids.emplace(pair, static_cast<uint32_t>(ids.size() + 1)).first->second;
    }
  }
}

size_t Grammar::memory_bytes() const {
  size_t bytes = productions_.capacity() * sizeof(Production) +
                 nt_productions_.capacity() * sizeof(std::vector<uint32_t>) +
                 nullable_.capacity() / 8 + suffix_begin_.capacity() * sizeof(uint32_t) +
                 suffix_ids_.capacity() * sizeof(uint32_t) + terminals_.capacity() * sizeof(ByteSet) +
                 names_.capacity() * sizeof(std::string) + unique_arrays_.capacity() / 8;
  for (const Production& p : productions_) bytes += p.rhs.capacity() * sizeof(Symbol);
  for (const auto& list : nt_productions_) bytes += list.capacity() * sizeof(uint32_t);
  for (const std::string& name : names_) bytes += name.capacity() > 15 ? name.capacity() : 0;
  return bytes;
}

std::string Grammar::to_string() const {
  std::string out;
  auto sym = [&](Symbol s) {
    if (!is_terminal(s)) return names_[s];
    const ByteSet& set = terminals_[terminal_index(s)];
    std::string t = "[";
    for (int b = 0; b < 256; ++b) {
      if (!set.test(static_cast<uint8_t>(b))) continue;
      int e = b;
      while (e + 1 < 256 && set.test(static_cast<uint8_t>(e + 1))) ++e;
      auto hex = [](int v) {
        const char* d = "0123456789abcdef";
        return std::string("\\x") + d[v >> 4] + d[v & 15];
      };
      t += hex(b);
      if (e > b) t += "-" + hex(e);
      b = e;
    }
    return t + "]";
  };
  for (const Production& p : productions_) {
    out += names_[p.lhs] + " ::=";
    for (Symbol s : p.rhs) out += " " + sym(s);
    if (p.repeat) {
      out += "{" + std::to_string(p.min) + "," +
             (p.max == kUnbounded ? std::string() : std::to_string(p.max)) + "}";
    }
    out += "\n";
  }
  return out;
}

}  // namespace afm::guided
