// JSON Schema oneOf ("exactly one branch matches") as a grammar.
//
// A grammar expresses "at least one" (alternation) but has no "and not that one". So oneOf is
// the alternation of its branches, each *narrowed* until none of its instances can match any
// other branch. Per ordered pair (i, j), the first rule that applies:
//  1. i or j admits nothing, or their types / enum-const values cannot overlap: nothing to do.
//  2. i requires a property p whose value cannot satisfy j's schema for p (types or values
//     disjoint, or j forbids p): i's objects fail j; i keeps objects and the types j lacks.
//  3. j requires a property p that i does not: i is narrowed to objects without p, plus the
//     types j lacks (a non-object satisfies `required` vacuously, so it would match both).
//  4. i has types that j lacks: i is narrowed to those.
// Otherwise the schema fails closed naming oneOf. Narrowing only removes instances, so every
// string the grammar accepts matches its own branch and fails every other (sound), and the
// usual real-world shape, `oneOf: [{required: [a, b]}, {required: [c]}]` beside `properties`,
// keeps its meaning exactly: objects with a and b but no c, or with c but not a.
// Facts about a branch come from cheap inspection of its top-level keywords (after merging
// the sibling keywords in): `type`, `enum`/`const`, `required`, `properties`,
// `additionalProperties`, looking through `$ref` and `allOf` (and `anyOf` / `oneOf` for the
// types: the union of their branches'). Each fact over-approximates what
// the branch admits (or, for `required`, under-approximates what it demands), which is the
// direction that keeps the rules sound.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/error.h"
#include "guided/code_point_dfa.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

namespace {

const std::set<std::string> kEveryType = {"null",   "boolean", "object", "array",
                                          "string", "number",  "integer"};

std::string value_type(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "boolean";
  if (v.is_string()) return "string";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return canonical_json(v).find_first_of(".eE") == std::string::npos ? "integer" : "number";
}

bool type_overlaps(const std::string& t, const std::set<std::string>& others) {
  return others.count(t) || (t == "integer" && others.count("number")) ||
         (t == "number" && others.count("integer"));
}

bool types_overlap(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& t) { return type_overlaps(t, b); });
}

// What a schema admits, as far as its top-level keywords tell (an over-approximation).
struct Shape {
  std::set<std::string> types = kEveryType;
  std::optional<std::set<std::string>> values;  // canonical texts, when enum/const
  bool empty() const { return types.empty() || (values && values->empty()); }
};

bool disjoint(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return true;
  if (a.values && b.values) {
    return std::none_of(a.values->begin(), a.values->end(),
                        [&](const std::string& v) { return b.values->count(v) > 0; });
  }
  return !types_overlap(a.types, b.types);
}

// Keeps in `types` what `allowed` also admits ("number" includes the integers, so number and
// integer meet in integer). Never adds a type.
void restrict_types(std::set<std::string>* types, const std::set<std::string>& allowed) {
  std::set<std::string> out;
  for (const std::string& t : *types) {
    if (allowed.count(t)) {
      out.insert(t);
    } else if ((t == "number" && allowed.count("integer")) ||
               (t == "integer" && allowed.count("number"))) {
      out.insert("integer");
    }
  }
  *types = std::move(out);
}

// The narrowing of one branch: the types it keeps and the properties it must not write.
// The conjunction of unions of schemas as one union: each choice of one alternative per union,
// as an allOf. Null past kMaxNegatedAlternatives.
std::optional<std::vector<Json>> conjunction_of_unions(
    const std::vector<const std::vector<Json>*>& unions) {
  constexpr size_t kMaxNegatedAlternatives = 64;
  std::vector<Json> product = {Json::object()};
  for (const std::vector<Json>* alternatives : unions) {
    std::vector<Json> next;
    for (const Json& x : product) {
      for (const Json& y : *alternatives) {
        next.push_back(x.empty() ? y : Json{{"allOf", Json::array({x, y})}});
      }
    }
    if (next.size() > kMaxNegatedAlternatives) return std::nullopt;
    product = std::move(next);
  }
  return product;
}

