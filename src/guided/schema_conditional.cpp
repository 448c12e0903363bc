// JSON Schema if / then / else as a union the grammar can express.
//
// An instance is valid when (it satisfies `if` and `then`) or (it fails `if` and satisfies
// `else`); a missing `then` / `else` is `true`, and without `if` neither has any effect. So the
// schema is rest AND anyOf [allOf [if, then], allOf [N_k, else] for each N_k], where the N_k
// are the positive schemas whose union is `not if` (schema_not.cpp). Where that union is a
// documented subset of the complement, the second part loses instances but never admits an
// invalid one (sound); an `if` without a negation fails closed naming `if`.
#include "base/error.h"
#include "guided/schema_compiler.h"

namespace afm::guided {

Expr SchemaCompiler::compile_conditional(const Json& schema, const std::string& pointer, int depth) {
  Json rest = schema;
  rest.erase("if");
  rest.erase("then");
  rest.erase("else");
  const Json& condition = schema["if"];
  if (!condition.is_boolean() && !condition.is_object()) invalid(pointer, "if", "must be a schema");
  const Json then_branch = schema.contains("then") ? schema["then"] : Json(true);
  const Json else_branch = schema.contains("else") ? schema["else"] : Json(true);
  for (const Json* s : {&then_branch, &else_branch}) {
    if (!s->is_boolean() && !s->is_object()) invalid(pointer, s == &then_branch ? "then" : "else", "must be a schema");
  }
  bool exact = true;  // a subset of `not if` is sound here, as in compile_not
  std::vector<Json> otherwise;
  try {
    otherwise = negate(condition, child_pointer(pointer, "if"), 0, &exact);
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kUnsupported) throw;
    unsupported(pointer, "if", std::string("its negation: ") + e.what());
  }
  Json cases = Json::array({Json{{"allOf", Json::array({condition, then_branch})}}});
  for (Json& n : otherwise) cases.push_back(Json{{"allOf", Json::array({std::move(n), else_branch})}});
  const Json either = Json{{"anyOf", std::move(cases)}};
  if (!has_assertions(rest)) return compile(either, pointer, depth + 1);
  return compile(Json{{"allOf", Json::array({rest, either})}}, pointer, depth + 1);
}

}  // namespace afm::guided
