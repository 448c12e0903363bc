// JSON Schema objects (properties, required, additionalProperties, patternProperties) and
// arrays (prefixItems, items, minItems, maxItems).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/utf8.h"
#include "guided/char_classes.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

constexpr uint64_t kMaxItemsBound = 100000;

std::string json_key(const std::string& name) { return Json(name).dump() ; }

struct Member {
  std::string name;
  Expr key_and_value;  // "name":value
  bool required;
};

// Trie over property names (code points), for "a key that is none of these". Flat, children
// after their parent: built and consumed without recursion (a name may be as long as the
// schema).
struct KeyTrie {
  struct Node {
    bool terminal = false;
    std::map<uint32_t, uint32_t> kids;  // code point -> node index
  };
  std::vector<Node> nodes{1};

  void insert(const std::string& name) {
    uint32_t at = 0;
    std::vector<uint32_t> code_points;
    decode_utf8(name, &code_points);  // names are JSON strings: well-formed UTF-8
    for (uint32_t cp : code_points) {
      auto [it, added] = nodes[at].kids.emplace(cp, static_cast<uint32_t>(nodes.size()));
      if (added) nodes.emplace_back();
      at = it->second;
    }
    nodes[at].terminal = true;
  }
};

uint64_t count_keyword(const SchemaCompiler& c, const Json& schema, const std::string& pointer,
                       const char* key, uint64_t fallback) {
  if (!schema.contains(key)) return fallback;
  const Json& v = schema[key];
  if (!v.is_number_integer() && !(v.is_number_float() && v.get<double>() == std::floor(v.get<double>()))) {
    c.invalid(pointer, key, "must be a non-negative integer");
  }
  if (v.get<double>() < 0) c.invalid(pointer, key, "must be a non-negative integer");
  double d = v.get<double>();
  return d > 1e18 ? uint64_t{1} << 62 : static_cast<uint64_t>(d);
}

// The members in order (each written or not, as `required` says), then any number of
// additional members, with the total count in [min_props, max_props]. from(i, c): members i..
// remain and c members were written (c == 0 also means no comma before the next one). Counts
// saturate at `top()`: with no maxProperties, every count from max(minProperties, 1) on behaves
// alike, so objects without count keywords need only "none yet" and "some". The counts
// reachable before member i form an interval; build() makes one expression per reachable
// (i, c), from the last member back, without recursion (objects may declare tens of thousands
// of members; the builder's node budget bounds the total).
struct MemberChain {
  GrammarBuilder& b;
  Expr comma;
  const std::vector<Member>& members;
  const std::optional<Expr>& extra;
  uint64_t min_props, max_props;

  struct Counts {  // the interval [lo, hi] of counts; empty when lo > hi
    uint64_t lo = 0, hi = 0;
    bool empty() const { return lo > hi; }
  };

  bool bounded() const { return max_props != UINT64_MAX; }
  uint64_t top() const { return bounded() ? max_props : std::max<uint64_t>(min_props, 1); }
  uint64_t next(uint64_t c) const { return bounded() ? c + 1 : std::min(c + 1, top()); }
  bool can_write(uint64_t c) const { return !bounded() || c < max_props; }

  // from(0, 0).
  Expr build() {
    const std::vector<Counts> reach = reachable_counts();
    std::vector<Expr> after;  // from(i + 1, c) at index c - reach[i + 1].lo
    const Counts& last = reach.back();
    for (uint64_t c = last.lo; !last.empty() && c <= last.hi; ++c) after.push_back(extras(c));
    for (size_t i = members.size(); i-- > 0;) {
      std::vector<Expr> here;
      for (uint64_t c = reach[i].lo; !reach[i].empty() && c <= reach[i].hi; ++c) {
        here.push_back(member(i, c, after, reach[i + 1]));
      }
      after = std::move(here);
    }
    return after.empty() ? b.nothing() : after[0];
  }

  std::vector<Counts> reachable_counts() const {
    std::vector<Counts> reach(members.size() + 1);
    for (size_t i = 0; i < members.size(); ++i) {
      const Counts& at = reach[i];
      Counts written{UINT64_MAX, 0};  // counts after writing member i, from writable counts
      if (!at.empty() && can_write(at.lo)) {
        written = {next(at.lo), next(can_write(at.hi) ? at.hi : max_props - 1)};
      }
      if (members[i].required || at.empty()) {
        reach[i + 1] = written;
      } else {
        reach[i + 1] = written.empty() ? at
                                       : Counts{std::min(at.lo, written.lo),
                                                std::max(at.hi, written.hi)};
      }
    }
    return reach;
  }

  Expr member(size_t i, uint64_t c, const std::vector<Expr>& after, const Counts& next_counts) {
    const Member& m = members[i];
    auto from_next = [&](uint64_t count) { return after[count - next_counts.lo]; };
    Expr with = b.nothing();
    if (can_write(c)) with = b.seq({c == 0 ? b.empty() : comma, m.key_and_value, from_next(next(c))});
    return m.required ? with : b.alt({with, from_next(c)});
  }