struct Narrowing {
  std::set<std::string> keep_types = kEveryType;
  std::set<std::string> forbidden;
};

}  // namespace

const Json& SchemaCompiler::look_through_refs(const Json& schema, const std::string& pointer) const {
  const Json* s = &schema;
  for (int hops = 0; hops < 64 && s->is_object() && s->size() == 1 && s->contains("$ref") &&
                     (*s)["$ref"].is_string();
       ++hops) {
    std::string target;
    s = &resolve_ref((*s)["$ref"].get<std::string>(), pointer, &target);
  }
  return *s;
}

namespace {

// Shape of a schema; `deref` looks through a `$ref`-only schema.
template <typename Deref>
Shape shape_of(const Json& raw, const Deref& deref, int depth = 0) {
  Shape shape;
  const Json& s = deref(raw);
  if (s.is_boolean()) {
    if (!s.get<bool>()) shape.types.clear();
    return shape;
  }
  if (!s.is_object() || depth > 16) return shape;
  if (s.contains("not") && (s["not"].is_boolean() ? s["not"].get<bool>() : !has_assertions(s["not"]))) {
    shape.types.clear();
    return shape;
  }
  if (s.contains("type")) {
    const Json& t = s["type"];
    std::set<std::string> listed;
    for (const Json& n : t.is_array() ? t : Json::array({t})) {
      if (n.is_string()) listed.insert(n.get<std::string>());
    }
    restrict_types(&shape.types, listed);
  }
  for (const char* key : {"enum", "const"}) {
    if (!s.contains(key)) continue;
    const Json values = std::string(key) == "const" ? Json::array({s[key]}) : s[key];
    if (!values.is_array()) continue;
    std::set<std::string> texts, types;
    for (const Json& v : values) {
      if (!type_overlaps(value_type(v), shape.types)) continue;
      if (shape.values && !shape.values->count(canonical_json(v))) continue;
      texts.insert(canonical_json(v));
      types.insert(value_type(v));
    }
    shape.values = texts;
    restrict_types(&shape.types, types);
  }
  if (s.contains("allOf") && s["allOf"].is_array()) {
    for (const Json& part : s["allOf"]) {
      const Shape p = shape_of(part, deref, depth + 1);
      restrict_types(&shape.types, p.types);
      if (p.values) {
        std::set<std::string> both;
        for (const std::string& v : *p.values) {
          if (!shape.values || shape.values->count(v)) both.insert(v);
        }
        shape.values = both;
      }
    }
  }
  // anyOf / oneOf: an instance satisfies some branch, so it has one of the branches' types.
  for (const char* key : {"anyOf", "oneOf"}) {
    if (!s.contains(key) || !s[key].is_array()) continue;
    std::set<std::string> any;
    for (const Json& branch : s[key]) {
      const std::set<std::string> t = shape_of(branch, deref, depth + 1).types;
      any.insert(t.begin(), t.end());
    }
    restrict_types(&shape.types, any);
  }
  return shape;
}

std::set<std::string> required_of(const Json& s) {
  std::set<std::string> out;
  if (!s.is_object() || !s.contains("required") || !s["required"].is_array()) return out;
  for (const Json& n : s["required"]) {
    if (n.is_string()) out.insert(n.get<std::string>());
  }
  return out;
}

// patternProperties patterns as automata, each built once per oneOf (the narrowing rules ask
// about every ordered pair of branches); nullopt for a pattern the layer cannot build.
class PatternCache {
 public:
  // Whether `pattern` may match `name` (true where it cannot be built: it might).
  bool may_match(const std::string& pattern, const std::string& name) {
    auto it = built_.find(pattern);
    if (it == built_.end()) {
      std::optional<CodePointDfa> dfa;
      try {
        dfa = CodePointDfa::from_regex(pattern, /*search=*/true);
      } catch (const Error&) {
      }
      it = built_.emplace(pattern, std::move(dfa)).first;
    }
    return !it->second || it->second->matches(name);
  }

