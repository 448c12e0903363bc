// JSON Schema compiler: dispatch, keyword checks, types, $ref and the generic JSON value.
#include "guided/schema_compiler.h"

#include <set>

#include "base/error.h"
#include "guided/char_classes.h"
#include "guided/number_grammar.h"

namespace afm::guided {

namespace {

constexpr int kMaxDepth = 128;

const std::set<std::string> kAnnotations = {
    "title",    "description", "examples",         "$comment",        "default",
    "$schema",  "$id",         "deprecated",       "readOnly",        "writeOnly",
    "$anchor",  "$vocabulary", "contentMediaType", "contentEncoding", "contentSchema",
    "$defs",    "definitions"};

// Assertion keywords that no grammar in this engine enforces: fail closed on sight.
const std::map<std::string, std::string> kUnsupported = {
    {"contains", "contains is not supported"},
    {"minContains", "contains is not supported"},
    {"maxContains", "contains is not supported"},
    {"unevaluatedItems", "unevaluated* is not supported"},
    {"unevaluatedProperties", "unevaluated* is not supported"},
    {"$dynamicRef", "dynamic references are not supported"},
    {"$dynamicAnchor", "dynamic references are not supported"},
    {"$recursiveRef", "recursive references are not supported"},
    {"$recursiveAnchor", "recursive references are not supported"},
};

const std::set<std::string> kSupported = {
    "type",     "enum",      "const",      "$ref",      "allOf",      "anyOf",
    "oneOf",    "properties", "required",  "additionalProperties",   "items",
    "prefixItems", "minItems", "maxItems", "uniqueItems", "minLength", "maxLength",
    "pattern",  "format",    "minimum",    "maximum",   "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "not", "dependentRequired", "dependentSchemas",
    "dependencies", "patternProperties", "minProperties", "maxProperties", "additionalItems",
    "propertyNames", "if", "then", "else", kNotStrings};

const char* const kTypeNames[] = {"null", "boolean", "object", "array", "string", "number",
                                   "integer"};

// Drafts whose keywords this compiler reads with 2020-12 meaning safely: draft-04's boolean
// exclusiveMinimum/exclusiveMaximum fail closed ("must be a number"), array-form `items` with
// `additionalItems` is read as prefixItems + items (compile_array), and keywords beside `$ref`
// (ignored by drafts 4-7) only make the output stricter, so every instance generated is valid
// under the declared draft too.
bool is_known_metaschema(std::string uri) {
  if (!uri.empty() && uri.back() == '#') uri.pop_back();
  if (uri.rfind("http://", 0) == 0) uri = "https://" + uri.substr(7);
  return uri == "https://json-schema.org/draft/2020-12/schema" ||
         uri == "https://json-schema.org/draft/2019-09/schema" ||
         uri == "https://json-schema.org/draft-07/schema" ||
         uri == "https://json-schema.org/draft-06/schema" ||
         uri == "https://json-schema.org/draft-04/schema";
}

std::string display(const std::string& pointer) { return short_pointer(pointer); }

std::string type_article(const Json& v) {
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (v.is_string()) return "a string";
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  return "a number";
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto hex = [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c))
                 ? (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 0x20) - 'a' + 10)
                 : -1;
    };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool is_annotation_keyword(const std::string& key) { return kAnnotations.count(key) > 0; }

bool is_assertion_keyword(const std::string& key) {
  return kSupported.count(key) > 0 || kUnsupported.count(key) > 0;
}

bool has_assertions(const Json& schema) {
  if (!schema.is_object()) return true;
  for (const auto& [key, value] : schema.items()) {
    if (is_assertion_keyword(key)) return true;
  }
  return false;
}

std::string child_pointer(const std::string& pointer, const std::string& token) {
  std::string escaped;
  for (char c : token) escaped += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return pointer + "/" + escaped;
}

SchemaCompiler::SchemaCompiler(const Json& root, const JsonSchemaOptions& options)
    : root_(root), options_(options), b_(options.max_grammar_nodes) {}

void SchemaCompiler::unsupported(const std::string& pointer, const std::string& keyword,
                                 const std::string& why) const {
  throw_error(ErrorCode::kUnsupported, "json schema: keyword '" + keyword + "' at " +
                                           display(pointer) + " is not supported: " + why);
}