  // Additional members after the declared ones, so that the total stays within the bounds.
  Expr extras(uint64_t c) {
    const uint64_t lo = c >= min_props ? 0 : min_props - c;
    const uint32_t hi = bounded() ? static_cast<uint32_t>(max_props - c) : kUnbounded;
    if (!extra || hi == 0) return lo == 0 ? b.empty() : b.nothing();
    const Expr more = b.seq({comma, *extra});
    const auto lo32 = static_cast<uint32_t>(lo);
    if (c > 0) return b.repeat(more, lo32, hi);
    const uint32_t rest_hi = hi == kUnbounded ? kUnbounded : hi - 1;
    Expr some = b.seq({*extra, b.repeat(more, lo32 > 0 ? lo32 - 1 : 0, rest_hi)});
    return lo == 0 ? b.alt({b.empty(), some}) : some;
  }
};

}  // namespace

Expr SchemaCompiler::member_pair(const std::string& name, Expr value) {
  return b_.seq({b_.literal(json_key(name)), colon(), value});
}

Expr SchemaCompiler::key_not_in(const std::vector<std::string>& names) {
  KeyTrie trie;
  for (const std::string& n : names) trie.insert(n);
  const Expr quote = b_.literal("\"");
  const Expr rest = b_.seq({b_.star(any_char()), quote});
  // "Any other character, then any rest": one expression per distinct set of letters used
  // (leaves all share "any character"; a trie of 20,000 numbered names has a handful of sets).
  std::map<std::vector<std::pair<uint32_t, uint32_t>>, Expr> other_char;
  auto leave_trie = [&](const CodePointSet& used) {
    auto [it, added] = other_char.try_emplace(used.ranges(), Expr{});
    if (added) {
      it->second =
          b_.seq({encode_char_class(b_, used.complement(), CharEncoding::kJsonString), rest});
    }
    return it->second;
  };
  // Children have larger indexes than their parent: build from the last node back.
  std::vector<Expr> built(trie.nodes.size());
  for (size_t i = trie.nodes.size(); i-- > 0;) {
    const KeyTrie::Node& node = trie.nodes[i];
    std::vector<Expr> options;
    if (!node.terminal) options.push_back(quote);
    CodePointSet used;
    for (const auto& [cp, kid] : node.kids) {
      used.add(cp, cp);
      options.push_back(
          b_.seq({b_.literal(encode_code_point(cp, CharEncoding::kJsonString)), built[kid]}));
    }
    options.push_back(leave_trie(used));
    built[i] = b_.alt(std::move(options));
  }
  return b_.seq({quote, built[0]});
}

Expr SchemaCompiler::compile_object(const Json& schema, const std::string& pointer, int depth) {
  static const Json kTrue = true;
  const Json empty_object = Json::object();
  const Json& props = schema.contains("properties") ? schema["properties"] : empty_object;
  if (!props.is_object()) invalid(pointer, "properties", "must be an object");
  const Json& additional =
      schema.contains("additionalProperties") ? schema["additionalProperties"] : kTrue;
  std::vector<std::string> required;
  if (schema.contains("required")) {
    const Json& r = schema["required"];
    if (!r.is_array()) invalid(pointer, "required", "must be an array of strings");
    for (const Json& name : r) {
      if (!name.is_string()) invalid(pointer, "required", "must be an array of strings");
      required.push_back(name.get<std::string>());
    }
  }
  std::set<std::string> required_set(required.begin(), required.end());
  const ObjectKeyRules rules = object_key_rules(schema, pointer);
  std::vector<Member> members;
  std::vector<std::string> names;
  const std::string props_ptr = child_pointer(pointer, "properties");
  for (const auto& [name, sub] : props.items()) {
    names.push_back(name);
    const bool is_required = required_set.count(name) > 0;
    if (!rules.allows(name)) {  // propertyNames rules the key out
      if (is_required) return b_.nothing();
      continue;
    }
    const std::string at = child_pointer(props_ptr, name);
    // Patterns matching a declared name add their schemas (a copy only where there are any).
    const Expr value = rules.groups.empty() ? compile(sub, at, depth + 1)
                                            : compile(*rules.value_schema(name, &sub), at, depth + 1);
    members.push_back({name, member_pair(name, value), is_required});
  }
  const std::string add_ptr = child_pointer(pointer, "additionalProperties");
  std::set<std::string> named(names.begin(), names.end());
  for (const std::string& name : required) {  // required but undeclared: additional schema
    if (!named.insert(name).second) continue;
    if (!rules.allows(name)) return b_.nothing();
    const std::optional<Json> by_pattern = rules.value_schema(name, nullptr);
    members.push_back({name, member_pair(name, compile(by_pattern ? *by_pattern : additional,
                                                       add_ptr, depth + 1)), true});
    names.push_back(name);
  }
  std::optional<Expr> extra;
  if (rules.regular()) {
    extra = regular_additional_members(rules, names, additional, pointer, depth);
  } else if (!(additional.is_boolean() && !additional.get<bool>())) {
    extra = b_.seq({key_not_in(names), colon(), compile(additional, add_ptr, depth + 1)});
  }
  const uint64_t min_props = count_keyword(*this, schema, pointer, "minProperties", 0);
  const uint64_t max_props = count_keyword(*this, schema, pointer, "maxProperties", UINT64_MAX);
  if (max_props != UINT64_MAX && max_props > kMaxItemsBound) {
    unsupported(pointer, "maxProperties", "bounds above 100000 are not supported");
  }
  if (min_props > kMaxItemsBound) unsupported(pointer, "minProperties", "bounds above 100000 are not supported");
  MemberChain chain{b_, comma(), members, extra, min_props, max_props};
  return b_.seq({b_.literal("{"), chain.build(), b_.literal("}")});
}

