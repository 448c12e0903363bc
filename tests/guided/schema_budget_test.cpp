// Untrusted schemas of extreme shapes: wide, deep, long. Each either compiles (in work linear
// in its size) or fails with a typed error naming the budget; none may crash the process.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "guided/byte_matcher.h"
#include "guided/json_schema_compiler.h"
#include "guided/schema_budget.h"

namespace afm::guided {
namespace {

using Json = nlohmann::ordered_json;

bool ok(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  return ByteMatcher::matches(g, text);
}

// The error compile_json_schema_text throws for `schema_text`, or "" when it compiles.
std::string compile_error(const std::string& schema_text, ErrorCode* code = nullptr,
                          JsonSchemaOptions options = {}) {
  try {
    compile_json_schema_text(schema_text, options);
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "";
}

std::string repeated(const std::string& piece, size_t n, const std::string& sep = ",") {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? sep : "") + piece;
  return out;
}

std::string many_properties(size_t n, bool required) {
  std::string props, names;
  for (size_t i = 0; i < n; ++i) {
    props += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\":{\"type\":\"string\"}";
    names += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\"";
  }
  return R"({"type":"object","properties":{)" + props + "}" +
         (required ? R"(,"required":[)" + names + "]" : "") + "}";
}

std::string nested_items(size_t depth) {
  std::string s;
  for (size_t i = 0; i < depth; ++i) s += R"({"type":"array","items":)";
  s += "{}";
  for (size_t i = 0; i < depth; ++i) s += "}";
  return s;
}

TEST(SchemaBudget, WidePrefixItemsCompile) {
  // Crashed the server: the nested optional tail of a 20,000-element tuple was lowered by
  // recursion 20,000 frames deep.
  auto g = compile_json_schema_text(R"({"type":"array","prefixItems":[)" + repeated("{}", 20000) +
                                    "]}");
  EXPECT_TRUE(ok(g, "[]"));
  EXPECT_TRUE(ok(g, R"([1,{"a":[]},"x",null])"));
  EXPECT_FALSE(ok(g, "[1,]"));
}

TEST(SchemaBudget, ThousandsOfPropertiesCompile) {
  auto g = compile_json_schema_text(many_properties(20000, false));
  EXPECT_TRUE(ok(g, R"({"p0":"a","p19999":"b"})"));
  EXPECT_TRUE(ok(g, R"({"p5":"a","q":1})"));
  EXPECT_FALSE(ok(g, R"({"p19999":"b","p0":"a"})"));  // declaration order
  EXPECT_FALSE(ok(g, R"({"p7":1})"));
  auto all_required = compile_json_schema_text(many_properties(20000, true));
  EXPECT_FALSE(ok(all_required, R"({"p0":"a"})"));
}

TEST(SchemaBudget, ManyRequiredUndeclaredNamesCompile) {
  std::string names;
  for (int i = 0; i < 20000; ++i) names += (i ? ",\"r" : "\"r") + std::to_string(i) + "\"";
  auto g = compile_json_schema_text(R"({"required":[)" + names + "]}");
  EXPECT_FALSE(ok(g, R"({"r0":1})"));
}

TEST(SchemaBudget, GrammarSizeIsLinearInTheSchema) {
  auto size = [](const std::string& s) { return compile_json_schema_text(s)->num_productions(); };
  for (auto make : {+[](size_t n) { return many_properties(n, false); },
                    +[](size_t n) { return R"({"prefixItems":[)" + repeated("{}", n) + "]}"; },
                    +[](size_t n) {
                      return R"({"enum":[)" + repeated(R"("abc")", n) + "]}";
                    }}) {
    const size_t small = size(make(1000)), large = size(make(4000));
    EXPECT_LE(large, small * 4 + small / 5) << make(2).substr(0, 40);
  }
}

TEST(SchemaBudget, LongPropertyNamesAndPatternsCompile) {
  const std::string name(20000, 'k');
  auto g = compile_json_schema_text(R"({"properties":{")" + name + R"(":{"type":"null"}},
                                       "additionalProperties":{"type":"integer"}})");
  EXPECT_TRUE(ok(g, "{\"" + name + "\":null}"));
  EXPECT_TRUE(ok(g, "{\"" + name.substr(1) + "\":1}"));
  EXPECT_FALSE(ok(g, "{\"" + name + "\":1}"));
  // A few expression nodes per character of a declared name: a name past the grammar budget
  // meets the budget, not the stack.
  ErrorCode code{};
  JsonSchemaOptions small;
  small.max_grammar_nodes = 100000;
  const std::string msg = compile_error(R"({"properties":{")" + std::string(200000, 'k') +
                                            R"(":{}},"additionalProperties":{}})",
                                        &code, small);
  EXPECT_EQ(code, ErrorCode::kUnsupported);
  EXPECT_NE(msg.find("grammar too large"), std::string::npos) << msg;
  const std::string pattern = "^" + repeated("[a-c]", 20000, "") + "$";
  auto p = compile_json_schema_text(R"({"type":"string","pattern":")" + pattern + "\"}");
  EXPECT_TRUE(ok(p, "\"" + std::string(20000, 'b') + "\""));
  EXPECT_FALSE(ok(p, "\"" + std::string(19999, 'b') + "\""));
}

