// Internal: the JSON Schema compiler's state, shared by the per-concern source files
// (schema_compiler.cpp: dispatch, types, $ref, not; schema_containers.cpp: objects and arrays;
// schema_scalars.cpp: strings, formats, numbers, enum/const; schema_combinators.cpp: anyOf,
// allOf; schema_one_of.cpp: oneOf; schema_dependencies.cpp: property dependencies).
// See json_schema_compiler.h for the contract.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "guided/code_point_dfa.h"
#include "guided/grammar.h"
#include "guided/json_schema_compiler.h"
#include "guided/number_grammar.h"

namespace afm::guided {

using Json = nlohmann::ordered_json;
struct MemberMerge;  // schema_combinators.cpp

// Internal keyword: an array of string schemas (pattern, format, lengths, enum) that a string
// must match none of. `not` writes it (schema_not.cpp); the regular layer enforces it.
inline constexpr const char* kNotStrings = "x-afm-not-strings";

// One regular constraint on a string: a `pattern` (matched anywhere) or a `format` (whole).
struct StringRegex {
  std::string regex;
  std::string keyword;
  bool search;
};

// patternProperties patterns that share one value schema (schema_object_keys.cpp).
struct PatternGroup {
  CodePointDfa keys;  // the keys any of them matches
  Json schema;
  std::string pointer;  // the first pattern's, for errors
};

// What decides an object's keys through the regular layer: patterns and propertyNames.
struct ObjectKeyRules {
  std::vector<PatternGroup> groups;
  std::optional<CodePointDfa> names;  // propertyNames, when present
  bool regular() const { return !groups.empty() || names.has_value(); }
  bool allows(const std::string& name) const;
  // The allOf of `own` (if any) and the schemas of the patterns matching `name`; nullopt when
  // neither applies.
  std::optional<Json> value_schema(const std::string& name, const Json* own) const;
};

class SchemaCompiler {
 public:
  SchemaCompiler(const Json& root, const JsonSchemaOptions& options);

  std::shared_ptr<const Grammar> compile_root();
  // A grammar for one subschema of the same document (used to filter enum values).
  std::shared_ptr<const Grammar> compile_detached(const Json& schema, const std::string& pointer);

  // Any schema (object or boolean) at `pointer`.
  Expr compile(const Json& schema, const std::string& pointer, int depth);

  [[noreturn]] void unsupported(const std::string& pointer, const std::string& keyword,
                                const std::string& why) const;
  [[noreturn]] void invalid(const std::string& pointer, const std::string& keyword,
                            const std::string& why) const;

 private:
  // schema_compiler.cpp
  void check_keywords(const Json& schema, const std::string& pointer) const;
  Expr compile_types(const Json& schema, const std::string& pointer, int depth);
  // schema_not.cpp
  Expr compile_not(const Json& schema, const std::string& pointer, int depth);
  // schema_conditional.cpp: if / then / else
  Expr compile_conditional(const Json& schema, const std::string& pointer, int depth);
  // Positive schemas whose union is `not schema` (see schema_not.cpp for what is covered).
  // Clears *exact where the union is a subset of the complement (documented there).
  std::vector<Json> negate(const Json& schema, const std::string& pointer, int depth,
                           bool* exact) const;
  void negate_any_of(const Json& branches, const std::string& pointer, int depth, bool* exact,
                     std::vector<Json>* out) const;
  // negate() where it is exact and every keyword has a complement; nullopt otherwise.
  std::optional<std::vector<Json>> exact_negation(const Json& schema,
                                                  const std::string& pointer) const;
  void negate_type(const Json& type, std::vector<Json>* out, bool* exact) const;
  void negate_values(const Json& values, const std::string& pointer, std::vector<Json>* out,
                     bool* exact) const;
  Expr compile_ref(const std::string& ref, const std::string& pointer, int depth);
  const Json& resolve_ref(const std::string& ref, const std::string& pointer,
                          std::string* target_pointer) const;
  Expr any_value();
  Expr comma();
  Expr colon();