 private:
  std::map<std::string, std::optional<CodePointDfa>> built_;
};

// The schema a branch applies to property `name`, over-approximated: the declared one; else the
// first patternProperties schema whose pattern may match the name (the value must satisfy every
// matching one; additionalProperties does not apply to it); else additionalProperties.
const Json& property_schema(const Json& s, const std::string& name, PatternCache& patterns) {
  static const Json kTrue = true;
  if (!s.is_object()) return kTrue;
  if (s.contains("properties") && s["properties"].is_object() && s["properties"].contains(name)) {
    return s["properties"][name];
  }
  if (s.contains("patternProperties") && s["patternProperties"].is_object()) {
    for (const auto& [pattern, sub] : s["patternProperties"].items()) {
      if (patterns.may_match(pattern, name)) return sub;
    }
  }
  return s.contains("additionalProperties") ? s["additionalProperties"] : kTrue;
}

// The narrowing of branch i that makes every instance fail branch j, or none (see the file
// comment for the rules, in order).
template <typename Deref>
std::optional<Narrowing> separate(const Json& i, const Json& j, const Deref& deref,
                                  PatternCache& patterns) {
  const Shape si = shape_of(i, deref), sj = shape_of(j, deref);
  if (disjoint(si, sj)) return Narrowing{};
  std::set<std::string> j_lacks;
  for (const std::string& t : si.types) {
    if (!type_overlaps(t, sj.types)) j_lacks.insert(t);
  }
  Narrowing objects_only;
  objects_only.keep_types = j_lacks;
  objects_only.keep_types.insert("object");
  const bool i_has_objects = si.types.count("object") > 0;
  const std::set<std::string> ri = required_of(i), rj = required_of(j);
  if (i_has_objects) {
    for (const std::string& p : ri) {
      if (disjoint(shape_of(property_schema(i, p, patterns), deref),
                   shape_of(property_schema(j, p, patterns), deref))) {
        return objects_only;
      }
    }
    for (const std::string& p : rj) {
      if (ri.count(p)) continue;
      if (!shape_of(property_schema(i, p, patterns), deref).empty()) objects_only.forbidden.insert(p);
      return objects_only;
    }
  }
  if (!j_lacks.empty()) {
    Narrowing other_types;
    other_types.keep_types = j_lacks;
    return other_types;
  }
  return std::nullopt;
}

}  // namespace

// A branch with the sibling keywords of its oneOf merged in, `$ref`s looked through.
Json SchemaCompiler::effective_branch(const Json& siblings, const Json& branch,
                                      const std::string& pointer, int depth) {
  Json merged = Json::object();
  merged["allOf"] = Json::array({siblings, branch});
  return merge_all_of(merged, pointer, depth + 1);
}