TEST(SchemaBudget, DeepNestingIsRefusedBeforeAnyWork) {
  for (size_t depth : {130, 5000, 100000}) {
    ErrorCode code{};
    const std::string msg = compile_error(nested_items(depth), &code);
    EXPECT_EQ(code, ErrorCode::kUnsupported) << msg;
    EXPECT_NE(msg.find("nests deeper than 128 levels at #/items/items/"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(budget: schema depth)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("'$ref'"), std::string::npos) << msg;  // was named though absent
    EXPECT_LT(msg.size(), 300u) << msg;                         // the pointer is shortened
    EXPECT_NE(msg.find("#/items/items/items"), std::string::npos) << msg;
  }
  EXPECT_EQ(compile_error(nested_items(60)), "");
}

TEST(SchemaBudget, LongRefChainsHitTheSubschemaDepth) {
  std::string defs;
  for (int i = 0; i < 200; ++i) {
    defs += (i ? "," : "") + std::string("\"d") + std::to_string(i) + R"(":{"$ref":"#/$defs/d)" +
            std::to_string(i + 1) + "\"}";
  }
  defs += R"(,"d200":{"type":"integer"})";
  ErrorCode code{};
  const std::string msg = compile_error(R"({"$defs":{)" + defs + R"(},"$ref":"#/$defs/d0"})", &code);
  EXPECT_EQ(code, ErrorCode::kUnsupported) << msg;
  EXPECT_NE(msg.find("budget: subschema depth"), std::string::npos) << msg;
}

TEST(SchemaBudget, SizeAndBranchBudgets) {
  ErrorCode code{};
  std::string msg = compile_error(R"({"enum":[)" + repeated("1", 200000) + "]}", &code);
  EXPECT_EQ(code, ErrorCode::kUnsupported);
  EXPECT_NE(msg.find("more than 100000 JSON values at #/enum/"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(budget: schema size)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("#/enum/"), std::string::npos) << msg;
  msg = compile_error(R"({"oneOf":[)" + repeated(R"({"type":"null"})", 300) + "]}", &code);
  EXPECT_EQ(code, ErrorCode::kUnsupported);
  EXPECT_NE(msg.find("oneOf has 300 branches"), std::string::npos) << msg;
  JsonSchemaOptions small;
  small.max_grammar_nodes = 5000;
  msg = compile_error(many_properties(2000, false), &code, small);
  EXPECT_EQ(code, ErrorCode::kUnsupported);
  EXPECT_NE(msg.find("grammar too large"), std::string::npos) << msg;
  // Budgets are options: a caller may raise them.
  JsonSchemaOptions wide;
  wide.budget.max_branches = 400;
  EXPECT_EQ(compile_error(R"({"oneOf":[)" + repeated(R"({"const":1})", 1) + "," +
                              repeated(R"({"type":"string"})", 1) + "]}",
                          nullptr, wide),
            "");
}

TEST(SchemaBudget, NonSchemaRootIsNamed) {
  ErrorCode code{};
  const std::string msg = compile_error("[]", &code);
  EXPECT_EQ(code, ErrorCode::kInvalidArgument);
  EXPECT_NE(msg.find("the schema at # is an array"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("keyword ''"), std::string::npos) << msg;
  const std::string nested = compile_error(R"({"properties":{"a":7}})");
  EXPECT_NE(nested.find("the schema at #/properties/a is a number"), std::string::npos) << nested;
}

TEST(SchemaBudget, ShortPointerKeepsBothEnds) {
  EXPECT_EQ(short_pointer("/a/b"), "#/a/b");
  std::string long_pointer;
  for (int i = 0; i < 500; ++i) long_pointer += "/items";
  const std::string s = short_pointer(long_pointer);
  EXPECT_LT(s.size(), 160u);
  EXPECT_EQ(s.rfind("#/items/items", 0), 0u);
  EXPECT_NE(s.find("(3000 characters)"), std::string::npos) << s;
}

TEST(SchemaBudget, GrammarCacheIsBoundedByBytes) {
  // A client sending never-seen large schemas must not grow the cache past its byte budget.
  const size_t one = compile_json_schema_text(many_properties(300, false))->memory_bytes();
  ASSERT_GT(one, 10000u);
  CompiledGrammarCache cache(256, one * 12);
  for (int i = 0; i < 30; ++i) {
    auto g = cache.get_or_compile(many_properties(300 + i % 15, false));
    EXPECT_TRUE(ok(g, R"({"p0":"x"})"));
    EXPECT_LE(cache.bytes(), one * 12);
  }
  // Full but within budget: evicting only what it must keeps more than half the budget used.
  EXPECT_GT(cache.bytes(), one * 6);
  EXPECT_LT(cache.size(), 15u);
  // Larger than a quarter of the budget: answered, not kept.
  CompiledGrammarCache small(256, one * 3);
  auto g = small.get_or_compile(many_properties(300, false));
  EXPECT_TRUE(ok(g, R"({"p1":"y"})"));
  EXPECT_EQ(small.size(), 0u);
  EXPECT_EQ(small.bytes(), 0u);
}

TEST(GrammarBuilder, DeeplyNestedExpressionsLowerWithoutRecursion) {
  // 200,000 nested optional groups ("a" ("a" (... "a" "z")?)?)?: any run of a's, or exactly
  // 200,000 a's and a z; then 200,000 nested sequences around "y".
  GrammarBuilder b;
  Expr e = b.literal("z");
  for (int i = 0; i < 200000; ++i) e = b.optional(b.seq({b.literal("a"), e}));
  Expr s = b.literal("y");
  for (int i = 0; i < 200000; ++i) s = b.seq({s, b.empty()});
  auto g = b.build(b.rule("root", b.seq({e, s})));
  EXPECT_TRUE(ok(g, "y"));
  EXPECT_TRUE(ok(g, "aaay"));
  EXPECT_FALSE(ok(g, "aaazy"));
  EXPECT_FALSE(ok(g, "zy"));
  EXPECT_FALSE(g->empty_language());
}

}  // namespace
}  // namespace afm::guided
