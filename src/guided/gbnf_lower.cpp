// GBNF syntax tree -> GrammarBuilder: finds the rules the start rule reaches, rejects those
// that can never finish (a grammar would silently lose them otherwise), then lowers.
#include <vector>

#include "base/error.h"
#include "guided/gbnf_ast.h"
#include "guided/gbnf_parser.h"

namespace afm::guided {
namespace {

using gbnf::Node;

void collect_refs(const Node& n, std::vector<uint32_t>& out) {
  if (n.kind == Node::Kind::kRef) out.push_back(n.rule);
  for (const Node& k : n.kids) collect_refs(k, out);
}

// Whether `n` derives some finite string, given which rules are known to.
bool finishes(const Node& n, const std::vector<char>& rule_finishes) {
  switch (n.kind) {
    case Node::Kind::kLiteral:
      return true;
    case Node::Kind::kClass:
      return !n.chars.empty();
    case Node::Kind::kRef:
      return rule_finishes[n.rule];
    case Node::Kind::kSeq:
      for (const Node& k : n.kids) {
        if (!finishes(k, rule_finishes)) return false;
      }
      return true;
    case Node::Kind::kAlt:
      for (const Node& k : n.kids) {
        if (finishes(k, rule_finishes)) return true;
      }
      return false;
    case Node::Kind::kRepeat:
      return n.min == 0 || finishes(n.kids[0], rule_finishes);
  }
  return false;
}

constexpr uint32_t kNone = UINT32_MAX;

// Whether rule r reaches itself through rules that never finish.
bool on_unfinished_cycle(const std::vector<gbnf::Rule>& rules, const std::vector<char>& done,
                         uint32_t r) {
  std::vector<char> seen(rules.size(), 0);
  std::vector<uint32_t> work = {r}, refs;
  while (!work.empty()) {
    const uint32_t x = work.back();
    work.pop_back();
    refs.clear();
    collect_refs(rules[x].body, refs);
    for (uint32_t k : refs) {
      if (done[k]) continue;
      if (k == r) return true;
      if (!seen[k]) {
        seen[k] = 1;
        work.push_back(k);
      }
    }
  }
  return false;
}

Expr lower(GrammarBuilder& b, const Node& n, const std::vector<RuleId>& ids) {
  switch (n.kind) {
    case Node::Kind::kLiteral:
      return n.text.empty() ? b.empty() : b.literal(n.text);
    case Node::Kind::kClass:
      return encode_char_class(b, n.chars, CharEncoding::kUtf8);
    case Node::Kind::kRef:
      return b.ref(ids[n.rule]);
    case Node::Kind::kSeq:
    case Node::Kind::kAlt: {
      std::vector<Expr> parts;
      parts.reserve(n.kids.size());
      for (const Node& k : n.kids) parts.push_back(lower(b, k, ids));
      if (n.kind == Node::Kind::kSeq) return parts.empty() ? b.empty() : b.seq(std::move(parts));
      return b.alt(std::move(parts));
    }
    case Node::Kind::kRepeat:
      return b.repeat(lower(b, n.kids[0], ids), n.min, n.max);
  }
  return b.nothing();
}

}  // namespace

RuleId add_gbnf_rules(GrammarBuilder& builder, std::string_view text, std::string_view root) {
  gbnf::Ast ast = gbnf::parse(text);
  auto& rules = ast.rules;
  uint32_t start = 0;
  while (start < rules.size() && !(rules[start].defined && rules[start].name == root)) ++start;
  if (start == rules.size()) {
    throw_error(ErrorCode::kInvalidArgument,
                "gbnf: no rule named '" + std::string(root) + "' (the start rule)");
  }

  // Rules reachable from the start rule, in a worklist (no recursion on the rule graph).
  std::vector<char> reached(rules.size(), 0);
  std::vector<uint32_t> work = {start}, refs;
  reached[start] = 1;
  while (!work.empty()) {
    const uint32_t r = work.back();
    work.pop_back();
    refs.clear();
    collect_refs(rules[r].body, refs);
    for (uint32_t k : refs) {
      if (!reached[k]) {
        reached[k] = 1;
        work.push_back(k);
      }
    }
  }

  // Least fixpoint of "derives a finite string". Passes run backwards because rules tend to
  // use rules mentioned after them, so a typical grammar settles in one or two passes.
  std::vector<char> done(rules.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t r = static_cast<uint32_t>(rules.size()); r-- > 0;) {
      if (reached[r] && !done[r] && finishes(rules[r].body, done)) {
        done[r] = 1;
        changed = true;
      }
    }
  }
  // Name a rule on a cycle of unfinished rules (the real culprit) rather than its users.
  uint32_t culprit = kNone;
  for (uint32_t r = 0; r < rules.size(); ++r) {
    if (!reached[r] || done[r]) continue;
    if (culprit == kNone) culprit = r;
    if (on_unfinished_cycle(rules, done, r)) {
      culprit = r;
      break;
    }
  }
  if (culprit != kNone) {
    gbnf::error_at(rules[culprit].defined_at,
                   "rule '" + rules[culprit].name +
                       "' can never finish: every alternative needs itself, or another rule "
                       "that never finishes, again (add an alternative that ends)");
  }

  std::vector<RuleId> ids(rules.size(), 0);
  for (uint32_t r = 0; r < rules.size(); ++r) {
    if (reached[r]) ids[r] = builder.declare(rules[r].name);
  }
  for (uint32_t r = 0; r < rules.size(); ++r) {
    if (reached[r]) builder.define(ids[r], lower(builder, rules[r].body, ids));
  }
  return ids[start];
}

std::shared_ptr<const Grammar> compile_gbnf(std::string_view text, std::string_view root) {
  GrammarBuilder builder;
  const RuleId start = add_gbnf_rules(builder, text, root);
  return builder.build(start);
}

}  // namespace afm::guided