Expr SchemaCompiler::compile_one_of(const Json& schema, const std::string& pointer, int depth) {
  const Json& branches = schema["oneOf"];
  if (!branches.is_array() || branches.empty()) invalid(pointer, "oneOf", "must be a non-empty array");
  Json siblings = schema;
  siblings.erase("oneOf");
  const std::string ptr = child_pointer(pointer, "oneOf");
  auto deref = [&](const Json& s) -> const Json& { return look_through_refs(s, pointer); };
  std::vector<Json> effective;
  for (size_t i = 0; i < branches.size(); ++i) {
    effective.push_back(effective_branch(siblings, branches[i], child_pointer(ptr, std::to_string(i)),
                                         depth));
  }
  // The narrowing rules first, for every ordered pair. Where a pair has no rule, the oneOf is
  // compiled with exact negations instead (schema_not.cpp): every overlapping pair (i, j) then
  // gives i `not j`, which loses no valid instance, and a branch without an exact negation
  // fails closed. Schemas the rules separate keep the rules' grammar.
  const size_t k = branches.size();
  std::vector<std::optional<Narrowing>> rules(k * k);
  bool every_pair_has_a_rule = true;
  PatternCache patterns;
  for (size_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < k; ++j) {
      if (j == i) continue;
      rules[i * k + j] = separate(effective[i], effective[j], deref, patterns);
      every_pair_has_a_rule &= rules[i * k + j].has_value();
    }
  }
  std::vector<std::optional<std::vector<Json>>> negations(k);  // computed when first needed
  std::vector<bool> negation_tried(k, false);
  // Branch i keeps siblings S: S and B_i and not (S and B_j) = S and B_i and not B_j. So B_j is
  // negated alone where it can be (the siblings' keywords may have no exact complement, as
  // `type: integer` does not), else with the siblings merged in.
  auto negation_of = [&](size_t j) -> const std::optional<std::vector<Json>>& {
    if (!negation_tried[j]) {
      negations[j] = exact_negation(branches[j], child_pointer(ptr, std::to_string(j)));
      if (!negations[j]) negations[j] = exact_negation(effective[j], ptr);
    }
    negation_tried[j] = true;
    return negations[j];
  };
  std::vector<Expr> options;
  for (size_t i = 0; i < k; ++i) {
    Narrowing narrowing;
    std::vector<size_t> negated;  // branches i takes `not j` of
    for (size_t j = 0; j < k; ++j) {
      if (j == i) continue;
      const std::optional<Narrowing>& n = rules[i * k + j];
      const bool disjoint_already = n && n->keep_types == kEveryType && n->forbidden.empty();
      if (!every_pair_has_a_rule && !disjoint_already) {
        if (!negation_of(j)) {
          unsupported(pointer, "oneOf", "branches " + std::to_string(i) + " and " +
                                            std::to_string(j) + " may both match one instance");
        }
        negated.push_back(j);
        continue;
      }
      restrict_types(&narrowing.keep_types, n->keep_types);
      narrowing.forbidden.insert(n->forbidden.begin(), n->forbidden.end());
    }
    const std::string branch_ptr = child_pointer(ptr, std::to_string(i));
    const Shape shape = shape_of(effective[i], deref);
    std::set<std::string> keep = shape.types;
    restrict_types(&keep, narrowing.keep_types);
    if (keep == shape.types && narrowing.forbidden.empty() && negated.empty()) {
      // Unchanged: compile the branch as written (a `$ref` branch stays a shared rule).
      Json both = {{"allOf", Json::array({siblings, branches[i]})}};
      options.push_back(compile(has_assertions(siblings) ? both : branches[i], branch_ptr, depth + 1));
      continue;
    }
    Json narrowed = effective[i];
    if (narrowed.is_boolean()) narrowed = narrowed.get<bool>() ? Json::object() : Json(false);
    if (narrowed.is_object()) {
      narrowed["type"] = Json(std::vector<std::string>(keep.begin(), keep.end()));
      if (!narrowing.forbidden.empty() && narrowed.contains("properties") &&
          !narrowed["properties"].is_object()) {
        invalid(branch_ptr, "properties", "must be an object");
      }
      for (const std::string& p : narrowing.forbidden) narrowed["properties"][p] = false;
    }
    if (!negated.empty()) {
      std::vector<const std::vector<Json>*> unions;
      for (size_t j : negated) unions.push_back(&*negation_of(j));
      // The branch's own `not X` joins the product as the union not X is, rather than as a
      // second anyOf that allOf could not merge with the first.
      std::optional<std::vector<Json>> own_not;
      if (narrowed.is_object() && narrowed.contains("not")) {
        own_not = exact_negation(narrowed["not"], child_pointer(branch_ptr, "not"));
        if (own_not) {
          unions.push_back(&*own_not);
          narrowed.erase("not");
        }
      }
      const std::optional<std::vector<Json>> others = conjunction_of_unions(unions);
      if (!others) {
        unsupported(pointer, "oneOf", "branches " + std::to_string(i) + " and " +
                                          std::to_string(negated[0]) + " may both match one instance");
      }
      if (others->empty()) continue;  // every instance of i matches another branch
      narrowed = Json{{"allOf", Json::array({narrowed, Json{{"anyOf", Json(*others)}}})}};
    }
    options.push_back(compile(narrowed, branch_ptr, depth + 1));
  }
  return b_.alt(std::move(options));
}

}  // namespace afm::guided