  // schema_containers.cpp
  Expr compile_object(const Json& schema, const std::string& pointer, int depth);
  Expr compile_array(const Json& schema, const std::string& pointer, int depth);
  Expr key_not_in(const std::vector<std::string>& names);
  // schema_unique_items.cpp: refuses (unsupported) an array whose uniqueItems the guard cannot
  // enforce exactly: items with several texts per value, or minItems
  // >= 2 without a proof that enough distinct values exist.
  void check_unique_items(const Json& array_schema, const std::string& pointer,
                          uint64_t min_items) const;
  void check_unique_items_count(const Json& array_schema, const std::string& pointer,
                                uint64_t min_items) const;
  Expr member_pair(const std::string& name, Expr value);

  // schema_object_keys.cpp
  ObjectKeyRules object_key_rules(const Json& schema, const std::string& pointer) const;
  CodePointDfa property_names_dfa(const Json& schema, const std::string& pointer) const;
  // Members whose keys are none of `names`, split into regions by the patterns they match.
  std::optional<Expr> regular_additional_members(const ObjectKeyRules& rules,
                                                 const std::vector<std::string>& names,
                                                 const Json& additional, const std::string& pointer,
                                                 int depth);

  // schema_scalars.cpp
  Expr compile_string(const Json& schema, const std::string& pointer);
  Expr compile_number(const Json& schema, const std::string& pointer, bool integer);
  Expr unique_number(const std::string& pointer, const std::optional<Bound>& lo,
                     const std::optional<Bound>& hi);
  Expr compile_enum(const Json& schema, const std::string& pointer);
  Expr string_body(const Json& schema, const std::string& pointer);
  std::vector<StringRegex> string_regexes(const Json& schema, const std::string& pointer) const;
  // pattern, format, minLength and maxLength as one automaton over the string's characters.
  CodePointDfa string_dfa(const Json& schema, const std::string& pointer) const;
  Expr any_char();

  // schema_combinators.cpp
  Expr compile_any_of(const Json& schema, const std::string& pointer, int depth);
  Json merge_all_of(const Json& schema, const std::string& pointer, int depth);
  void merge_into(Json& dst, const Json& src, const std::string& pointer, MemberMerge& members);
  // A merged allOf and one more oneOf or if/then/else of its branches, as one schema.
  Json wrap_deferred(Json merged, const Json& extra, const std::string& pointer, int depth);
  Json inline_ref(const Json& branch, const std::string& pointer, int depth);

  // schema_one_of.cpp
  Expr compile_one_of(const Json& schema, const std::string& pointer, int depth);

  Json effective_branch(const Json& siblings, const Json& branch, const std::string& pointer,
                        int depth);
  // `schema` itself, or the target of a schema that is only a `$ref` (followed repeatedly).
  const Json& look_through_refs(const Json& schema, const std::string& pointer) const;

  // schema_dependencies.cpp
  // The schema as alternatives without dependency keywords (their union is its language).
  std::vector<Json> expand_dependencies(const Json& schema, const std::string& pointer) const;

  // Options for a compiler of one piece on its own (a probe, an enum value): compact, no
  // prefix or suffix, this compiler's node budget.
  JsonSchemaOptions piece_options() const {
    JsonSchemaOptions piece;
    piece.max_grammar_nodes = options_.max_grammar_nodes;
    piece.budget = options_.budget;
    piece.refuse_unknown_formats = options_.refuse_unknown_formats;
    return piece;
  }

  const Json& root_;
  JsonSchemaOptions options_;
  GrammarBuilder b_;
  std::map<std::string, RuleId> ref_rules_;  // by target pointer (+ a mark inside unique items)
  int unique_items_depth_ = 0;  // > 0 while compiling a unique array's items (one text per value)
  std::optional<RuleId> any_value_rule_;
  std::optional<Expr> any_char_;
};

// Keyword classification shared by the compiler files.
bool is_annotation_keyword(const std::string& key);
bool has_assertions(const Json& schema);  // any keyword that constrains instances
// A keyword the compiler reads (supported or refused by name); any other is an annotation.
bool is_assertion_keyword(const std::string& key);
bool has_dependencies(const Json& schema);  // dependentRequired/dependentSchemas/dependencies
std::string child_pointer(const std::string& pointer, const std::string& token);

}  // namespace afm::guided