Expr SchemaCompiler::compile_array(const Json& schema, const std::string& pointer, int depth) {
  static const Json kTrue = true;
  // Drafts 4 to 2019-09 write a tuple as array-form `items`, and the elements after it as
  // `additionalItems` (which means nothing without a tuple): exactly 2020-12's `prefixItems`
  // and `items`. Both forms in one schema would be two tuples: fail closed.
  const bool legacy_tuple = schema.contains("items") && schema["items"].is_array();
  if (legacy_tuple && schema.contains("prefixItems")) {
    unsupported(pointer, "items", "array-form items (drafts 4-7) together with prefixItems");
  }
  const char* const tuple_key = legacy_tuple ? "items" : "prefixItems";
  const char* const rest_key = legacy_tuple ? "additionalItems" : "items";
  const Json& items = schema.contains(rest_key) ? schema[rest_key] : kTrue;
  const size_t tuple_size = schema.contains(tuple_key) && schema[tuple_key].is_array()
                                ? schema[tuple_key].size()
                                : 0;
  uint64_t min_items = count_keyword(*this, schema, pointer, "minItems", 0);
  uint64_t max_items = count_keyword(*this, schema, pointer, "maxItems", UINT64_MAX);
  const bool no_more = items.is_boolean() && !items.get<bool>();
  if (no_more) max_items = std::min<uint64_t>(max_items, tuple_size);
  if (min_items > max_items) return b_.nothing();
  if (min_items > kMaxItemsBound || (max_items != UINT64_MAX && max_items > kMaxItemsBound)) {
    unsupported(pointer, min_items > kMaxItemsBound ? "minItems" : "maxItems",
                "bounds above 100000 are not supported");
  }
  // Distinct elements are checked beside the grammar (unique_items.h), on texts: the items
  // compile with one text per value (numbers included: unique_number).
  const bool unique = schema.value("uniqueItems", Json(false)) == Json(true) && max_items >= 2;
  if (unique) check_unique_items(schema, pointer, min_items);
  struct UniqueDepth {  // restores unique_items_depth_ on every exit
    int& depth;
    bool on;
    ~UniqueDepth() { depth -= on ? 1 : 0; }
  } unique_depth{unique_items_depth_, unique};
  unique_items_depth_ += unique ? 1 : 0;
  std::vector<Expr> prefix;
  if (schema.contains(tuple_key)) {
    const Json& p = schema[tuple_key];
    if (!p.is_array()) invalid(pointer, tuple_key, "must be an array of schemas");
    const std::string ptr = child_pointer(pointer, tuple_key);
    for (size_t i = 0; i < p.size(); ++i) {
      prefix.push_back(compile(p[i], child_pointer(ptr, std::to_string(i)), depth + 1));
    }
  }
  const size_t k = prefix.size();
  Expr item = no_more ? b_.nothing() : compile(items, child_pointer(pointer, rest_key), depth + 1);
  auto element = [&](size_t i) { return i < k ? prefix[i] : item; };
  // tail(i): the rest of the list after i elements were written.
  auto tail_from = [&](size_t i) -> Expr {
    const uint32_t lo = static_cast<uint32_t>(min_items > i ? min_items - i : 0);
    const uint32_t hi = max_items == UINT64_MAX ? kUnbounded : static_cast<uint32_t>(max_items - i);
    return b_.repeat(b_.seq({comma(), item}), std::min(lo, hi), hi);
  };
  Expr tail = (k == 0 || max_items <= k) ? b_.empty() : tail_from(k);
  if (k == 0) {
    if (max_items == 0) return b_.literal("[]");
    tail = tail_from(1);
  }
  // Walk the prefix backwards: after i elements, stop (if allowed) or write element i.
  size_t last = std::min<uint64_t>(std::max<size_t>(k, 1), max_items);
  Expr rest = tail;
  for (size_t i = last; i-- > 1;) {
    Expr more = b_.seq({comma(), element(i), rest});
    rest = i >= min_items ? b_.alt({b_.empty(), more}) : more;
  }
  Expr non_empty = b_.seq({element(0), rest});
  Expr body = min_items == 0 ? b_.alt({b_.empty(), non_empty}) : non_empty;
  Expr array = b_.seq({b_.literal("["), body, b_.literal("]")});
  if (!unique) return array;
  const RuleId rule = b_.rule("unique-array", array);
  b_.mark_unique_array(rule);
  return b_.ref(rule);
}

}  // namespace afm::guided