void SchemaCompiler::invalid(const std::string& pointer, const std::string& keyword,
                             const std::string& why) const {
  throw_error(ErrorCode::kInvalidArgument,
              "json schema: keyword '" + keyword + "' at " + display(pointer) + ": " + why);
}

std::shared_ptr<const Grammar> SchemaCompiler::compile_root() {
  Expr value = compile(root_, "", 0);
  if (!options_.prefix.empty() || !options_.suffix.empty()) {
    value = b_.seq({b_.literal(options_.prefix), value, b_.literal(options_.suffix)});
  }
  return b_.build(b_.rule("root", value));
}

std::shared_ptr<const Grammar> SchemaCompiler::compile_detached(const Json& schema,
                                                                const std::string& pointer) {
  return b_.build(b_.rule("detached", compile(schema, pointer, 0)));
}

void SchemaCompiler::check_keywords(const Json& schema, const std::string& pointer) const {
  for (const auto& [key, value] : schema.items()) {
    if (auto it = kUnsupported.find(key); it != kUnsupported.end()) {
      unsupported(pointer, key, it->second);
    }
    if (key == "uniqueItems" && !(value.is_boolean())) invalid(pointer, key, "must be a boolean");
    if (key == "$schema" && !(value.is_string() && is_known_metaschema(value.get<std::string>()))) {
      unsupported(pointer, key, "unknown metaschema " + value.dump() + " (its vocabulary is unknown)");
    }
    if (key == "$id" && !pointer.empty()) {
      unsupported(pointer, key, "nested schema resources ($id below the root)");
    }
  }
}

Expr SchemaCompiler::compile(const Json& schema, const std::string& pointer, int depth) {
  if (depth > kMaxDepth) {
    throw_error(ErrorCode::kUnsupported,
                "json schema: subschemas nest deeper than " + std::to_string(kMaxDepth) +
                    " levels ($ref chains included) at " + short_pointer(pointer) +
                    " (budget: subschema depth)");
  }
  if (schema.is_boolean()) return schema.get<bool>() ? any_value() : b_.nothing();
  if (!schema.is_object()) {
    throw_error(ErrorCode::kInvalidArgument, "json schema: the schema at " + short_pointer(pointer) +
                                                 " is " + type_article(schema) +
                                                 "; a schema must be an object or a boolean");
  }
  check_keywords(schema, pointer);
  // No assertions (`{}`, annotations only): the shared any-value rule, as for `true`, instead
  // of a fresh grammar per type (a tuple of 20,000 `{}` would otherwise build 640,000 rules).
  if (!has_assertions(schema)) return any_value();
  if (schema.contains("$ref")) {
    const Json& ref = schema["$ref"];
    if (!ref.is_string()) invalid(pointer, "$ref", "must be a string");
    Json rest = schema;
    rest.erase("$ref");
    if (!has_assertions(rest)) return compile_ref(ref.get<std::string>(), pointer, depth);
    // $ref beside other assertions is one more allOf branch.
    if (!rest.contains("allOf")) rest["allOf"] = Json::array();
    if (!rest["allOf"].is_array()) invalid(pointer, "allOf", "must be an array");
    rest["allOf"].push_back(Json{{"$ref", ref}});
    return compile(rest, pointer, depth + 1);
  }
  if (schema.contains("if")) return compile_conditional(schema, pointer, depth);
  if (schema.contains("not")) return compile_not(schema, pointer, depth);
  if (has_dependencies(schema)) {
    std::vector<Expr> options;
    for (const Json& variant : expand_dependencies(schema, pointer)) {
      options.push_back(compile(variant, pointer, depth + 1));
    }
    return b_.alt(std::move(options));
  }
  if (schema.contains("allOf")) return compile(merge_all_of(schema, pointer, depth), pointer, depth + 1);
  if (schema.contains("anyOf")) return compile_any_of(schema, pointer, depth);
  if (schema.contains("oneOf")) return compile_one_of(schema, pointer, depth);
  if (schema.contains("enum") || schema.contains("const")) return compile_enum(schema, pointer);
  return compile_types(schema, pointer, depth);
}

Expr SchemaCompiler::compile_types(const Json& schema, const std::string& pointer, int depth) {
  std::set<std::string> types;
  if (!schema.contains("type")) {
    types.insert(std::begin(kTypeNames), std::end(kTypeNames));
  } else {
    const Json& t = schema["type"];
    std::vector<Json> names = t.is_array() ? std::vector<Json>(t.begin(), t.end())
                                           : std::vector<Json>{t};
    for (const Json& n : names) {
      if (!n.is_string() || !std::count(std::begin(kTypeNames), std::end(kTypeNames),
                                        n.get<std::string>())) {
        invalid(pointer, "type", "unknown type " + n.dump());
      }
      types.insert(n.get<std::string>());
    }
  }
  std::vector<Expr> options;
  if (types.count("null")) options.push_back(b_.literal("null"));
  if (types.count("boolean")) options.push_back(b_.alt({b_.literal("true"), b_.literal("false")}));
  if (types.count("object")) options.push_back(compile_object(schema, pointer, depth));
  if (types.count("array")) options.push_back(compile_array(schema, pointer, depth));
  if (types.count("string")) options.push_back(compile_string(schema, pointer));
  if (types.count("number")) {
    options.push_back(compile_number(schema, pointer, false));
  } else if (types.count("integer")) {
    options.push_back(compile_number(schema, pointer, true));
  }
  return b_.alt(std::move(options));
}

const Json& SchemaCompiler::resolve_ref(const std::string& ref, const std::string& pointer,
                                        std::string* target_pointer) const {
  std::string local = ref;
  if (!local.empty() && local[0] != '#') {
    std::string id = root_.is_object() && root_.contains("$id") && root_["$id"].is_string()
                         ? root_["$id"].get<std::string>()
                         : "";
    if (id.empty() || local.compare(0, id.size(), id) != 0) {
      unsupported(pointer, "$ref", "only references within the document are supported ('" +
                                       ref + "')");
    }
    local = local.substr(id.size());
    if (local.empty()) local = "#";
  }
  if (local.empty() || local[0] != '#' || (local.size() > 1 && local[1] != '/')) {
    unsupported(pointer, "$ref", "anchor references are not supported ('" + ref + "')");
  }
  std::string json_pointer = percent_decode(local.substr(1));
  try {
    const Json& target = root_.at(Json::json_pointer(json_pointer));
    *target_pointer = json_pointer;
    return target;
  } catch (const nlohmann::json::exception&) {
    invalid(pointer, "$ref", "'" + ref + "' does not resolve in this document");
  }
}

Expr SchemaCompiler::compile_ref(const std::string& ref, const std::string& pointer, int depth) {
  std::string target_pointer;
  const Json& target = resolve_ref(ref, pointer, &target_pointer);
  // Inside a unique array's items a target compiles differently (one text per number), so
  // that context is part of the key.
  const std::string key = target_pointer + (unique_items_depth_ > 0 ? "|unique-items" : "");
  if (auto it = ref_rules_.find(key); it != ref_rules_.end()) return b_.ref(it->second);
  RuleId rule = b_.declare("ref" + key);
  ref_rules_[key] = rule;  // before compiling: recursion refers back to it
  b_.define(rule, compile(target, target_pointer, depth + 1));
  return b_.ref(rule);
}

Expr SchemaCompiler::comma() {
  return b_.literal(options_.whitespace == Whitespace::kCompact ? "," : ", ");
}

Expr SchemaCompiler::colon() {
  return b_.literal(options_.whitespace == Whitespace::kCompact ? ":" : ": ");
}

Expr SchemaCompiler::any_value() {
  if (any_value_rule_) return b_.ref(*any_value_rule_);
  RuleId value = b_.declare("value");
  any_value_rule_ = value;
  Expr string = b_.seq({b_.literal("\""), b_.star(any_char()), b_.literal("\"")});
  Expr member = b_.seq({string, colon(), b_.ref(value)});
  Expr object = b_.seq({b_.literal("{"), b_.optional(b_.seq({member, b_.star(b_.seq({comma(), member}))})),
                        b_.literal("}")});
  Expr array = b_.seq({b_.literal("["),
                       b_.optional(b_.seq({b_.ref(value), b_.star(b_.seq({comma(), b_.ref(value)}))})),
                       b_.literal("]")});
  b_.define(value, b_.alt({object, array, string, json_number(b_), b_.literal("true"),
                           b_.literal("false"), b_.literal("null")}));
  return b_.ref(value);
}

Expr SchemaCompiler::any_char() {
  if (!any_char_) any_char_ = encode_char_class(b_, CodePointSet::all(), CharEncoding::kJsonString);
  return *any_char_;
}

}  // namespace afm::guided
